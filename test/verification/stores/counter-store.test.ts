import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { CounterStore } from '../../../src/verification/stores/counter-store';
import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { DynamoDbCounterStore } from '../../../src/verification/stores/dynamodb-counter-store';
import { MemoryCounterStore } from '../../../src/verification/stores/memory-counter-store';
import { DynamoDb } from '../../../src/aws/dynamodb';
import { keyOf, startDynamoDbFaultProxy, type DynamoDbFaultProxy } from '../../support/dynamodb-fault-proxy';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

// The same cases run against memory and against DynamoDB (dynalite), so local runs behave as deployed.
const stateTable = useStateTable();
const clock = manualClock();
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** Each increment is its own event unless a test says otherwise; tokens are remembered for the first 100 counts. */
let events = 0;
const once = (token = `Ev${(events += 1)}`, upTo = 100) => ({ token, upTo });

// `peer` is a second handle on the same state (see claim-store.test.ts).
const dynamo = () => new DynamoDbCounterStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'count#', clock });
const stores: Array<[string, () => CounterStore, (store: CounterStore) => CounterStore]> = [
  ['DynamoDbCounterStore (dynalite)', dynamo, () => dynamo()],
  ['MemoryCounterStore', () => new MemoryCounterStore({ clock }), (store) => store],
];

describe.each(stores)('%s', (name, makeStore, peer) => {
  let store: CounterStore;
  let n = 0;
  const key = () => `rate#${name.length}-${(n += 1)}`;
  beforeEach(() => {
    store = makeStore();
  });

  it('counts up from one', async () => {
    const k = key();
    expect([await store.increment(k, 60, once()), await store.increment(k, 60, once()), await peer(store).increment(k, 60, once())]).toEqual([1, 2, 3]);
  });

  it('keeps the TTL set at creation (a fixed window), and starts again from one once it has passed', async () => {
    const k = key();
    expect(await store.increment(k, 60, once())).toBe(1);
    clock.advance(30_000);
    expect(await store.increment(k, 60, once())).toBe(2); // does not push the expiry to +90 s
    clock.advance(29_999);
    expect(await store.increment(k, 60, once())).toBe(3);
    clock.advance(1);
    // Past expires_at but maybe not yet swept by DynamoDB: it must count as fresh.
    expect(await store.increment(k, 60, once())).toBe(1);
    expect(await store.increment(k, 60, once())).toBe(2);
  });

  it('gives 20 concurrent increments the distinct values 1..20', async () => {
    const k = key();
    const values = await Promise.all(Array.from({ length: 20 }, () => peer(store).increment(k, 60, once())));
    expect([...values].sort((a, b) => a - b)).toEqual(range(1, 20));
  });

  it('gives concurrent increments of an expired counter the distinct values 1..20', async () => {
    // Every writer finds the stale item: exactly one may restart it, the rest must add to it.
    const k = key();
    await store.increment(k, 10, once());
    await store.increment(k, 10, once());
    clock.advance(10_000);
    const values = await Promise.all(Array.from({ length: 20 }, () => peer(store).increment(k, 10, once())));
    expect([...values].sort((a, b) => a - b)).toEqual(range(1, 20));
  });

  it('counts an event once: its token again (a write resent after a lost answer) gets the count it got', async () => {
    const k = key();
    const [first, second] = [once(), once()];
    expect([await store.increment(k, 60, first), await store.increment(k, 60, second), await peer(store).increment(k, 60, first), await store.increment(k, 60, second)]).toEqual([1, 2, 1, 2]);
    expect(await store.increment(k, 60, once())).toBe(3);
  });

  it('remembers the tokens of the first `upTo` counts only, and keeps counting past them', async () => {
    const k = key();
    const tokens = [once(undefined, 2), once(undefined, 2), once(undefined, 2)];
    expect([await store.increment(k, 60, tokens[0]!), await store.increment(k, 60, tokens[1]!), await store.increment(k, 60, tokens[2]!)]).toEqual([1, 2, 3]);
    // Within upTo: still counted once. Past it: a resend would count again (the limit is passed anyway).
    expect(await store.increment(k, 60, tokens[1]!)).toBe(2);
    expect(await store.increment(k, 60, tokens[2]!)).toBe(4);
  });

  it('forgets the tokens with the counter: a new window counts them afresh', async () => {
    const k = key();
    const token = once();
    expect(await store.increment(k, 10, token)).toBe(1);
    clock.advance(10_000);
    expect(await store.increment(k, 10, token)).toBe(1);
    expect(await store.increment(k, 10, token)).toBe(1);
    expect(await store.increment(k, 10, once())).toBe(2);
  });

  it('keeps different keys independent', async () => {
    const [a, b] = [key(), key()];
    await store.increment(a, 60, once());
    await store.increment(a, 60, once());
    expect(await store.increment(b, 60, once())).toBe(1);
  });
});

