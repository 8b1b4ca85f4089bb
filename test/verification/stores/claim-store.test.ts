import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { ClaimStore } from '../../../src/verification/stores/claim-store';
import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { MemoryClaimStore } from '../../../src/verification/stores/memory-claim-store';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

// The same cases run against memory and against DynamoDB (dynalite), so local runs behave as deployed.
const stateTable = useStateTable();
const clock = manualClock();

// `peer` is a second handle on the same state: another instance over the same table for DynamoDB
// (as another Lambda would have), the same instance for memory (one process shares one store).
const dynamo = () => new DynamoDbClaimStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'claim#', clock });
const stores: Array<[string, () => ClaimStore, (store: ClaimStore) => ClaimStore]> = [
  ['DynamoDbClaimStore (dynalite)', dynamo, () => dynamo()],
  ['MemoryClaimStore', () => new MemoryClaimStore({ clock }), (store) => store],
];

describe.each(stores)('%s', (name, makeStore, peer) => {
  let store: ClaimStore;
  let n = 0;
  // Keys differ per case and per implementation, so no case sees another's items.
  const key = () => `event#${name.length}-${(n += 1)}`;
  beforeEach(() => {
    store = makeStore();
  });

  const acquire = (s: ClaimStore, k: string, token: string, extra: { value?: string; leaseSeconds?: number } = {}) =>
    s.acquire(k, { token, leaseSeconds: extra.leaseSeconds ?? 30, ttlSeconds: 3600, ...(extra.value ? { value: extra.value } : {}) });

  it('gives a key to one owner; others find it busy until it is done, then done with its value', async () => {
    const k = key();
    expect(await acquire(store, k, 'first', { value: 'req-1' })).toEqual({ status: 'claimed', token: 'first', takenOver: false, value: 'req-1' });
    expect(await acquire(peer(store), k, 'second')).toEqual({ status: 'busy', leaseEndsAt: clock.now() + 30_000 });
    expect(await store.complete(k, 'first', { ttlSeconds: 3600, value: '1700000000.000100' })).toBe(true);
    expect(await acquire(peer(store), k, 'third')).toEqual({ status: 'done', value: '1700000000.000100' });
  });

  it('counts a second acquire with the same token as claimed: a write whose response was lost and was sent again', async () => {
    const k = key();
    await acquire(store, k, 'mine');
    expect(await acquire(peer(store), k, 'mine')).toMatchObject({ status: 'claimed', token: 'mine', takenOver: false });
  });

  it('lets another owner take over once the lease is over, keeping the first value (the same request id)', async () => {
    const k = key();
    await acquire(store, k, 'dead-lambda', { value: 'req-first' });
    clock.advance(29_999);
    expect(await acquire(peer(store), k, 'retry-1', { value: 'req-other' })).toMatchObject({ status: 'busy' });
    clock.advance(1);
    expect(await acquire(peer(store), k, 'retry-2', { value: 'req-other' })).toEqual({ status: 'claimed', token: 'retry-2', takenOver: true, value: 'req-first' });
    // The dead owner can neither complete nor release what is no longer its claim.
    expect(await store.complete(k, 'dead-lambda', { ttlSeconds: 3600 })).toBe(false);
    await store.release(k, 'dead-lambda');
    expect(await acquire(peer(store), k, 'retry-3')).toMatchObject({ status: 'busy' });
  });

  it('release by the owner lets the next attempt claim at once, with the value; a done claim lives for its TTL, then is gone', async () => {
    const k = key();
    await acquire(store, k, 'a', { value: 'req-a' });
    await store.release(k, 'a');
    expect(await acquire(store, k, 'b', { value: 'req-b' })).toEqual({ status: 'claimed', token: 'b', takenOver: false, value: 'req-a' });
    await store.complete(k, 'b', { ttlSeconds: 60 });
    clock.advance(59_999);
    expect(await acquire(store, k, 'c')).toMatchObject({ status: 'done' });
    clock.advance(1);
    // Expired but possibly not yet deleted by DynamoDB's TTL sweeper: it must count as gone.
    expect(await acquire(store, k, 'c')).toMatchObject({ status: 'claimed' });
  });

  it('releasing a key that was never claimed, or someone else\'s, is harmless', async () => {
    const k = key();
    await expect(store.release(k, 'nobody')).resolves.toBeUndefined();
    await acquire(store, k, 'owner');
    await store.release(k, 'intruder');
    expect(await acquire(peer(store), k, 'later')).toMatchObject({ status: 'busy' });
  });

  it('lets exactly one of many concurrent acquires win', async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => acquire(peer(store), k, `t${i}`)));
    expect(results.filter((r) => r.status === 'claimed')).toHaveLength(1);
  });

  it('marks a once-only key once until its TTL has passed', async () => {
    const [a, b] = [key(), key()];
    expect(await store.mark(a, 60)).toBe(true);
    expect(await peer(store).mark(a, 60)).toBe(false);
    expect(await store.mark(b, 60)).toBe(true);
    clock.advance(60_000);
    expect(await store.mark(a, 60)).toBe(true);
  });
});

describe('DynamoDbClaimStore item shape', () => {
  it('writes pk with the prefix and times in epoch seconds; complete marks it done; release frees it and keeps its value', async () => {
    const store = new DynamoDbClaimStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'claim#', clock });
    const seconds = Math.floor(clock.now() / 1000);
    await store.acquire('shape-1', { token: 'tok', leaseSeconds: 30, ttlSeconds: 120, value: 'req' });
    const read = () => stateTable().client.send(new GetItemCommand({ TableName: 'state', Key: { pk: { S: 'claim#shape-1' } }, ConsistentRead: true }));
    expect((await read()).Item).toEqual({
      pk: { S: 'claim#shape-1' },
      claim_state: { S: 'pending' },
      owner: { S: 'tok' },
      lease_until: { N: String(seconds + 30) },
      expires_at: { N: String(seconds + 120) },
      claim_value: { S: 'req' },
    });
    await store.complete('shape-1', 'tok', { ttlSeconds: 600, value: 'ts-1' });
    expect((await read()).Item).toEqual({ pk: { S: 'claim#shape-1' }, claim_state: { S: 'done' }, owner: { S: 'tok' }, expires_at: { N: String(seconds + 600) }, claim_value: { S: 'ts-1' } });
    await store.acquire('shape-2', { token: 'tok', leaseSeconds: 30, ttlSeconds: 120, value: 'req-2' });
    await store.release('shape-2', 'tok');
    // Freed, not deleted: no owner, no lease, and the value kept for the next attempt.
    expect((await stateTable().client.send(new GetItemCommand({ TableName: 'state', Key: { pk: { S: 'claim#shape-2' } }, ConsistentRead: true }))).Item).toEqual({
      pk: { S: 'claim#shape-2' },
      claim_state: { S: 'pending' },
      lease_until: { N: '0' },
      expires_at: { N: String(seconds + 120) },
      claim_value: { S: 'req-2' },
    });
  });

  it('surfaces errors other than a failed condition', async () => {
    const store = new DynamoDbClaimStore({ dynamodb: stateTable().dynamodb, tableName: 'no-such-table', clock });
    // A missing table must not read as "already claimed", or every event would be dropped as a duplicate.
    await expect(store.acquire('x', { token: 't', leaseSeconds: 30, ttlSeconds: 60 })).rejects.toMatchObject({ name: 'ResourceNotFoundException', statusCode: 400 });
  });
});
