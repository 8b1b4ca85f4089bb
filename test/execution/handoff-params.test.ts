import { createHash, randomBytes } from 'node:crypto';
import { PutItemCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { ErrorCode, type ExecuteTaskParams } from '../../src/contract';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import type { Executor } from '../../src/execution/executors/executor';
import { HANDOFF_INLINE_MAX_BYTES, handoffMessageBody, runHandoffMessage } from '../../src/execution/handoff-message';
import { DynamoDbTaskStore, PARAMS_CHUNK_BYTES } from '../../src/execution/stores/dynamodb-task-store';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import type { TaskRecord, TaskStore } from '../../src/execution/stores/task-store';
import { TaskService, type TaskHandoff } from '../../src/execution/task-service';
import { createLogger } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { manualClock } from '../support/manual-clock';
import { echoSuccess } from '../support/echo-usage';

/** Params too large for a handoff message: kept in the task store, the message points at them. */

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, 'handoff-tasks', 'task_id', 'expires_at');
});
afterAll(() => db.close());

const clock = manualClock();
const nowSeconds = () => Math.floor(clock.now() / 1000);
let n = 0;
const newId = () => `task-handoff-${(n += 1)}`;
const record = (taskId: string): TaskRecord => ({ task_id: taskId, status: 'accepted', created_at: clock.now(), updated_at: clock.now(), expires_at: nowSeconds() + 60 });

/** Params of about `bytes` bytes of JSON: one attachment of random bytes (incompressible, like a real file). */
function bigParams(bytes: number, extra: Partial<ExecuteTaskParams> = {}): ExecuteTaskParams {
  const data = randomBytes(Math.floor((bytes * 3) / 4));
  return { text: 'read this', channel: 'C1', attachments: [{ name: 'big.pdf', mimetype: 'application/pdf', size: data.length, data: data.toString('base64') }], ...extra };
}
/** An item's size as DynamoDB counts it against its 400 KB limit: attribute names plus values. */
const itemBytes = (item: Record<string, AttributeValue>) =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + (value.B?.length ?? Buffer.byteLength(value.S ?? value.N ?? '')), 0);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const stores: Array<[string, () => TaskStore]> = [
  ['DynamoDbTaskStore (dynalite)', () => new DynamoDbTaskStore({ client: db.client, tableName: 'handoff-tasks', clock })],
  ['MemoryTaskStore', () => new MemoryTaskStore({ clock })],
];

describe.each(stores)('%s: putParams / getParams / deleteParams', (_name, makeStore) => {
  let store: TaskStore;
  beforeEach(() => {
    store = makeStore();
  });

  it('keeps the JSON exactly, multi-byte characters included, and a second put replaces the first', async () => {
    const taskId = newId();
    const json = JSON.stringify({ text: `héllo 👋 ${'日本語'.repeat(10)}`, n: 1 });
    await store.putParams(taskId, json, nowSeconds() + 60);
    expect(await store.getParams(taskId)).toBe(json);
    await store.putParams(taskId, '{"text":"second"}', nowSeconds() + 60);
    expect(await store.getParams(taskId)).toBe('{"text":"second"}');
  });

  it('answers undefined for unknown, erased and expired params; erasing nothing is fine', async () => {
    expect(await store.getParams('task-never')).toBeUndefined();
    await store.deleteParams('task-never');
    const erased = newId();
    await store.putParams(erased, '{"text":"x"}', nowSeconds() + 60);
    await store.deleteParams(erased);
    expect(await store.getParams(erased)).toBeUndefined();
    const expiring = newId();
    await store.putParams(expiring, '{"text":"y"}', nowSeconds() + 60);
    clock.advance(61_000);
    try {
      expect(await store.getParams(expiring)).toBeUndefined();
    } finally {
      clock.advance(-61_000);
    }
  });

  it('kept params are not a task: their keys read and move nothing, and the task itself is untouched', async () => {
    const taskId = newId();
    await store.create(record(taskId));
    await store.putParams(taskId, '{"text":"x"}', nowSeconds() + 60);
    for (const key of [`params-${taskId}`, `params-${taskId}-0`]) {
      expect(await store.get(key)).toBeUndefined();
      expect(await store.transition(key, ['accepted'], { status: 'working' })).toBeUndefined();
    }
    await store.deleteParams(taskId);
    expect(await store.get(taskId)).toEqual(record(taskId));
    expect(await store.get(`params-${taskId}`)).toBeUndefined();
  });
});

