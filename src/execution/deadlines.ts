/**
 * Deadlines that are nearly always cancelled: the sync budget of a task that finishes within the
 * request, the timeout of a task that ends long before it. One queue per delay, and one timer per
 * queue for its earliest deadline, instead of a timer per task. Every deadline of a queue is the
 * same delay after it was added, so the order they were added in is deadline order: the queue is
 * a linked list, the earliest deadline always its first entry, and adding and cancelling one is
 * linking and unlinking it (no hashing, as a Set's insert and delete would do twice per task).
 *
 * Time is `performance.now()` (monotonic, as timers are), read at each call so a faked clock is
 * seen. The timer is unref'd: deadlines never keep a process alive.
 */
export type Deadline = { readonly at: number; readonly fire: () => void };

/** A deadline and its place in its queue; `queued` is false once it fired or was cancelled. */
type Entry = Deadline & { queued: boolean; older: Entry | undefined; newer: Entry | undefined };

export class DeadlineQueue {
  private oldest: Entry | undefined;
  private newest: Entry | undefined;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly delayMs: number) {}

  /** Calls `fire` `delayMs` from now unless `cancel` is called with what this returned first. */
  add(fire: () => void): Deadline {
    const entry: Entry = { at: performance.now() + this.delayMs, fire, queued: true, older: this.newest, newer: undefined };
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
    this.count += 1;
    if (!this.timer) this.arm(entry.at);
    return entry;
  }

  /** Drops a deadline that has not fired; one that fired or was cancelled already is left alone. */
  cancel(deadline: Deadline): void {
    // The timer stays: when it fires with nothing due it re-arms for the next deadline, or stops.
    const entry = deadline as Entry;
    if (entry.queued) this.unlink(entry);
  }

  get size(): number {
    return this.count;
  }

  private unlink(entry: Entry): void {
    entry.queued = false;
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = undefined;
    this.count -= 1;
  }

  private arm(at: number): void {
    this.timer = setTimeout(this.expire, Math.max(1, Math.ceil(at - performance.now())));
    this.timer.unref();
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    for (let entry = this.oldest; entry; entry = this.oldest) {
      // Timers may fire a little before their time by this clock: what is not due yet waits on.
      if (entry.at > performance.now()) return this.arm(entry.at);
      this.unlink(entry);
      try {
        entry.fire();
      } catch (error) {
        // One failing callback must not stop the rest; the timer path has nobody to throw to.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };
}
