import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { MemoryClaimStore } from '../../../src/verification/stores/memory-claim-store';
import type { ClaimStore } from '../../../src/verification/stores/claim-store';
import { once } from '../../../src/verification/stores/once';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

// once() over both claim stores: the same answers in memory and in DynamoDB (dynalite).
const stateTable = useStateTable();
const clock = manualClock();
const stores: Array<[string, () => ClaimStore]> = [
  ['DynamoDbClaimStore (dynalite)', () => new DynamoDbClaimStore({ dynamodb: stateTable().dynamodb, tableName: 'state', keyPrefix: 'claim#', clock })],
  ['MemoryClaimStore', () => new MemoryClaimStore({ clock })],
];
const lease = { leaseSeconds: 30, ttlSeconds: 3600 };

describe.each(stores)('once over %s', (name, makeStore) => {
  let claims: ClaimStore;
  let n = 0;
  const key = () => `once#${name.length}-${(n += 1)}`;
  beforeEach(() => {
    claims = makeStore();
  });

  it('runs the work once: a second call is a duplicate with the value the first kept', async () => {
    const k = key();
    let runs = 0;
    const work = async () => ({ result: (runs += 1), value: `ts-${runs}` });
    await expect(once(claims, k, lease, work)).resolves.toEqual({ status: 'done', result: 1, kept: true });
    await expect(once(claims, k, lease, work)).resolves.toEqual({ status: 'duplicate', value: 'ts-1' });
    expect(runs).toBe(1);
  });

  it('a work that failed without effect gives the claim back: the next attempt runs at once', async () => {
    const k = key();
    await expect(once(claims, k, lease, async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(once(claims, k, lease, async () => ({ result: 'second' }))).resolves.toMatchObject({ status: 'done', result: 'second' });
  });

  it('a work that may have happened keeps its lease: the next attempt is busy until it ends, then takes over told so', async () => {
    const k = key();
    const maybe = { ...lease, mayHaveHappened: () => true, value: 'request-1' };
    await expect(once(claims, k, maybe, async () => Promise.reject(new Error('no answer')))).rejects.toThrow('no answer');
    await expect(once(claims, k, maybe, async () => ({ result: 'too soon' }))).resolves.toMatchObject({ status: 'busy' });
    clock.advance(31_000);
    let seen;
    await expect(once(claims, k, { ...maybe, value: 'request-2' }, async (claim) => ((seen = claim), { result: 'took over' }))).resolves.toMatchObject({ status: 'done', result: 'took over' });
    // The value of the first claim survives the takeover (an event's request id stays the same).
    expect(seen).toEqual({ takenOver: true, value: 'request-1' });
  });

  it('a second attempt while the first works is busy, and the first still completes', async () => {
    const k = key();
    let inner: unknown;
    const outer = await once(claims, k, lease, async () => {
      inner = await once(claims, k, lease, async () => ({ result: 'never' }));
      return { result: 'first' };
    });
    expect(inner).toMatchObject({ status: 'busy' });
    expect(outer).toEqual({ status: 'done', result: 'first', kept: true });
  });

  it('work that outlived its lease and was taken over reports kept: false', async () => {
    const k = key();
    const outcome = await once(claims, k, lease, async () => {
      clock.advance(31_000);
      await once(claims, k, lease, async () => ({ result: 'taker' }));
      return { result: 'slow' };
    });
    expect(outcome).toEqual({ status: 'done', result: 'slow', kept: false });
  });
});

it('a complete the store does not answer is reported with its error, and the result is kept', async () => {
  const memory = new MemoryClaimStore({ clock });
  const failing: ClaimStore = { acquire: (k, o) => memory.acquire(k, o), release: (k, t) => memory.release(k, t), mark: (k, t) => memory.mark(k, t), complete: async () => Promise.reject(new Error('DynamoDB is away')) };
  const outcome = await once(failing, 'once#complete-fails', lease, async () => ({ result: 'posted' }));
  expect(outcome).toMatchObject({ status: 'done', result: 'posted', kept: false, keepError: new Error('DynamoDB is away') });
});
