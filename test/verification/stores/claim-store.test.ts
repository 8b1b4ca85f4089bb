import { GetItemCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { ClaimStore } from '../../../src/verification/stores/claim-store';
import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { MemoryClaimStore } from '../../../src/verification/stores/memory-claim-store';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../../support/dynalite';

// The same cases run against memory and against DynamoDB (dynalite), so local runs behave as deployed.
let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, 'state', 'pk', 'expires_at');
});
afterAll(() => db.close());

let clock = 1_800_000_000_000; // a whole second, so TTL edges fall on exact boundaries
const now = () => clock;
const advance = (ms: number) => {
  clock += ms;
};

// `peer` is a second handle on the same state: another instance over the same table for DynamoDB
// (as another Lambda would have), the same instance for memory (one process shares one store).
const dynamo = () => new DynamoDbClaimStore({ client: db.client, tableName: 'state', keyPrefix: 'claim#', now });
const stores: Array<[string, () => ClaimStore, (store: ClaimStore) => ClaimStore]> = [
  ['DynamoDbClaimStore (dynalite)', dynamo, () => dynamo()],
  ['MemoryClaimStore', () => new MemoryClaimStore({ now }), (store) => store],
];

describe.each(stores)('%s', (name, makeStore, peer) => {
  let store: ClaimStore;
  let n = 0;
  // Keys differ per case and per implementation, so no case sees another's items.
  const key = () => `event#${name.length}-${(n += 1)}`;
  beforeEach(() => {
    store = makeStore();
  });

  it('claims a key once; a second claim is refused while the first is live', async () => {
    const k = key();
    expect(await store.claim(k, 60)).toBe(true);
    expect(await store.claim(k, 60)).toBe(false);
    expect(await peer(store).claim(k, 60)).toBe(false); // another handle (another Lambda) agrees
  });

  it('keeps a claim until its TTL has passed, then lets it be claimed again', async () => {
    const k = key();
    expect(await store.claim(k, 60)).toBe(true);
    advance(59_999);
    expect(await store.claim(k, 60)).toBe(false);
    advance(1);
    // Expired but possibly not yet deleted by DynamoDB's TTL sweeper: it must count as gone.
    expect(await store.claim(k, 60)).toBe(true);
    expect(await store.claim(k, 60)).toBe(false);
  });

  it('release lets the same key be claimed again at once', async () => {
    const k = key();
    await store.claim(k, 3600);
    await store.release(k);
    expect(await store.claim(k, 3600)).toBe(true);
  });

  it('releasing a key that was never claimed is harmless', async () => {
    await expect(store.release(key())).resolves.toBeUndefined();
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 20 }, () => peer(store).claim(k, 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('keeps different keys independent', async () => {
    const [a, b] = [key(), key()];
    expect(await store.claim(a, 60)).toBe(true);
    expect(await store.claim(b, 60)).toBe(true);
  });
});

describe('DynamoDbClaimStore item shape', () => {
  it('writes pk with the prefix and expires_at in epoch seconds, and release deletes the item', async () => {
    const store = new DynamoDbClaimStore({ client: db.client, tableName: 'state', keyPrefix: 'claim#', now });
    await store.claim('shape-1', 120);
    const read = () => db.client.send(new GetItemCommand({ TableName: 'state', Key: { pk: { S: 'claim#shape-1' } }, ConsistentRead: true }));
    expect((await read()).Item).toEqual({ pk: { S: 'claim#shape-1' }, expires_at: { N: String(Math.floor(clock / 1000) + 120) } });
    await store.release('shape-1');
    expect((await read()).Item).toBeUndefined();
  });

  it('surfaces errors other than a failed condition', async () => {
    const store = new DynamoDbClaimStore({ client: db.client, tableName: 'no-such-table', now });
    // A missing table must not read as "already claimed", or every event would be dropped as a duplicate.
    await expect(store.claim('x', 60)).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});
