import { StepSchema, withStep, type Step } from '../contract';
import type { Log } from '../observability/logger';
import type { TaskStore } from './stores/task-store';

export type StepWriterOptions = {
  taskId: string;
  store: TaskStore;
  log: Log;
  /** The lease owner of the run (TaskUpdate.owner): once another runner takes the task over, this one writes nothing. */
  owner?: string;
  /** Called after each write that landed: a streamed answer reading the task has a step to send. */
  onStored?: () => void;
};

/**
 * Keeps a running task's steps (docs/contract.md, "Steps") in its record: the executor's
 * `onStep` calls, merged by id, written whole. Writes go one after another and a write that is
 * due while one is in flight waits for it and then writes the latest list, so a burst of steps
 * costs two writes, not one per step. Each write applies only while the task is `working` (and
 * held by this run); a malformed step is logged and dropped, a failed write logged: steps never
 * cost the task its answer.
 */
export class StepWriter {
  private steps: Step[] = [];
  private planTitle: string | undefined;
  private chain: Promise<void> = Promise.resolve();
  private dirty = false;
  private stopped = false;

  constructor(private readonly options: StepWriterOptions) {}

  /** The executor's `onStep`. */
  readonly add = (step: Step, planTitle?: string): void => {
    if (this.stopped) return;
    const parsed = StepSchema.safeParse(step);
    if (!parsed.success) {
      this.options.log.warn('executor gave a malformed step: dropped', { issues: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') });
      return;
    }
    this.steps = withStep(this.steps, parsed.data);
    if (planTitle) this.planTitle = planTitle;
    this.schedule();
  };

  /** The steps so far, for the task's last answer. */
  get current(): { steps?: Step[]; plan_title?: string } {
    return { ...(this.steps.length ? { steps: this.steps } : {}), ...(this.planTitle ? { plan_title: this.planTitle } : {}) };
  }

  /** Resolves once every step given so far is written (or its write failed). */
  async flush(): Promise<void> {
    await this.chain;
  }

  stop(): void {
    this.stopped = true;
  }

  private schedule(): void {
    if (this.dirty) return;
    this.dirty = true;
    this.chain = this.chain.then(() => this.write());
  }

  private async write(): Promise<void> {
    this.dirty = false;
    if (this.stopped) return;
    const { taskId, store, owner } = this.options;
    try {
      const written = await store.transition(taskId, ['working'], { status: 'working', steps: this.steps, ...(this.planTitle ? { plan_title: this.planTitle } : {}), ...(owner ? { owner } : {}) });
      if (written) this.options.onStored?.();
    } catch (error) {
      this.options.log.warn('could not store the task\'s steps', { error: error as Error });
    }
  }
}
