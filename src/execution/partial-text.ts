import { systemClock, type Clock } from '../clock';
import type { Log } from '../observability/logger';
import { UNLIMITED_PARTIAL_TEXT, type PartialText, type TaskStore } from './stores/task-store';

export type PartialTextWriterOptions = {
  taskId: string;
  store: TaskStore;
  log: Log;
  clock?: Clock;
  /** The lease owner of the run that streams (TaskUpdate.owner): once another runner takes the task over, this one writes nothing. */
  owner?: string;
  /** Called after each write that landed: a streamed answer reading the task's text has more to read (task-stream.ts). */
  onStored?: () => void;
};

/**
 * Collects the text a streaming task produces (its executor's `onText` pieces) and writes it to
 * the task's record, as the store's PartialTextPolicy allows: at most one write per
 * `writeIntervalMs` while the text grows, one more whenever someone needs the store to hold all
 * there is (`flush`), and no more than `maxBytes` of text — past that only the count is written.
 *
 * Writes go one after another, each applies only while the task is `working` and, given an
 * `owner`, still held by it (so a write that lands late never touches a settled or cancelled
 * task, nor one another runner took over), and a failed write is logged, not
 * thrown: a task whose partial text could not be stored still finishes with its whole answer.
 */
export class PartialTextWriter {
  /** Everything produced so far. */
  private produced = '';
  /** How much of `produced` may be kept (a piece boundary): all of it until the byte cap is reached. */
  private keptLength = 0;
  private keptBytes = 0;
  private capped = false;
  /** What the store holds, as far as this writer knows. */
  private stored: PartialText = { text: '', length: 0 };
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly firstTextListeners: Array<() => void> = [];
  private readonly clock: Clock;
  private readonly writeIntervalMs: number;
  private readonly maxBytes: number;

  constructor(private readonly options: PartialTextWriterOptions) {
    this.clock = options.clock ?? systemClock;
    ({ writeIntervalMs: this.writeIntervalMs, maxBytes: this.maxBytes } = options.store.partialText ?? UNLIMITED_PARTIAL_TEXT);
  }

  /** The executor's `onText`. */
  readonly append = (delta: string): void => {
    if (this.stopped || typeof delta !== 'string' || delta === '') return;
    const first = this.produced === '';
    this.produced += delta;
    if (!this.capped) {
      const bytes = Buffer.byteLength(delta, 'utf8');
      if (this.keptBytes + bytes <= this.maxBytes) {
        this.keptBytes += bytes;
        this.keptLength = this.produced.length;
      } else {
        this.capped = true;
        this.options.log.warn('partial text reached the store limit: polls get no more of it until the result', { max_bytes: this.maxBytes, kept_chars: this.keptLength });
      }
    }
    if (first) for (const listener of this.firstTextListeners.splice(0)) listener();
    this.schedule();
  };

  /** Calls `listener` once, when the first text arrives. */
  onFirstText(listener: () => void): void {
    if (this.produced !== '') listener();
    else this.firstTextListeners.push(listener);
  }

  /** Writes whatever the store does not hold yet, now; resolves with what it then holds. */
  async flush(): Promise<PartialText> {
    this.clearTimer();
    await this.enqueue(true);
    return this.stored;
  }

  /** No more writes (the task failed, was cancelled or handed off); one under way may still land. */
  stop(): void {
    this.stopped = true;
    this.clearTimer();
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    const wait = this.lastWriteAt + this.writeIntervalMs - this.clock.now();
    if (wait <= 0) {
      void this.enqueue(false);
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.enqueue(false);
    }, wait);
    this.timer.unref();
  }

  private enqueue(force: boolean): Promise<void> {
    this.chain = this.chain.then(() => this.write(force));
    return this.chain;
  }

  private async write(force: boolean): Promise<void> {
    if (this.stopped) return;
    const textChanged = this.keptLength !== this.stored.text.length;
    if (!textChanged && this.produced.length === this.stored.length) return;
    if (!force && this.clock.now() - this.lastWriteAt < this.writeIntervalMs) {
      this.schedule();
      return;
    }
    this.lastWriteAt = this.clock.now();
    const snapshot: PartialText = { text: this.produced.slice(0, this.keptLength), length: this.produced.length };
    try {
      const written = await this.options.store.transition(this.options.taskId, ['working'], {
        status: 'working',
        partial: textChanged ? snapshot : { length: snapshot.length },
        owner: this.options.owner,
      });
      if (written) {
        this.stored = snapshot;
        this.options.onStored?.();
      }
      // No longer working (settled, cancelled) or no longer this run's: nobody will read this text again.
      else this.stop();
    } catch (error) {
      this.options.log.warn('could not write the partial text of a streaming task: the next write carries it', { error: error as Error });
    }
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