describe('DynamoDbTaskStore: kept params in chunks', () => {
  const store = () => new DynamoDbTaskStore({ client: db.client, tableName: 'handoff-tasks', clock });
  /** Every params item of a task, across scan pages (a page stops at 1 MB). */
  const itemsOf = async (taskId: string) => {
    const items: Array<Record<string, AttributeValue>> = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await db.client.send(new ScanCommand({ TableName: 'handoff-tasks', ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items.filter((item) => item.task_id?.S === `params-${taskId}` || item.task_id?.S?.startsWith(`params-${taskId}-`));
  };

  it('a 3 MB params object round-trips, as chunk items well under 400 KB that expire with the task', async () => {
    const taskId = newId();
    const params = bigParams(3_000_000, { messages: [{ role: 'user', text: 'ünïcödé 🎉', user_id: 'U1', ts: '1.1' }] });
    const json = JSON.stringify(params);
    expect(json.length).toBeGreaterThan(3_000_000);
    const expiresAt = nowSeconds() + 600;
    await store().putParams(taskId, json, expiresAt);

    const back = await store().getParams(taskId);
    expect(back).toBeDefined();
    expect(sha256(back!)).toBe(sha256(json));
    expect(JSON.parse(back!)).toEqual(params);

    const items = await itemsOf(taskId);
    const chunks = items.filter((item) => item.params_chunk?.B);
    expect(chunks).toHaveLength(Math.ceil(Buffer.byteLength(json) / PARAMS_CHUNK_BYTES));
    expect(chunks.length).toBeGreaterThan(10);
    for (const item of items) {
      expect(item.expires_at?.N).toBe(String(expiresAt));
      expect(itemBytes(item)).toBeLessThan(300 * 1024);
      expect(item.params_chunk?.B?.length ?? 0).toBeLessThanOrEqual(PARAMS_CHUNK_BYTES);
    }
  });

  it('erasing overwrites every chunk at once: no byte of the params stays in the table', async () => {
    const taskId = newId();
    const params = bigParams(600_000);
    await store().putParams(taskId, JSON.stringify(params), nowSeconds() + 600);
    await store().deleteParams(taskId);
    expect(await store().getParams(taskId)).toBeUndefined();
    const items = await itemsOf(taskId);
    expect(items.length).toBeGreaterThan(2);
    for (const item of items) expect(Object.keys(item).sort()).toEqual(['expires_at', 'task_id']);
  });

  it('chunks that do not add up to what was written are an error, never params', async () => {
    const taskId = newId();
    await store().putParams(taskId, JSON.stringify(bigParams(400_000)), nowSeconds() + 600);
    await db.client.send(
      new PutItemCommand({ TableName: 'handoff-tasks', Item: { task_id: { S: `params-${taskId}-1` }, params_chunk: { B: Buffer.from('torn') }, expires_at: { N: String(nowSeconds() + 600) } } }),
    );
    await expect(store().getParams(taskId)).rejects.toThrow(/do not add up/);
    await db.client.send(new PutItemCommand({ TableName: 'handoff-tasks', Item: { task_id: { S: `params-${taskId}-1` }, expires_at: { N: String(nowSeconds() + 600) } } }));
    await expect(store().getParams(taskId)).rejects.toThrow(/chunk 1 of 2 is missing/);
  });
});

describe('handoff messages', () => {
  const log = createLogger('test');
  const base = { log, syncBudgetMs: 20, taskTimeoutMs: 5000, ttlSeconds: 600, clock };

  /** A front service whose handoffs are captured as message bodies, and a worker on the same store. */
  function pair(store: TaskStore, executor: Executor = new EchoExecutor()) {
    const bodies: string[] = [];
    const handoff: TaskHandoff = async (task) => {
      bodies.push(await handoffMessageBody({ store }, task));
    };
    const front = new TaskService({ ...base, store, executor: new EchoExecutor(), handoff });
    const worker = new TaskService({ ...base, store, executor });
    return { front, bodies, worker: { service: worker, store, log } };
  }

  it('small params travel inline, exactly {task_id, params} but for bot_token, and nothing is kept', async () => {
    const store = new MemoryTaskStore({ clock });
    const put = jest.spyOn(store, 'putParams');
    const { front, bodies, worker } = pair(store);
    const params = { text: 'small #sleep=100', channel: 'C1', bot_token: 'xoxb-inline' };
    const accepted = (await front.executeTask(params, 'inline-1')) as { task_id: string };
    // The credential never rests in a queue message: the worker runs the task without it.
    expect(bodies[0]).not.toContain('xoxb-inline');
    expect(JSON.parse(bodies[0]!)).toEqual({ task_id: accepted.task_id, params: { text: 'small #sleep=100', channel: 'C1' } });
    expect(put).not.toHaveBeenCalled();
    await runHandoffMessage(worker, bodies[0]!);
    expect(await front.getTaskResult(accepted.task_id)).toEqual(echoSuccess('small #sleep=100'));
  });

  it.each(stores)('%s: large params are kept in the store, the message points at them, the worker runs them and erases them', async (_name, makeStore) => {
    const store = makeStore();
    const seen: ExecuteTaskParams[] = [];
    const echo = new EchoExecutor();
    const { front, bodies, worker } = pair(store, { name: 'seeing', execute: (params, context) => (seen.push(params), echo.execute(params, context)) });
    const params = bigParams(1_000_000, { text: 'big #sleep=100', bot_token: 'xoxb-credential' });
    const accepted = (await front.executeTask(params, `big-${_name}`)) as { status: string; task_id: string };
    expect(accepted.status).toBe('accepted');

    const body = bodies[0]!;
    expect(Buffer.byteLength(body)).toBeLessThan(HANDOFF_INLINE_MAX_BYTES);
    // The credential rests neither in the message nor in the store: the worker runs the task without it.
    expect(body).not.toContain('xoxb-credential');
    expect(JSON.parse(body)).toEqual({ task_id: accepted.task_id, params_ref: true });
    const kept = await store.getParams(accepted.task_id);
    expect(kept).not.toContain('xoxb-credential');
    const { bot_token: _token, ...withoutToken } = params;
    expect(JSON.parse(kept!)).toEqual(withoutToken);

    await runHandoffMessage(worker, body);
    expect(seen).toEqual([withoutToken]);
    const result = await front.getTaskResult(accepted.task_id);
    expect(result).toMatchObject({ status: 'success', response_text: expect.stringContaining(`attachment: big.pdf application/pdf ${params.attachments![0]!.size} bytes sha256=`) });
    expect(await store.getParams(accepted.task_id)).toBeUndefined();

    // A redelivery of the message finds the task done and runs nothing.
    await runHandoffMessage(worker, body);
    expect(seen).toHaveLength(1);
  });

  it('a message from before bot_token was kept out of the queue still runs its task, without the token', async () => {
    const store = new MemoryTaskStore({ clock });
    const seen: ExecuteTaskParams[] = [];
    const echo = new EchoExecutor();
    const { front, worker } = pair(store, { name: 'seeing', execute: (params, context) => (seen.push(params), echo.execute(params, context)) });
    const inline = (await front.executeTask({ text: 'old inline #sleep=100' }, 'old-inline')) as { task_id: string };
    const byRef = (await front.executeTask(bigParams(300_000, { text: 'old by ref #sleep=100' }), 'old-by-ref')) as { task_id: string };

    await runHandoffMessage(worker, JSON.stringify({ task_id: inline.task_id, params: { text: 'old inline #sleep=100', bot_token: 'xoxb-old' } }));
    await runHandoffMessage(worker, JSON.stringify({ task_id: byRef.task_id, params_ref: true, bot_token: 'xoxb-old' }));

    expect(seen.map((params) => params.text)).toEqual(['old inline #sleep=100', 'old by ref #sleep=100']);
    expect(seen.some((params) => 'bot_token' in params)).toBe(false);
    expect(await front.getTaskResult(inline.task_id)).toEqual(echoSuccess('old inline #sleep=100'));
  });

  it('the message just under the limit travels inline, just over it goes by reference', async () => {
    const store = new MemoryTaskStore({ clock });
    const at = async (size: number) => handoffMessageBody({ store }, { taskId: 'task-x', params: { text: 'x'.repeat(size) }, expiresAt: nowSeconds() + 60 });
    const envelope = Buffer.byteLength(JSON.stringify({ task_id: 'task-x', params: { text: '' } }));
    expect(JSON.parse(await at(HANDOFF_INLINE_MAX_BYTES - envelope))).toHaveProperty('params');
    expect(JSON.parse(await at(HANDOFF_INLINE_MAX_BYTES - envelope + 1))).toEqual({ task_id: 'task-x', params_ref: true });
  });

  it('a pending task whose kept params are gone fails with -32603 instead of hanging', async () => {
    const store = new MemoryTaskStore({ clock });
    const { front, bodies, worker } = pair(store);
    const accepted = (await front.executeTask(bigParams(300_000, { text: 'lost #sleep=100' }), 'lost-1')) as { task_id: string };
    await store.deleteParams(accepted.task_id);
    await runHandoffMessage(worker, bodies[0]!);
    await expect(front.getTaskResult(accepted.task_id)).rejects.toMatchObject({ code: ErrorCode.InternalError });
  });

  it('a malformed message throws, so the queue delivers it again or dead-letters it', async () => {
    const { worker } = pair(new MemoryTaskStore({ clock }));
    await expect(runHandoffMessage(worker, '{"task_id":"t"}')).rejects.toThrow();
    await expect(runHandoffMessage(worker, '{"task_id":"t","params_ref":false}')).rejects.toThrow();
    await expect(runHandoffMessage(worker, 'not json')).rejects.toThrow();
  });
});
