import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { botThreadKey, type BotThread, type BotThreads } from '../../../src/verification/stores/bot-threads';
import { DynamoDbBotThreads } from '../../../src/verification/stores/dynamodb-bot-threads';
import { MemoryBotThreads } from '../../../src/verification/stores/memory-bot-threads';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

// The same cases run against memory and against DynamoDB (dynalite), so local runs behave as deployed.
const stateTable = useStateTable();
const clock = manualClock();

const stores: Array<[string, () => BotThreads]> = [
  ['DynamoDbBotThreads (dynalite)', () => new DynamoDbBotThreads({ dynamodb: stateTable().dynamodb, tableName: 'state', clock })],
  ['MemoryBotThreads', () => new MemoryBotThreads(clock)],
];

describe.each(stores)('%s', (name, makeStore) => {
  let store: BotThreads;
  let n = 0;
  // Threads differ per case and per implementation, so no case sees another's items.
  const thread = (): BotThread => ({ team_id: 'T1', channel: `C${name.length}`, thread_ts: `1700000000.${String((n += 1)).padStart(6, '0')}` });
  beforeEach(() => {
    store = makeStore();
  });

  it('knows a thread once it is remembered, and not before', async () => {
    const t = thread();
    expect(await store.has(t)).toBe(false);
    await store.remember(t, 3600);
    expect(await store.has(t)).toBe(true);
  });

  it('does not mistake another channel, thread or team for the remembered one', async () => {
    const t = thread();
    await store.remember(t, 3600);
    expect(await store.has({ ...t, channel: `${t.channel}X` })).toBe(false);
    expect(await store.has({ ...t, thread_ts: `${t.thread_ts}1` })).toBe(false);
    expect(await store.has({ ...t, team_id: 'T2' })).toBe(false);
    expect(await store.has(t)).toBe(true);
  });

  it('forgets a thread once its TTL has passed', async () => {
    const t = thread();
    await store.remember(t, 60);
    clock.advance(59_999);
    expect(await store.has(t)).toBe(true);
    clock.advance(1);
    expect(await store.has(t)).toBe(false);
  });

  it('moves the expiry on when the thread is remembered again', async () => {
    const t = thread();
    await store.remember(t, 60);
    clock.advance(50_000);
    await store.remember(t, 60);
    clock.advance(30_000); // 80 s after the first remember, 30 s after the second
    expect(await store.has(t)).toBe(true);
    clock.advance(30_000);
    expect(await store.has(t)).toBe(false);
  });

  it('remembers a forgotten thread again', async () => {
    const t = thread();
    await store.remember(t, 10);
    clock.advance(10_000);
    expect(await store.has(t)).toBe(false);
    await store.remember(t, 10);
    expect(await store.has(t)).toBe(true);
  });
});

describe('DynamoDbBotThreads item shape', () => {
  it('writes pk as the thread key and expires_at in epoch seconds', async () => {
    const store = new DynamoDbBotThreads({ dynamodb: stateTable().dynamodb, tableName: 'state', clock });
    const t: BotThread = { team_id: 'T9', channel: 'C9', thread_ts: '1700000000.000900' };
    await store.remember(t, 120);
    const item = (await stateTable().client.send(new GetItemCommand({ TableName: 'state', Key: { pk: { S: botThreadKey(t) } }, ConsistentRead: true }))).Item;
    expect(item).toEqual({ pk: { S: 'thread#T9#C9#1700000000.000900' }, expires_at: { N: String(Math.floor(clock.now() / 1000) + 120) } });
  });

  it('shares what one instance remembered with another over the same table (another Lambda)', async () => {
    const t: BotThread = { team_id: 'T9', channel: 'C9', thread_ts: '1700000000.000902' };
    await new DynamoDbBotThreads({ dynamodb: stateTable().dynamodb, tableName: 'state', clock }).remember(t, 3600);
    expect(await new DynamoDbBotThreads({ dynamodb: stateTable().dynamodb, tableName: 'state', clock }).has(t)).toBe(true);
  });

  it('counts an item past its expires_at as absent though DynamoDB has not deleted it yet', async () => {
    const store = new DynamoDbBotThreads({ dynamodb: stateTable().dynamodb, tableName: 'state', clock });
    const t: BotThread = { team_id: 'T9', channel: 'C9', thread_ts: '1700000000.000901' };
    const seconds = Math.floor(clock.now() / 1000);
    await stateTable().client.send(new PutItemCommand({ TableName: 'state', Item: { pk: { S: botThreadKey(t) }, expires_at: { N: String(seconds - 1) } } }));
    expect(await store.has(t)).toBe(false);
    await stateTable().client.send(new PutItemCommand({ TableName: 'state', Item: { pk: { S: botThreadKey(t) }, expires_at: { N: String(seconds) } } }));
    expect(await store.has(t)).toBe(false);
    await stateTable().client.send(new PutItemCommand({ TableName: 'state', Item: { pk: { S: botThreadKey(t) }, expires_at: { N: String(seconds + 1) } } }));
    expect(await store.has(t)).toBe(true);
  });

  it('surfaces a missing table rather than answering no', async () => {
    const store = new DynamoDbBotThreads({ dynamodb: stateTable().dynamodb, tableName: 'no-such-table', clock });
    await expect(store.has({ team_id: 'T', channel: 'C', thread_ts: '1.0' })).rejects.toThrow();
    await expect(store.remember({ team_id: 'T', channel: 'C', thread_ts: '1.0' }, 60)).rejects.toThrow();
  });
});

describe('MemoryBotThreads capacity', () => {
  it('keeps at most 10,000 threads, dropping the one remembered longest ago', async () => {
    const store = new MemoryBotThreads(clock);
    const at = (index: number): BotThread => ({ team_id: 'T', channel: 'C', thread_ts: `1.${index}` });
    for (let index = 0; index < 10_000; index += 1) await store.remember(at(index), 3600);
    // Remembering the first again makes it the newest: the second is then the oldest.
    await store.remember(at(0), 3600);
    await store.remember(at(10_000), 3600);
    expect(await store.has(at(0))).toBe(true);
    expect(await store.has(at(1))).toBe(false);
    expect(await store.has(at(2))).toBe(true);
    expect(await store.has(at(10_000))).toBe(true);
  });
});
