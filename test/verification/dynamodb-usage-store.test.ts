import { DynamoDb } from '../../src/aws/dynamodb';
import { DynamoDbUsageStore } from '../../src/verification/stores/dynamodb-usage-store';
import { MemoryUsageStore } from '../../src/verification/stores/memory-usage-store';
import type { UsageStore } from '../../src/verification/stores/usage-store';
import { useStateTable } from '../support/dynalite';

/**
 * The usage counters and their budget reservations (docs/architecture.md §2.7), against dynalite
 * (a real DynamoDB API) and in memory: the same rules, and under 50 concurrent tasks of one user
 * the limit is overshot by at most one task.
 */
const db = useStateTable();
const DAY = '2026-11-25';
const TTL = 400 * 24 * 60 * 60;
let prefix = 0;

/** dynalite is slower than DynamoDB under 50 concurrent writers on a loaded machine: longer per-call bounds than QUICK_CALL's 2 s. */
const patient = () => new DynamoDb({ endpoint: db().endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, bounds: { connectionTimeoutMs: 5_000, requestTimeoutMs: 20_000, maxAttempts: 3 } });

const stores: Array<[string, () => UsageStore]> = [
  ['DynamoDB (dynalite)', () => new DynamoDbUsageStore({ dynamodb: patient(), tableName: 'state', keyPrefix: `t${(prefix += 1)}#` })],
  ['memory', () => new MemoryUsageStore()],
];

describe.each(stores)('usage store: %s', (_name, make) => {
  it('adds usage atomically per counter and reads the day back', async () => {
    const store = make();
    const usage = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 2, model: 'm' };
    await Promise.all(Array.from({ length: 20 }, () => store.add(DAY, [{ scope: 'user', id: 'T1/U1', delta: { usage, tasks: 1 } }, { scope: 'agent', id: 'default', delta: { usage, tasks: 1 } }], TTL)));
    await store.add(DAY, [{ scope: 'user', id: 'T1/U1', delta: { refused: 1 } }], TTL);
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
    const first = await store.reserve(key, 100, TTL, 30);
    expect(first).toEqual({ admitted: true, estimate: 30 });
    await store.add(DAY, [{ scope: 'user', id: 'T1/U2', delta: { usage: { input_tokens: 20, output_tokens: 5 }, tasks: 1, release: 30 } }], TTL);
    // 25 used, 0 reserved: room for two more ceilings side by side, not three.
    expect(await store.reserve(key, 100, TTL, 30)).toEqual({ admitted: true, estimate: 30 });
    expect(await store.reserve(key, 100, TTL, 30)).toEqual({ admitted: true, estimate: 30 });
    expect(await store.reserve(key, 100, TTL, 30)).toEqual({ admitted: false, over: false, used: 25 });
    await store.add(DAY, [{ scope: 'user', id: 'T1/U2', delta: { usage: { input_tokens: 30, output_tokens: 0 }, tasks: 1, release: 30 } }], TTL);
    await store.add(DAY, [{ scope: 'user', id: 'T1/U2', delta: { usage: { input_tokens: 40, output_tokens: 0 }, tasks: 1, release: 30 } }], TTL);
    // 95 used: no room for a ceiling, but nothing is in flight: one task alone.
    expect(await store.reserve(key, 100, TTL, 30)).toEqual({ admitted: true, estimate: 30 });
    // One in flight near the limit: the next waits, it is not refused.
    expect(await store.reserve(key, 100, TTL, 30)).toEqual({ admitted: false, over: false, used: 95 });
    await store.add(DAY, [{ scope: 'user', id: 'T1/U2', delta: { usage: { input_tokens: 29, output_tokens: 1 }, tasks: 1, release: 30 } }], TTL);
    expect(await store.reserve(key, 100, TTL, 30)).toEqual({ admitted: false, over: true, used: 125 });
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
        const reservation = await store.reserve(key, LIMIT, TTL, CEILING);
        if (reservation.admitted) {
          // The agent answers (another task's write may land meanwhile), then the task settles.
          await new Promise((resolve) => setImmediate(resolve));
          await store.add(DAY, [{ scope: 'user', id: key.id, delta: { usage: { input_tokens: TASK - 10, output_tokens: 10 }, tasks: 1, release: reservation.estimate } }], TTL);
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
