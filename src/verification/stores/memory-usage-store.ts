import { systemClock, type Clock } from '../../clock';
import { emptyTotals, tokensOf, type Charge, type Hold, type Reservation, type UsageDelta, type UsageKey, type UsageRow, type UsageScope, type UsageStore } from './usage-store';

/** A task's hold on a counter: held until its lease ends, then lapsed (it counts no more, and is not given back twice). */
type MemoryHold = { estimate: number; leaseUntil: number; lapsed: boolean };
type Counter = UsageRow & { reserved: number; inflight: number; expiresAt: number; holds: Map<string, MemoryHold>; charged: Set<string> };

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

  async reserve(key: UsageKey, limit: number, ttlSeconds: number, hold: Hold): Promise<Reservation> {
    const counter = this.counter(key, ttlSeconds);
    const held = counter.holds.get(hold.request_id);
    if (held && !held.lapsed) return { admitted: true, estimate: held.estimate };
    this.lapse(counter);
    const room = counter.tokens + counter.reserved + hold.estimate <= limit;
    const alone = counter.inflight <= 0 && counter.tokens < limit;
    if (!room && !alone) return { admitted: false, over: counter.tokens >= limit, used: counter.tokens };
    counter.reserved += hold.estimate;
    counter.inflight += 1;
    counter.holds.set(hold.request_id, { estimate: hold.estimate, leaseUntil: hold.leaseUntil, lapsed: false });
    return { admitted: true, estimate: hold.estimate };
  }

  async release(key: UsageKey, requestId: string, ttlSeconds: number): Promise<void> {
    const counter = this.counter(key, ttlSeconds);
    const held = counter.holds.get(requestId);
    if (!held || held.lapsed) return;
    this.giveBack(counter, held);
    counter.holds.delete(requestId);
  }

  async charge(day: string, requestId: string, charges: readonly Charge[], ttlSeconds: number): Promise<void> {
    for (const { scope, id, delta } of charges) {
      const counter = this.counter({ day, scope, id }, ttlSeconds);
      if (counter.charged.has(requestId)) continue;
      const held = counter.holds.get(requestId);
      if (held && !held.lapsed) this.giveBack(counter, held);
      counter.holds.delete(requestId);
      counter.charged.add(requestId);
      this.addOne(counter, delta);
    }
  }

  async forget(day: string, requestId: string, counters: ReadonlyArray<{ scope: UsageScope; id: string }>): Promise<void> {
    for (const { scope, id } of counters) this.counters.get(`${day}#${scope}#${id}`)?.charged.delete(requestId);
  }

  async day(day: string): Promise<UsageRow[]> {
    const now = this.clock.now();
    return [...this.counters.values()]
      .filter((counter) => counter.day === day && counter.expiresAt > now)
      .map(({ day: d, scope, id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tokens, tasks, refused }) => ({ day: d, scope, id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tokens, tasks, refused }));
  }

  /** Lets go of every hold whose lease is over: a task that died no longer counts against the limit. */
  private lapse(counter: Counter): void {
    const now = this.clock.now();
    for (const held of counter.holds.values()) {
      if (held.lapsed || held.leaseUntil > now) continue;
      this.giveBack(counter, held);
      held.lapsed = true;
    }
  }

  private giveBack(counter: Counter, held: MemoryHold): void {
    counter.reserved -= held.estimate;
    counter.inflight -= 1;
  }

  private addOne(counter: Counter, delta: UsageDelta): void {
    const usage = delta.usage;
    counter.input_tokens += usage?.input_tokens ?? 0;
    counter.output_tokens += usage?.output_tokens ?? 0;
    counter.cache_read_tokens += usage?.cache_read_tokens ?? 0;
    counter.cache_write_tokens += usage?.cache_write_tokens ?? 0;
    counter.tokens += tokensOf(usage);
    counter.tasks += delta.tasks ?? 0;
    counter.refused += delta.refused ?? 0;
  }

  private counter(key: UsageKey, ttlSeconds: number): Counter {
    const name = `${key.day}#${key.scope}#${key.id}`;
    const now = this.clock.now();
    const current = this.counters.get(name);
    if (current && current.expiresAt > now) return current;
    if (this.counters.size >= MAX_COUNTERS) this.counters.delete(this.counters.keys().next().value!);
    const created: Counter = { ...key, ...emptyTotals(), reserved: 0, inflight: 0, expiresAt: now + ttlSeconds * 1000, holds: new Map(), charged: new Set() };
    this.counters.set(name, created);
    return created;
  }
}
