import { DynamoDb } from '../../src/aws/dynamodb';
import { DynamoDbUsageStore } from '../../src/verification/stores/dynamodb-usage-store';
import { MemoryUsageStore } from '../../src/verification/stores/memory-usage-store';
import type { Usage } from '../../src/contract';
import type { UsageKey, UsageStore } from '../../src/verification/stores/usage-store';
import { useStateTable } from '../support/dynalite';
import { manualClock } from '../support/manual-clock';

/**
 * The usage counters and their budget reservations (docs/architecture.md §2.7), against dynalite
 * (a real DynamoDB API) and in memory: the same rules, every write keyed by its task, leases that
 * let a dead task's reservation go, and under 50 concurrent tasks of one user the limit is
 * overshot by at most one task.
 */
const db = useStateTable();
const DAY = '2026-11-25';
const TTL = 400 * 24 * 60 * 60;
let prefix = 0;

/** dynalite is slower than DynamoDB under 50 concurrent writers on a loaded machine: longer per-call bounds than QUICK_CALL's 2 s. */
const patient = () => new DynamoDb({ endpoint: db().endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, bounds: { connectionTimeoutMs: 5_000, requestTimeoutMs: 20_000, maxAttempts: 3 } });

const clock = manualClock(Date.UTC(2026, 10, 25, 12));
const LEASE_MS = 45 * 60 * 1000;
const stores: Array<[string, () => UsageStore]> = [
  ['DynamoDB (dynalite)', () => new DynamoDbUsageStore({ dynamodb: patient(), tableName: 'state', keyPrefix: `t${(prefix += 1)}#`, clock })],
  ['memory', () => new MemoryUsageStore(clock)],
];

let task = 0;
/** A new task's hold of `estimate` tokens, its lease from now. */
const hold = (estimate: number, request_id = `req-${(task += 1)}`) => ({ request_id, estimate, leaseUntil: clock.now() + LEASE_MS });
/** Settles a task on one counter: its usage counted, its hold given back, its mark forgotten. */
async function settle(store: UsageStore, key: UsageKey, requestId: string, usage: Usage): Promise<void> {
  await store.charge(key.day, requestId, [{ scope: key.scope, id: key.id, delta: { usage, tasks: 1 } }], TTL);
  await store.forget(key.day, requestId, [key]);
}

