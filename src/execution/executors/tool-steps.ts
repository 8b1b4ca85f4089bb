import type { ContentBlock, ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import type { Step } from '../../contract';

/**
 * Bedrock tool use as steps (docs/contract.md, "Steps"): each `toolUse` block the model opens is
 * a step titled with the tool's name, in progress until its block closes, then complete. Reads
 * ConverseStream events one by one (`take`), or a whole Converse answer (`stepsOfContent`).
 */
export class ToolSteps {
  /** Open tool-use blocks by content block index: the step each one is. */
  private readonly open = new Map<number, Step>();

  constructor(private readonly onStep: (step: Step) => void) {}

  take(event: ConverseStreamOutput): void {
    const toolUse = event.contentBlockStart?.start?.toolUse;
    if (toolUse?.toolUseId) {
      const step: Step = { id: toolUse.toolUseId, title: titleOf(toolUse.name), status: 'in_progress' };
      this.open.set(event.contentBlockStart?.contentBlockIndex ?? 0, step);
      this.onStep(step);
    }
    const stopped = event.contentBlockStop;
    if (stopped) {
      const index = stopped.contentBlockIndex ?? 0;
      const step = this.open.get(index);
      if (step) {
        this.open.delete(index);
        this.onStep({ ...step, status: 'complete' });
      }
    }
  }
}

/** The tool uses of a whole Converse answer, each a complete step. */
export function stepsOfContent(content: ContentBlock[] | undefined): Step[] {
  return (content ?? []).flatMap((block) => ('toolUse' in block && block.toolUse?.toolUseId ? [{ id: block.toolUse.toolUseId, title: titleOf(block.toolUse.name), status: 'complete' as const }] : []));
}

function titleOf(name: string | undefined): string {
  return `Using ${name || 'a tool'}`.slice(0, 256);
}
