import { MAX_STEPS, withStep, type Step } from '../contract';
import type { A2aState } from './a2a-dialects';
import type { StepsShown } from './outcome';

/**
 * An A2A agent's work as steps (docs/contract.md, "Steps"), for src/protocols/a2a.ts's streamed
 * reads. A2A has no steps of its own; what it does have says the same:
 * - a status update of a working task with a message (`TaskStatusUpdateEvent`, "Searching the
 *   wiki…") is a step in progress — the one before it is then complete;
 * - an artifact with a name ("report.md") is a step, complete once the artifact is.
 * When the task ends, the steps end with it: complete, or — a task that failed — the step still
 * in progress is an error.
 */

/** A step's title is at most this long (the contract's limit): a long status message is cut. */
const MAX_TITLE = 256;

export class A2aSteps {
  private steps: Step[] = [];
  private statuses = 0;
  private changed = false;

  /** A status update: its message, while the task works, is the step now in progress. */
  status(state: A2aState, text: string): void {
    const title = titleOf(text);
    if (state !== 'working' || !title) return;
    const current = this.steps.findLast((step) => step.id.startsWith('status-'));
    if (current?.title === title && current.status === 'in_progress') return;
    if (current?.status === 'in_progress') this.put({ ...current, status: 'complete' });
    this.statuses += 1;
    this.put({ id: `status-${this.statuses}`, title, status: 'in_progress' });
  }

  /** An artifact update: a named artifact is a step, in progress until its last chunk. */
  artifact(artifactId: string, name: string | undefined, lastChunk: boolean): void {
    const title = titleOf(name ?? '');
    if (!title) return;
    const id = `artifact-${artifactId || title}`.slice(0, 128);
    const status = lastChunk ? 'complete' : 'in_progress';
    const known = this.steps.find((step) => step.id === id);
    if (known?.status === status && known.title === title) return;
    this.put({ id, title, status });
  }

  /** The task is over: every open step ends — as an error, for the one in progress when it failed. */
  end(state: A2aState): void {
    for (const step of this.steps) {
      if (step.status === 'complete' || step.status === 'error') continue;
      this.put({ ...step, status: state === 'completed' || step.status === 'pending' ? 'complete' : 'error' });
    }
  }

  /** The steps so far, whole; undefined when there are none. */
  get shown(): StepsShown | undefined {
    return this.steps.length ? { steps: this.steps.map((step) => ({ ...step })) } : undefined;
  }

  /** Whether a step changed since the last call. */
  takeChange(): boolean {
    const changed = this.changed;
    this.changed = false;
    return changed;
  }

  private put(step: Step): void {
    this.steps = withStep(this.steps, step).slice(-MAX_STEPS);
    this.changed = true;
  }
}

/** A step's title from a message: its first line, trimmed, at most MAX_TITLE characters. */
function titleOf(text: string): string {
  const line = text.split('\n').find((part) => part.trim())?.trim() ?? '';
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
}