describe.each(stores)('usage store: %s', (_name, make) => {
  it('adds usage atomically per counter and reads the day back', async () => {
    const store = make();
    const usage = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 2, model: 'm' };
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.charge(DAY, `add-${i}`, [{ scope: 'user', id: 'T1/U1', delta: { usage, tasks: 1 } }, { scope: 'agent', id: 'default', delta: { usage, tasks: 1 } }], TTL)));
    await store.charge(DAY, 'refused-1', [{ scope: 'user', id: 'T1/U1', delta: { refused: 1 } }], TTL);
    // Charged again (a redelivery, or a write sent again): counted once.
    await store.charge(DAY, 'add-3', [{ scope: 'user', id: 'T1/U1', delta: { usage, tasks: 1 } }], TTL);
    const rows = await store.day(DAY);
    expect(rows.sort((a, b) => a.scope.localeCompare(b.scope))).toEqual([
      { day: DAY, scope: 'agent', id: 'default', input_tokens: 200, output_tokens: 100, cache_read_tokens: 40, cache_write_tokens: 0, tokens: 340, tasks: 20, refused: 0 },
      { day: DAY, scope: 'user', id: 'T1/U1', input_tokens: 200, output_tokens: 100, cache_read_tokens: 40, cache_write_tokens: 0, tokens: 340, tasks: 20, refused: 1 },
    ]);
    expect(await store.day('2026-11-24')).toEqual([]);
  });

  it('refuses a reservation once the limit is used, and admits one alone just under it', async () => {
    const store = make();
    const key = { day: DAY, scope: 'user' as const, id: 'T1/U2' };
    // The per-task ceiling is what each task holds.
    const first = hold(30);
    expect(await store.reserve(key, 100, TTL, first)).toEqual({ admitted: true, estimate: 30 });
    await settle(store, key, first.request_id, { input_tokens: 20, output_tokens: 5 });
    // 25 used, 0 reserved: room for two more ceilings side by side, not three.
    const [second, third] = [hold(30), hold(30)];
    expect(await store.reserve(key, 100, TTL, second)).toEqual({ admitted: true, estimate: 30 });
    expect(await store.reserve(key, 100, TTL, third)).toEqual({ admitted: true, estimate: 30 });
    // The same task again (a redelivery): admitted on the hold it has, not a second one.
    expect(await store.reserve(key, 100, TTL, second)).toEqual({ admitted: true, estimate: 30 });
    expect(await store.reserve(key, 100, TTL, hold(30))).toEqual({ admitted: false, over: false, used: 25 });
    await settle(store, key, second.request_id, { input_tokens: 30, output_tokens: 0 });
    await settle(store, key, third.request_id, { input_tokens: 40, output_tokens: 0 });
    // 95 used: no room for a ceiling, but nothing is in flight: one task alone.
    const fourth = hold(30);
    expect(await store.reserve(key, 100, TTL, fourth)).toEqual({ admitted: true, estimate: 30 });
    // One in flight near the limit: the next waits, it is not refused.
    expect(await store.reserve(key, 100, TTL, hold(30))).toEqual({ admitted: false, over: false, used: 95 });
    await settle(store, key, fourth.request_id, { input_tokens: 29, output_tokens: 1 });
    expect(await store.reserve(key, 100, TTL, hold(30))).toEqual({ admitted: false, over: true, used: 125 });
  });

  it('lets a dead task\'s reservation go when its lease is over: the next task fits', async () => {
    const store = make();
    const key = { day: DAY, scope: 'user' as const, id: 'T1/U-killed' };
    // A limit below the ceiling: one task at a time.
    const killed = hold(300);
    expect(await store.reserve(key, 100, TTL, killed)).toEqual({ admitted: true, estimate: 300 });
    // Its function is killed: it never settles. Within the lease the next one waits…
    expect(await store.reserve(key, 100, TTL, hold(300))).toEqual({ admitted: false, over: false, used: 0 });
    clock.advance(LEASE_MS + 1000);
    // …past it, the dead task counts no more.
    const next = hold(300);
    expect(await store.reserve(key, 100, TTL, next)).toEqual({ admitted: true, estimate: 300 });
    await settle(store, key, next.request_id, { input_tokens: 40, output_tokens: 0 });
    expect(await store.reserve(key, 100, TTL, hold(300))).toMatchObject({ admitted: true });
  });

  it('charges a settle that comes after its lease once, and gives nothing back twice', async () => {
    const store = make();
    const key = { day: DAY, scope: 'user' as const, id: 'T1/U-late' };
    const late = hold(30);
    await store.reserve(key, 100, TTL, late);
    clock.advance(LEASE_MS + 1000);
    // Another task lets the late one's hold go as it reserves.
    const other = hold(30);
    expect(await store.reserve(key, 100, TTL, other)).toMatchObject({ admitted: true });
    // The late task settles now: its usage counts, nothing is given back (its hold was let go already).
    // Charged twice before its mark is forgotten (a redelivery; the ledger's record keeps later ones out, count-once.ts).
    await store.charge(DAY, late.request_id, [{ scope: key.scope, id: key.id, delta: { usage: { input_tokens: 10, output_tokens: 0 }, tasks: 1 } }], TTL);
    await settle(store, key, late.request_id, { input_tokens: 10, output_tokens: 0 });
    // 10 used and one 30 held: room for two more 30s, not three. Given back twice, there would be room for a third.
    expect(await store.reserve(key, 100, TTL, hold(30))).toMatchObject({ admitted: true });
    expect(await store.reserve(key, 100, TTL, hold(30))).toMatchObject({ admitted: true });
    expect(await store.reserve(key, 100, TTL, hold(30))).toEqual({ admitted: false, over: false, used: 10 });
    const [row] = (await store.day(DAY)).filter((candidate) => candidate.id === key.id);
    expect(row).toMatchObject({ tokens: 10, tasks: 1 });
  });

  it.each([
    [1_000, 37, 50],
    [60, 25, 20],
  ])('holds under bursts at the start of a day (limit %i, tasks of %i tokens, %i at once): at most one task\'s ceiling over the limit', async (LIMIT, TASK, BURST) => {
    const store = make();
    const key = { day: DAY, scope: 'user' as const, id: `T1/U3-${LIMIT}` };
    // Tasks as large as the ceiling: the worst a burst can do.
    const CEILING = TASK;
    let answered = 0;
    let refused = 0;
    const task = async (): Promise<void> => {
      for (;;) {
        const mine = hold(CEILING);
        const reservation = await store.reserve(key, LIMIT, TTL, mine);
        if (reservation.admitted) {
          // The agent answers (another task's write may land meanwhile), then the task settles.
          await new Promise((resolve) => setImmediate(resolve));
          await settle(store, key, mine.request_id, { input_tokens: TASK - 10, output_tokens: 10 });
          answered += 1;
          return;
        }
        if (reservation.over) {
          refused += 1;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    };
    await Promise.all(Array.from({ length: BURST }, task));
    const [row] = await store.day(DAY).then((rows) => rows.filter((candidate) => candidate.id === key.id));
    expect(answered + refused).toBe(BURST);
    expect(row!.tokens).toBe(answered * TASK);
    expect(row!.tokens).toBeGreaterThanOrEqual(LIMIT);
    expect(row!.tokens).toBeLessThan(LIMIT + CEILING);
    expect(refused).toBeGreaterThan(0);
  }, 60_000);
});
