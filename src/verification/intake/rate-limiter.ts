import type { CounterStore } from '../stores/counter-store';
import { STATE_KEYS } from '../stores/state-keys';

export const RATE_WINDOW_MS = 60_000;
/** Counters outlive their window by one more, so a late write near the edge never finds a gone item. */
const COUNTER_TTL_SECONDS = (2 * RATE_WINDOW_MS) / 1000;

export type RateLimiterOptions = {
  counters: CounterStore;
  /** Events allowed per team and user per minute; 0 or undefined means no limit. */
  perMinute?: number;
};

export type RateLimitDecision = {
  allowed: boolean;
  /** Events counted in this window, this one included (0 when there is no limit). */
  count: number;
  /** Infinity when there is no limit. */
  limit: number;
  /** True for the first refused event of the window only, so the user is told once, not per message. */
  firstRefusalInWindow: boolean;
  /** Epoch ms at which the window ends and the count starts again. */
  windowEndsAt: number;
};

/**
 * A fixed-window limit per team and user. Every event is counted, refused ones included, so the
 * count also tells the first refusal apart from the later ones.
 */
export class RateLimiter {
  private readonly counters: CounterStore;
  private readonly perMinute: number;

  constructor(options: RateLimiterOptions) {
    const perMinute = options.perMinute ?? 0;
    if (!(Number.isInteger(perMinute) && perMinute >= 0)) throw new RangeError(`perMinute must be an integer ≥ 0, got ${perMinute}`);
    this.counters = options.counters;
    this.perMinute = perMinute;
  }

  /**
   * `now`: the event's time (epoch ms), which picks its window. `eventId`: what is counted — an
   * event checked again (a counter write resent after its answer was lost, a Slack retry after a
   * failed enqueue) is counted once and gets the decision it got.
   */
  async check(who: { teamId: string; userId: string }, now: number, eventId: string): Promise<RateLimitDecision> {
    const windowIndex = Math.floor(now / RATE_WINDOW_MS);
    const windowEndsAt = (windowIndex + 1) * RATE_WINDOW_MS;
    if (this.perMinute === 0) return { allowed: true, count: 0, limit: Infinity, firstRefusalInWindow: false, windowEndsAt };
    // The window index is in the key, so a new window is a new counter whatever the store's TTL does.
    // Counts past limit + 1 are all refused silently: the event ids need be kept only up to there.
    const count = await this.counters.increment(`${STATE_KEYS.rate.prefix}${who.teamId}#${who.userId}#${windowIndex}`, COUNTER_TTL_SECONDS, { token: eventId, upTo: this.perMinute + 1 });
    return { allowed: count <= this.perMinute, count, limit: this.perMinute, firstRefusalInWindow: count === this.perMinute + 1, windowEndsAt };
  }
}
