import { systemClock, type Clock } from '../../clock';
import type { CounterStore, CountOnce } from './counter-store';

export type MemoryCounterStoreOptions = { clock?: Clock };

const SWEEP_EVERY = 1_000;

/**
 * Counters in memory for local runs and tests, with the DynamoDB store's semantics: the TTL is set
 * when a counter is created and not extended, a counter past it starts again from one, and a token
 * counted already (among the first `upTo` counts) is not counted again.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, { count: number; tokens: string[]; expiresAt: number }>();
  private readonly clock: Clock;
  private writes = 0;

  constructor(options: MemoryCounterStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async increment(key: string, ttlSeconds: number, once: CountOnce): Promise<number> {
    const nowSeconds = Math.floor(this.clock.now() / 1000);
    const current = this.counters.get(key);
    if (current && current.expiresAt > nowSeconds) {
      const counted = current.tokens.indexOf(once.token);
      if (counted >= 0) return counted + 1;
      if (current.count < once.upTo) current.tokens.push(once.token);
      current.count += 1;
      return current.count;
    }
    this.counters.set(key, { count: 1, tokens: [once.token], expiresAt: nowSeconds + Math.ceil(ttlSeconds) });
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
