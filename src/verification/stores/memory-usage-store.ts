import { systemClock, type Clock } from '../../clock';
import { emptyTotals, tokensOf, type Reservation, type UsageDelta, type UsageKey, type UsageRow, type UsageScope, type UsageStore } from './usage-store';

type Counter = UsageRow & { reserved: number; inflight: number; expiresAt: number };

/** Counters kept at most; the oldest goes first when full. */
const MAX_COUNTERS = 50_000;

/**
 * Usage counters in memory, for the local stack and tests, with the DynamoDB store's rules. Each
 * method runs to its end without awaiting, so a reservation is as atomic as DynamoDB's
 * conditional update.
 */
export class MemoryUsageStore implements UsageStore {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly clock: Clock = systemClock) {}

  async reserve(key: UsageKey, limit: number, ttlSeconds: number, estimate: number): Promise<Reservation> {
    const counter = this.counter(key, ttlSeconds);
    const room = counter.tokens + counter.reserved + estimate <= limit;
    const alone = counter.inflight <= 0 && counter.tokens < limit;
    if (!room && !alone) return { admitted: false, over: counter.tokens >= limit, used: counter.tokens };
    counter.reserved += estimate;
    counter.inflight += 1;
    return { admitted: true, estimate };
  }

  async add(day: string, counters: ReadonlyArray<{ scope: UsageScope; id: string; delta: UsageDelta }>, ttlSeconds: number): Promise<void> {
    for (const { scope, id, delta } of counters) this.addOne({ day, scope, id }, delta, ttlSeconds);
  }

  private addOne(key: UsageKey, delta: UsageDelta, ttlSeconds: number): void {
    const counter = this.counter(key, ttlSeconds);
    const usage = delta.usage;
    const tokens = tokensOf(usage);
    counter.input_tokens += usage?.input_tokens ?? 0;
    counter.output_tokens += usage?.output_tokens ?? 0;
    counter.cache_read_tokens += usage?.cache_read_tokens ?? 0;
    counter.cache_write_tokens += usage?.cache_write_tokens ?? 0;
    counter.tokens += tokens;
    counter.tasks += delta.tasks ?? 0;
    counter.refused += delta.refused ?? 0;
    if (delta.release !== undefined) {
      counter.reserved -= delta.release;
      counter.inflight -= 1;
    }
  }

  async day(day: string): Promise<UsageRow[]> {
    const now = this.clock.now();
    return [...this.counters.values()]
      .filter((counter) => counter.day === day && counter.expiresAt > now)
      .map(({ day: d, scope, id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tokens, tasks, refused }) => ({ day: d, scope, id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tokens, tasks, refused }));
  }

  private counter(key: UsageKey, ttlSeconds: number): Counter {
    const name = `${key.day}#${key.scope}#${key.id}`;
    const now = this.clock.now();
    const current = this.counters.get(name);
    if (current && current.expiresAt > now) return current;
    if (this.counters.size >= MAX_COUNTERS) this.counters.delete(this.counters.keys().next().value!);
    const created: Counter = { ...key, ...emptyTotals(), reserved: 0, inflight: 0, expiresAt: now + ttlSeconds * 1000 };
    this.counters.set(name, created);
    return created;
  }
}
