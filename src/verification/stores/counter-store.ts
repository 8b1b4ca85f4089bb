/**
 * What one increment counts. A write whose answer was lost is sent again (the AWS client retries),
 * and DynamoDB's `ADD` is not idempotent: so the counter keeps the tokens it counted, and a token
 * it has already counted is not counted again.
 */
export type CountOnce = {
  /** What is counted, e.g. the Slack event's id. */
  token: string;
  /**
   * Tokens are kept for the first `upTo` counts only, so a flood cannot grow the counter without
   * bound; past it, a resent write may count twice. A rate limit passes its limit + 1: past that
   * every event is refused, and refused silently, however it is counted.
   */
  upTo: number;
};

/** Atomic counters with a TTL, for fixed-window rate limits. DynamoDB ADD when deployed; memory locally. */
export interface CounterStore {
  /**
   * Adds one to `key` (created with the TTL if new) and returns the new value — or, for a token
   * `key` has counted already, the value it got then, without adding.
   */
  increment(key: string, ttlSeconds: number, once: CountOnce): Promise<number>;
}
