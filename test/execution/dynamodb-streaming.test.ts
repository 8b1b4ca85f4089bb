import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecuteTaskParams, TaskStatus } from '../../src/contract';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import type { Executor, ExecutorContext, ExecutorOutput } from '../../src/execution/executors/executor';
import { PartialTextWriter } from '../../src/execution/partial-text';
import { DYNAMODB_PARTIAL_TEXT, DynamoDbTaskStore } from '../../src/execution/stores/dynamodb-task-store';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import type { PartialTextPolicy, TaskRecord, TaskStore, TaskUpdate } from '../../src/execution/stores/task-store';
import { TaskService, type TaskHandoff } from '../../src/execution/task-service';
import { createLogger } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { echoSuccess } from '../support/echo-usage';

/**
 * Streaming in the function-URL/worker deployment: the task table in DynamoDB (dynalite, through
 * the real SDK), the front answering `execute_task` and polls, the worker running the task and
 * writing its partial text to the task item — at most every 500 ms, once more at the end, and no
 * more than 350,000 bytes of it.
 */
let db: LocalDynamoDb;
const TABLE = 'streaming-tasks';
beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, TABLE, 'task_id', 'expires_at');
});
afterAll(() => db.close());

const log = createLogger('test');
const dynamo = (partialText?: PartialTextPolicy) => new DynamoDbTaskStore({ client: db.client, tableName: TABLE, ...(partialText ? { partialText } : {}) });

/** A store that notes every partial-text write it is asked for (when, and what). */
class RecordingStore implements TaskStore {
  readonly writes: Array<{ at: number; partial: { text?: string; length: number } }> = [];
  constructor(private readonly inner: TaskStore) {}
  get partialText() {
    return this.inner.partialText;
  }
  create: TaskStore['create'] = (record, key) => this.inner.create(record, key);
  get: TaskStore['get'] = (taskId) => this.inner.get(taskId);
  getByRequest: TaskStore['getByRequest'] = (key) => this.inner.getByRequest(key);
  transition(taskId: string, from: readonly TaskStatus[], update: TaskUpdate): Promise<TaskRecord | undefined> {
    if (update.partial && update.status === 'working' && from.length === 1 && from[0] === 'working') this.writes.push({ at: Date.now(), partial: update.partial });
    return this.inner.transition(taskId, from, update);
  }
  take: TaskStore['take'] = (taskId, lease, startPartial) => this.inner.take(taskId, lease, startPartial);
  putParams: TaskStore['putParams'] = (taskId, json, expiresAt) => this.inner.putParams(taskId, json, expiresAt);
  getParams: TaskStore['getParams'] = (taskId) => this.inner.getParams(taskId);
  deleteParams: TaskStore['deleteParams'] = (taskId) => this.inner.deleteParams(taskId);
}

/** A front that hands every task past its budget to a "queue", and a worker that runs from it, over one store. */
function deployment(store: TaskStore, executor: Executor) {
  const handedOff: Array<Parameters<TaskHandoff>[0]> = [];
  const options = { store, executor, log, syncBudgetMs: 50, taskTimeoutMs: 60_000, ttlSeconds: 600 };
  const front = new TaskService({ ...options, handoff: async (task) => void handedOff.push(task) });
  const worker = new TaskService(options);
  return { front, worker, handedOff };
}

