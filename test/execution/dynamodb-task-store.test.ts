import { DynamoDbTaskStore } from '../../src/execution/stores/dynamodb-task-store';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import type { TaskRecord, TaskStore } from '../../src/execution/stores/task-store';
import { TaskService } from '../../src/execution/task-service';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { createLogger } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { eventually } from '../support/http';

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, 'tasks', 'task_id', 'expires_at');
});
afterAll(() => db.close());

let clock = 1_800_000_000_000;
const now = () => clock;
const record = (taskId: string, overrides: Partial<TaskRecord> = {}): TaskRecord => ({
  task_id: taskId,
  status: 'accepted',
  created_at: clock,
  updated_at: clock,
  expires_at: Math.floor(clock / 1000) + 60,
  ...overrides,
});

const stores: Array<[string, () => TaskStore]> = [
  ['DynamoDbTaskStore (dynalite)', () => new DynamoDbTaskStore({ client: db.client, tableName: 'tasks', now })],
  ['MemoryTaskStore', () => new MemoryTaskStore({ now })],
];

describe.each(stores)('%s', (_name, makeStore) => {
  let store: TaskStore;
  let n = 0;
  const id = () => `task-${_name.length}-${(n += 1)}`;
  beforeEach(() => {
    store = makeStore();
  });

  it('creates once; a second create returns the existing record', async () => {
    const taskId = id();
    expect(await store.create(record(taskId))).toEqual({ created: true, record: record(taskId) });
    const again = await store.create(record(taskId, { status: 'working' }));
    expect(again.created).toBe(false);
    expect(again.record.status).toBe('accepted');
  });

  it('transitions only from the allowed statuses', async () => {
    const taskId = id();
    await store.create(record(taskId));
    expect(await store.transition(taskId, ['working'], { status: 'success' })).toBeUndefined();
    const working = await store.transition(taskId, ['accepted'], { status: 'working' });
    expect(working?.status).toBe('working');
    const done = await store.transition(taskId, ['accepted', 'working'], { status: 'success', result: { status: 'success', response_text: 'hi', n: 1 } });
    expect(done).toMatchObject({ status: 'success', result: { response_text: 'hi', n: 1 } });
    expect(await store.transition(taskId, ['accepted', 'working'], { status: 'cancelled' })).toBeUndefined();
    expect((await store.get(taskId))?.status).toBe('success');
  });

  it('keeps a failure error object intact', async () => {
    const taskId = id();
    await store.create(record(taskId));
    await store.transition(taskId, ['accepted'], { status: 'failed', error: { code: -32001, message: 'Timeout', data: { limit_ms: 5 } } });
    expect((await store.get(taskId))?.error).toEqual({ code: -32001, message: 'Timeout', data: { limit_ms: 5 } });
  });

  it('treats an expired record as gone, and lets it be created anew', async () => {
    const taskId = id();
    await store.create(record(taskId));
    clock += 61_000;
    try {
      expect(await store.get(taskId)).toBeUndefined();
      expect(await store.transition(taskId, ['accepted'], { status: 'working' })).toBeUndefined();
      expect((await store.create(record(taskId))).created).toBe(true);
    } finally {
      clock -= 61_000;
    }
  });

  it('answers undefined for an unknown id', async () => {
    expect(await store.get('task-never')).toBeUndefined();
  });
});

describe('TaskService over a shared DynamoDB store (two processes)', () => {
  it('a task accepted by one process can be polled and cancelled through another', async () => {
    const shared = () => new DynamoDbTaskStore({ client: db.client, tableName: 'tasks' });
    const options = { executor: new EchoExecutor(), log: createLogger('test'), syncBudgetMs: 20, taskTimeoutMs: 5000, ttlSeconds: 600 };
    const first = new TaskService({ ...options, store: shared() });
    const second = new TaskService({ ...options, store: shared() });

    const accepted = await first.executeTask({ text: '#sleep=200' }, 'shared-1');
    expect(accepted.status).toBe('accepted');
    const taskId = (accepted as { task_id: string }).task_id;
    expect((await second.getTaskResult(taskId)).status).toMatch(/accepted|working/);
    const done = await eventually(async () => {
      const result = await second.getTaskResult(taskId);
      return result.status === 'success' ? result : undefined;
    });
    expect(done).toEqual({ status: 'success', response_text: 'echo: #sleep=200' });
    // The same id, sent to the other process, finds the same finished task.
    expect(await second.executeTask({ text: '#sleep=200' }, 'shared-1')).toEqual(done);
  });
});
