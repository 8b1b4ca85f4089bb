/**
 * Deadlines that are nearly always cancelled: the sync budget of a task that finishes within the
 * request, the timeout of a task that ends long before it. One queue per delay, and one timer per
 * queue for its earliest deadline, instead of a timer per task: adding and cancelling a deadline
 * is a Set insert and delete. Every deadline of a queue is the same delay after it was added, so
 * the Set's insertion order is deadline order and the earliest is always the first one.
 *
 * Time is `performance.now()` (monotonic, as timers are), read at each call so a faked clock is
 * seen. The timer is unref'd: deadlines never keep a process alive.
 */
export type Deadline = { readonly at: number; readonly fire: () => void };

export class DeadlineQueue {
  private readonly pending = new Set<Deadline>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly delayMs: number) {}

  /** Calls `fire` `delayMs` from now unless `cancel` is called with what this returned first. */
  add(fire: () => void): Deadline {
    const deadline: Deadline = { at: performance.now() + this.delayMs, fire };
    this.pending.add(deadline);
    if (!this.timer) this.arm(deadline.at);
    return deadline;
  }

  cancel(deadline: Deadline): void {
    // The timer stays: when it fires with nothing due it re-arms for the next deadline, or stops.
    this.pending.delete(deadline);
  }

  get size(): number {
    return this.pending.size;
  }

  private arm(at: number): void {
    this.timer = setTimeout(this.expire, Math.max(1, Math.ceil(at - performance.now())));
    this.timer.unref();
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    for (const deadline of this.pending) {
      // Timers may fire a little before their time by this clock: what is not due yet waits on.
      if (deadline.at > performance.now()) return this.arm(deadline.at);
      this.pending.delete(deadline);
      try {
        deadline.fire();
      } catch (error) {
        // One failing callback must not stop the rest; the timer path has nobody to throw to.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };
}
