import { DynamoDbRecords } from '../../../src/verification/stores/dynamodb-records';
import { MemoryRecords } from '../../../src/verification/stores/memory-records';
import type { Records } from '../../../src/verification/stores/records';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

// The same cases against memory and against DynamoDB (dynalite): the agent surface's state behaves alike locally and deployed.
const stateTable = useStateTable();
const clock = manualClock();

const stores: Array<[string, () => Records]> = [
  ['DynamoDbRecords (dynalite)', () => new DynamoDbRecords({ dynamodb: stateTable().dynamodb, tableName: 'state', clock })],
  ['MemoryRecords', () => new MemoryRecords(clock)],
];

describe.each(stores)('%s', (name, makeStore) => {
  let store: Records;
  let n = 0;
  const key = () => `test#${name.length}#${(n += 1)}`;
  beforeEach(() => {
    store = makeStore();
  });

  it('gives back what was put, and nothing for a key never put', async () => {
    // Prepare
    const k = key();
    // Act
    await store.put(k, { request_id: 'r1', nested: { list: [1, 2] } }, 60);
    // Assess
    expect(await store.get(k)).toEqual({ request_id: 'r1', nested: { list: [1, 2] } });
    expect(await store.get(key())).toBeUndefined();
  });

  it('forgets a record once its lifetime is over', async () => {
    // Prepare
    const k = key();
    await store.put(k, { request_id: 'r1' }, 60);
    // Act
    clock.advance(61_000);
    // Assess
    expect(await store.get(k)).toBeUndefined();
  });

  it('replaces a record conditionally only while it still names the same request', async () => {
    // Prepare
    const k = key();
    await store.put(k, { request_id: 'r1', state: 'working' }, 60);
    // Act
    const same = await store.putIf(k, { request_id: 'r1', state: 'done' }, 60, { field: 'request_id', expected: 'r1' });
    const other = await store.putIf(k, { request_id: 'r2', state: 'working' }, 60, { field: 'request_id', expected: 'r2' });
    // Assess
    expect(same).toBe(true);
    expect(other).toBe(false);
    expect(await store.get(k)).toEqual({ request_id: 'r1', state: 'done' });
  });

  it('writes a conditional "only if absent" record once, and again after the first expired', async () => {
    // Prepare
    const k = key();
    // Act
    const first = await store.putIf(k, { request_id: 'r1' }, 60, { field: 'request_id', expected: undefined });
    const second = await store.putIf(k, { request_id: 'r2' }, 60, { field: 'request_id', expected: undefined });
    clock.advance(61_000);
    const afterExpiry = await store.putIf(k, { request_id: 'r3' }, 60, { field: 'request_id', expected: undefined });
    // Assess
    expect([first, second, afterExpiry]).toEqual([true, false, true]);
    expect(await store.get(k)).toEqual({ request_id: 'r3' });
  });
});
