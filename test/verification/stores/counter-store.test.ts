import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { CounterStore } from '../../../src/verification/stores/counter-store';
import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { DynamoDbCounterStore } from '../../../src/verification/stores/dynamodb-counter-store';
import { MemoryCounterStore } from '../../../src/verification/stores/memory-counter-store';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

// The same cases run against memory and against DynamoDB (dynalite), so local runs behave as deployed.
const stateTable = useStateTable();
const clock = manualClock();
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

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
    expect([await store.increment(k, 60), await store.increment(k, 60), await peer(store).increment(k, 60)]).toEqual([1, 2, 3]);
  });

  it('keeps the TTL set at creation (a fixed window), and starts again from one once it has passed', async () => {
    const k = key();
    expect(await store.increment(k, 60)).toBe(1);
    clock.advance(30_000);
    expect(await store.increment(k, 60)).toBe(2); // does not push the expiry to +90 s
    clock.advance(29_999);
    expect(await store.increment(k, 60)).toBe(3);
    clock.advance(1);
    // Past expires_at but maybe not yet swept by DynamoDB: it must count as fresh.
    expect(await store.increment(k, 60)).toBe(1);
    expect(await store.increment(k, 60)).toBe(2);
  });

  it('gives 20 concurrent increments the distinct values 1..20', async () => {
    const k = key();
    const values = await Promise.all(Array.from({ length: 20 }, () => peer(store).increment(k, 60)));
    expect([...values].sort((a, b) => a - b)).toEqual(range(1, 20));
  });

  it('gives concurrent increments of an expired counter the distinct values 1..20', async () => {
    // Every writer finds the stale item: exactly one may restart it, the rest must add to it.
    const k = key();
    await store.increment(k, 10);
    await store.increment(k, 10);
    clock.advance(10_000);
    const values = await Promise.all(Array.from({ length: 20 }, () => peer(store).increment(k, 10)));
    expect([...values].sort((a, b) => a - b)).toEqual(range(1, 20));
  });

  it('keeps different keys independent', async () => {
    const [a, b] = [key(), key()];
    await store.increment(a, 60);
    await store.increment(a, 60);
    expect(await store.increment(b, 60)).toBe(1);
  });
});

describe('DynamoDbCounterStore item shape', () => {
  it('stores count and expires_at (epoch seconds) under the prefixed pk, in a table claims can share', async () => {
    const counters = new DynamoDbCounterStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'count#', clock });
    const claims = new DynamoDbClaimStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'claim#', clock });
    await counters.increment('shape', 120);
    await counters.increment('shape', 120);
    expect(await claims.mark('shape', 120)).toBe(true); // same key, other prefix: no clash

    const { Item } = await stateTable().client.send(new GetItemCommand({ TableName: 'state', Key: { pk: { S: 'count#shape' } }, ConsistentRead: true }));
    expect(Item).toEqual({ pk: { S: 'count#shape' }, count: { N: '2' }, expires_at: { N: String(Math.floor(clock.now() / 1000) + 120) } });
  });
});
