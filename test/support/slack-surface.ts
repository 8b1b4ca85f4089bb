import type { Log, LogExtra } from '../../src/observability/logger';
import { decodeFeedbackValue, type FeedbackValue } from '../../src/slack/feedback-blocks';
import type { FakeSlackBlock } from './fake-slack-api';

/**
 * What tests of the agent surface read back (docs/architecture.md §2.6): the feedback buttons
 * under an answer, and what was logged. The requests Slack sends are built by
 * src/local/slack-event-builder.ts and src/local/slack-interaction-builder.ts.
 */

/** The values of the feedback buttons in a message's blocks (undefined when it has none). */
export function feedbackButtons(blocks: readonly FakeSlackBlock[] | undefined): Record<FeedbackValue, string> | undefined {
  for (const block of blocks ?? []) {
    if (block.type !== 'context_actions') continue;
    for (const element of (block.elements as Array<Record<string, unknown>> | undefined) ?? []) {
      if (element.type !== 'feedback_buttons') continue;
      const value = (button: unknown) => String((button as { value?: unknown } | undefined)?.value ?? '');
      return { positive: value(element.positive_button), negative: value(element.negative_button) };
    }
  }
  return undefined;
}

/** A question's button as Slack stores it (src/verification/questions/question-blocks.ts). */
export type QuestionButton = { action_id: string; value: string; text: { text: string } };

/** The buttons of a question's `actions` block, by label; undefined when the message has none. */
export function questionButtons(blocks: readonly FakeSlackBlock[] | undefined): Record<string, QuestionButton> | undefined {
  const actions = blocks?.find((block) => block.type === 'actions') as { elements?: QuestionButton[] } | undefined;
  if (!actions?.elements) return undefined;
  return Object.fromEntries(actions.elements.map((button) => [button.text.text, button]));
}

/** The request id a feedback button names. */
export function requestIdOfButton(value: string): string | undefined {
  return decodeFeedbackValue(value)?.requestId;
}

export type LogLine = { level: 'debug' | 'info' | 'warn' | 'error'; message: string; extra: Record<string, unknown> };

/** A Log that keeps its lines (nothing is written), for tests that assert what was logged. */
export function capturingLog(): Log & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (message: string, ...extra: LogExtra[]) =>
      void lines.push({ level, message, extra: Object.assign({}, ...extra) as Record<string, unknown> });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