// Issue 25: DynamoDB applies the write and its answer is lost (the connection reset, or a 500
// instead): the client sends the same UpdateItem (or PutItem) again. One event must still count once.
describe.each(['reset', '500'] as const)('DynamoDbCounterStore: a write applied, its answer lost (%s)', (how) => {
  let proxy: DynamoDbFaultProxy;
  beforeAll(async () => {
    proxy = await startDynamoDbFaultProxy(stateTable().endpoint);
  });
  afterAll(() => proxy.close());
  beforeEach(() => proxy.reset());

  let n = 0;
  const key = () => `lost-${how}-${(n += 1)}`;
  const store = () => new DynamoDbCounterStore({ dynamodb: new DynamoDb({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }), tableName: 'state', keyPrefix: 'count#', clock });
  const writeOf = (operation: string, k: string) => (request: { operation: string; input: Record<string, unknown> }) => request.operation === operation && keyOf(request) === `count#${k}`;

  it('the first count of a window, resent, counts once', async () => {
    const k = key();
    proxy.loseAnswerOf({ match: writeOf('UpdateItem', k), how });
    expect(await store().increment(k, 60, once())).toBe(1);
    expect(proxy.lost).toHaveLength(1);
    expect(proxy.forwarded.filter(writeOf('UpdateItem', k)).length).toBeGreaterThanOrEqual(2);
    expect(await store().increment(k, 60, once())).toBe(2);
  });

  it('a later count, resent, counts once', async () => {
    const k = key();
    await store().increment(k, 60, once());
    proxy.loseAnswerOf({ match: writeOf('UpdateItem', k), how });
    expect(await store().increment(k, 60, once())).toBe(2);
    expect(proxy.lost).toHaveLength(1);
    expect(await store().increment(k, 60, once())).toBe(3);
  });

  it('the restart of an expired counter, resent, counts once', async () => {
    const k = key();
    await store().increment(k, 10, once());
    await store().increment(k, 10, once());
    clock.advance(10_000);
    proxy.loseAnswerOf({ match: writeOf('PutItem', k), how });
    expect(await store().increment(k, 10, once())).toBe(1);
    expect(proxy.lost).toHaveLength(1);
    expect(await store().increment(k, 10, once())).toBe(2);
  });
});

describe('DynamoDbCounterStore item shape', () => {
  it('stores count, the tokens counted (in order) and expires_at (epoch seconds) under the prefixed pk, in a table claims can share', async () => {
    const counters = new DynamoDbCounterStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'count#', clock });
    const claims = new DynamoDbClaimStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'claim#', clock });
    await counters.increment('shape', 120, once('EvShape1'));
    await counters.increment('shape', 120, once('EvShape2'));
    expect(await claims.mark('shape', 120)).toBe(true); // same key, other prefix: no clash

    const { Item } = await stateTable().client.send(new GetItemCommand({ TableName: 'state', Key: { pk: { S: 'count#shape' } }, ConsistentRead: true }));
    expect(Item).toEqual({ pk: { S: 'count#shape' }, count: { N: '2' }, tokens: { L: [{ S: 'EvShape1' }, { S: 'EvShape2' }] }, expires_at: { N: String(Math.floor(clock.now() / 1000) + 120) } });
  });
});