describe('DynamoDbTaskStore partial text', () => {
  it.each<[string, () => TaskStore]>([
    ['DynamoDbTaskStore', () => dynamo()],
    ['MemoryTaskStore', () => new MemoryTaskStore()],
  ])('%s: written with the working status, the count alone moves on without text, null drops it', async (_name, makeStore) => {
    // Prepare
    const store = makeStore();
    const taskId = `task-partial-${_name}`;
    const now = Date.now();
    await store.create({ task_id: taskId, status: 'accepted', created_at: now, updated_at: now, expires_at: Math.floor(now / 1000) + 60 });
    // Act
    const started = await store.transition(taskId, ['accepted'], { status: 'working', partial: { text: '', length: 0 } });
    const grown = await store.transition(taskId, ['working'], { status: 'working', partial: { text: 'Hello, ', length: 7 } });
    const counted = await store.transition(taskId, ['working'], { status: 'working', partial: { length: 12 } });
    const read = await store.get(taskId);
    const settled = await store.transition(taskId, ['working'], { status: 'success', result: { status: 'success', response_text: 'Hello, world' }, partial: null });
    const late = await store.transition(taskId, ['working'], { status: 'working', partial: { text: 'too late', length: 8 } });
    // Assess
    expect(started?.partial).toEqual({ text: '', length: 0 });
    expect(grown?.partial).toEqual({ text: 'Hello, ', length: 7 });
    expect(counted?.partial).toEqual({ text: 'Hello, ', length: 12 });
    expect(read?.partial).toEqual({ text: 'Hello, ', length: 12 });
    expect(settled?.partial).toBeUndefined();
    expect(late).toBeUndefined();
    expect((await store.get(taskId))?.partial).toBeUndefined();
  });

  it('the DynamoDB store asks for a write at most every 500 ms and at most 350,000 bytes of text', () => {
    expect(dynamo().partialText).toEqual({ writeIntervalMs: 500, maxBytes: 350_000 });
    expect(DYNAMODB_PARTIAL_TEXT).toEqual({ writeIntervalMs: 500, maxBytes: 350_000 });
    expect((new MemoryTaskStore() as TaskStore).partialText).toBeUndefined();
  });
});

