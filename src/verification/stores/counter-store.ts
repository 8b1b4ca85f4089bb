/** Atomic counters with a TTL, for fixed-window rate limits. DynamoDB ADD when deployed; memory locally. */
export interface CounterStore {
  /** Adds one to `key` (created with the TTL if new) and returns the new value. */
  increment(key: string, ttlSeconds: number): Promise<number>;
}
