import { systemClock, type Clock } from '../../clock';
import type { CounterStore } from './counter-store';

export type MemoryCounterStoreOptions = { clock?: Clock };

const SWEEP_EVERY = 1_000;

/**
 * Counters in memory for local runs and tests, with the DynamoDB store's semantics: the TTL is set
 * when a counter is created and not extended, and a counter past it starts again from one.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, { count: number; expiresAt: number }>();
  private readonly clock: Clock;
  private writes = 0;

  constructor(options: MemoryCounterStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async increment(key: string, ttlSeconds: number): Promise<number> {
    const nowSeconds = Math.floor(this.clock.now() / 1000);
    const current = this.counters.get(key);
    if (current && current.expiresAt > nowSeconds) {
      current.count += 1;
      return current.count;
    }
    this.counters.set(key, { count: 1, expiresAt: nowSeconds + Math.ceil(ttlSeconds) });
    if ((this.writes += 1) % SWEEP_EVERY === 0) this.sweep(nowSeconds);
    return 1;
  }

  get size(): number {
    return this.counters.size;
  }

  private sweep(nowSeconds: number): void {
    for (const [key, { expiresAt }] of this.counters) if (expiresAt <= nowSeconds) this.counters.delete(key);
  }
}