describe('streaming through the worker, with the task table in DynamoDB', () => {
  it('the front answers accepted without text; the worker writes the text at most every 500 ms and once at the end; polls on the front follow it by cursor', async () => {
    // Prepare
    const store = new RecordingStore(dynamo());
    const { front, worker, handedOff } = deployment(store, new EchoExecutor());
    // #sleep: the front's own attempt (which never streams) runs past its budget and hands the task off.
    const text = `#sleep=100 #stream=20 ${Array.from({ length: 80 }, (_, i) => `w${i}`).join(' ')}`;
    // Act
    const accepted = await front.executeTask({ text, stream: true }, 'stream-worker-1');
    expect(handedOff).toHaveLength(1);
    const running = worker.runHandedOff(handedOff[0]!.taskId, handedOff[0]!.params);
    let cursor: string | undefined;
    const pieces: string[] = [];
    let final: string | undefined;
    const answers: unknown[] = [];
    while (final === undefined) {
      const answer = await front.getTaskResult(accepted.status === 'accepted' ? accepted.task_id : '', cursor);
      answers.push(answer);
      if (answer.status === 'success') final = answer.response_text;
      else {
        if (answer.text !== undefined) pieces.push(answer.text);
        cursor = answer.cursor;
        await sleep(100);
      }
    }
    await running;
    // Assess
    expect(accepted).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/) });
    expect(final).toBe(`echo: ${text}`);
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(final.startsWith(pieces.join(''))).toBe(true);
    // ~1.6 s of streaming: a write when the first word comes, one per 500 ms after it, one at the end.
    const writes = store.writes;
    expect(writes.length).toBeGreaterThanOrEqual(3);
    expect(writes.length).toBeLessThanOrEqual(6);
    const gaps = writes.slice(1, -1).map((write, i) => write.at - writes[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(495);
    expect(writes.at(-1)!.partial).toEqual({ text: final, length: final.length });
    // The task item no longer holds partial text once it has its result.
    expect((await store.get(accepted.status === 'accepted' ? accepted.task_id : ''))?.partial).toBeUndefined();
  });

  it('keeps at most 350,000 bytes of text: past it only the count moves and polls get no more text until the result', async () => {
    // Prepare: 36 pieces of 10,000 characters come at once, then the task waits before answering
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const piece = (i: number) => String.fromCharCode(97 + (i % 26)).repeat(10_000);
    class Large implements Executor {
      readonly name = 'large';
      async execute(_params: ExecuteTaskParams, { onText }: ExecutorContext): Promise<ExecutorOutput> {
        let text = '';
        for (let i = 0; i < 36; i++) {
          onText?.(piece(i));
          text += piece(i);
        }
        await released;
        return { response_text: text };
      }
    }
    const store = dynamo();
    const { front, worker, handedOff } = deployment(store, new Large());
    const accepted = await front.executeTask({ text: 'write a lot', stream: true }, 'stream-cap-1');
    const taskId = handedOff[0]!.taskId;
    const running = worker.runHandedOff(taskId, handedOff[0]!.params);
    // Act: wait for the count to reach the end (the write after the first, 500 ms later)
    let record: TaskRecord | undefined;
    for (let i = 0; i < 100 && record?.partial?.length !== 360_000; i++) {
      await sleep(50);
      record = await store.get(taskId);
    }
    const fromStart = await front.getTaskResult(taskId, '0');
    const atCap = await front.getTaskResult(taskId, '350000');
    const midway = await front.getTaskResult(taskId, '340000');
    const beyondKept = await front.getTaskResult(taskId, '355000');
    const pastCount = await front.getTaskResult(taskId, '360001').catch((error: unknown) => error);
    release();
    await running;
    const final = await front.getTaskResult(taskId, '350000');
    // Assess
    expect(accepted.status).toBe('accepted');
    expect(record?.partial?.length).toBe(360_000);
    expect(record?.partial?.text.length).toBe(350_000);
    expect(fromStart).toMatchObject({ status: 'working', cursor: '350000' });
    expect((fromStart as { text: string }).text).toBe(Array.from({ length: 35 }, (_, i) => piece(i)).join(''));
    expect(atCap).toEqual({ status: 'working', task_id: taskId, cursor: '350000' });
    expect(midway).toEqual({ status: 'working', task_id: taskId, text: piece(34), cursor: '350000' });
    expect(beyondKept).toEqual({ status: 'working', task_id: taskId, cursor: '355000' });
    expect(pastCount).toMatchObject({ code: -32602, data: [{ path: 'cursor' }] });
    expect(final).toMatchObject({ status: 'success' });
    expect((final as { response_text: string }).response_text).toHaveLength(360_000);
  });

  it('counts the cap in UTF-8 bytes and stops at a piece boundary, so text of several bytes a character stays whole and under it', async () => {
    // Prepare
    const store = dynamo({ writeIntervalMs: 0, maxBytes: 9 });
    const taskId = 'task-cap-bytes';
    const now = Date.now();
    await store.create({ task_id: taskId, status: 'working', created_at: now, updated_at: now, expires_at: Math.floor(now / 1000) + 60 });
    const writer = new PartialTextWriter({ taskId, store, log });
    // Act: '€' is 3 bytes; '😀' is 2 UTF-16 units and 4 bytes. After the piece that does not fit, none is kept, even one that would.
    writer.append('€€');
    writer.append('😀');
    writer.append('€');
    const stored = await writer.flush();
    // Assess
    expect(stored).toEqual({ text: '€€', length: 5 });
    expect((await store.get(taskId))?.partial).toEqual({ text: '€€', length: 5 });
  });

  it('a worker that runs a task again after an earlier worker streamed from it answers without streaming, so cursors given out stay valid', async () => {
    // Prepare: an earlier worker took the task, wrote some text, then stopped (its Lambda timed out): its lease is over
    const store = new RecordingStore(dynamo());
    const { front, worker, handedOff } = deployment(store, new EchoExecutor());
    const accepted = await front.executeTask({ text: '#sleep=100 #stream=5 again', stream: true }, 'stream-rerun-1');
    const taskId = handedOff[0]!.taskId;
    await store.take(taskId, { owner: 'worker-that-stopped', until: Date.now() }, true);
    await store.transition(taskId, ['working'], { status: 'working', partial: { text: 'echo: #sl', length: 9 }, owner: 'worker-that-stopped' });
    const before = await front.getTaskResult(taskId, '0');
    // Act
    await worker.runHandedOff(taskId, handedOff[0]!.params);
    const after = await front.getTaskResult(taskId, '9');
    // Assess
    expect(accepted.status).toBe('accepted');
    expect(before).toEqual({ status: 'working', task_id: taskId, text: 'echo: #sl', cursor: '9' });
    expect(store.writes).toHaveLength(1);
    expect(after).toEqual(echoSuccess('#sleep=100 #stream=5 again'));
  });
});
