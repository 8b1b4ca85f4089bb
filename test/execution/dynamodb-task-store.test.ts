import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDbTaskStore } from '../../src/execution/stores/dynamodb-task-store';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import { TaskStoreFullError, type TaskStore } from '../../src/execution/stores/task-store';
import { TaskService } from '../../src/execution/task-service';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { createLogger } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { manualClock } from '../support/manual-clock';
import { eventually } from '../support/http';
import { recordsOn } from './task-records';
import { echoSuccess } from '../support/echo-usage';

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, 'tasks', 'task_id', 'expires_at');
});
afterAll(() => db.close());

const clock = manualClock();
const record = recordsOn(clock, 60);

const stores: Array<[string, () => TaskStore]> = [
  ['DynamoDbTaskStore (dynalite)', () => new DynamoDbTaskStore({ client: db.client, tableName: 'tasks', clock })],
  ['MemoryTaskStore', () => new MemoryTaskStore({ clock })],
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

  it('keeps steps, a question and the answers (docs/contract.md, "Steps", "Questions"); null drops them', async () => {
    const taskId = id();
    await store.create(record(taskId));
    await store.transition(taskId, ['accepted'], { status: 'working' });
    const steps = [{ id: 's1', title: 'Search', status: 'complete' as const, sources: [{ url: 'https://example.com/a' }] }];
    const question = { id: 'q1', text: 'Go?', options: [{ value: 'yes', label: 'Yes' }] };
    await store.transition(taskId, ['working'], { status: 'working', steps, plan_title: 'Plan' });
    expect(await store.transition(taskId, ['working'], { status: 'input_required', question })).toMatchObject({ status: 'input_required', steps, plan_title: 'Plan', question });
    // Paused, it is kept as a pending task is: only its answer moves it on, once.
    const answers = [{ question_id: 'q1', value: 'yes' }];
    expect(await store.transition(taskId, ['input_required'], { status: 'accepted', question: null, answers })).toMatchObject({ status: 'accepted', answers });
    expect(await store.transition(taskId, ['input_required'], { status: 'accepted', question: null, answers })).toBeUndefined();
    const now = await store.get(taskId);
    expect(now).toMatchObject({ status: 'accepted', steps, answers });
    expect(now?.question).toBeUndefined();
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
    clock.advance(61_000);
    try {
      expect(await store.get(taskId)).toBeUndefined();
      expect(await store.transition(taskId, ['accepted'], { status: 'working' })).toBeUndefined();
      expect((await store.create(record(taskId))).created).toBe(true);
    } finally {
      clock.advance(-61_000);
    }
  });

  it('answers undefined for an unknown id', async () => {
    expect(await store.get('task-never')).toBeUndefined();
    expect(await store.getByRequest('never-requested')).toBeUndefined();
  });

  it('keeps the params hash', async () => {
    const taskId = id();
    await store.create(record(taskId, { params_hash: 'ab'.repeat(32) }));
    expect((await store.get(taskId))?.params_hash).toBe('ab'.repeat(32));
  });

  it('a request key finds the task it was first created for; a second task under it is never stored', async () => {
    const key = `key-${id()}`;
    const first = id();
    const second = id();
    expect((await store.create(record(first), key)).created).toBe(true);
    const again = await store.create(record(second, { status: 'working' }), key);
    expect(again).toEqual({ created: false, record: record(first) });
    expect(await store.getByRequest(key)).toEqual(record(first));
    expect(await store.get(second)).toBeUndefined();
    // The key's record is not a task: it cannot be read or moved by its own key.
    expect(await store.get(`request-${key}`)).toBeUndefined();
    expect(await store.transition(`request-${key}`, ['accepted'], { status: 'cancelled' })).toBeUndefined();
  });

  it('of simultaneous creates under one request key exactly one wins and all see its task', async () => {
    const key = `race-${id()}`;
    const ids = Array.from({ length: 6 }, () => id());
    const outcomes = await Promise.all(ids.map((taskId) => store.create(record(taskId), key)));
    expect(outcomes.filter((outcome) => outcome.created)).toHaveLength(1);
    const winner = outcomes.find((outcome) => outcome.created)!.record.task_id;
    for (const outcome of outcomes) expect(outcome.record.task_id).toBe(winner);
    for (const loser of ids.filter((taskId) => taskId !== winner)) expect(await store.get(loser)).toBeUndefined();
  });

  it('a request key expires with its task, and can then start a new one', async () => {
    const key = `ttl-${id()}`;
    await store.create(record(id()), key);
    clock.advance(61_000);
    try {
      expect(await store.getByRequest(key)).toBeUndefined();
      const fresh = id();
      expect(await store.create(record(fresh), key)).toMatchObject({ created: true, record: { task_id: fresh } });
      expect((await store.getByRequest(key))?.task_id).toBe(fresh);
    } finally {
      clock.advance(-61_000);
    }
  });
});

describe('DynamoDbTaskStore request items', () => {
  it('a request item left naming a task that is gone is taken over by the next create', async () => {
    const store = new DynamoDbTaskStore({ client: db.client, tableName: 'tasks', clock });
    await db.client.send(
      new PutItemCommand({
        TableName: 'tasks',
        Item: { task_id: { S: 'request-dangling' }, request_task_id: { S: 'task-deleted-by-hand' }, expires_at: { N: String(Math.floor(clock.now() / 1000) + 60) } },
      }),
    );
    expect(await store.getByRequest('dangling')).toBeUndefined();
    expect(await store.create(record('task-after-dangling'), 'dangling')).toMatchObject({ created: true });
    expect((await store.getByRequest('dangling'))?.task_id).toBe('task-after-dangling');
  });
});

describe('MemoryTaskStore bounds', () => {
  const pending = (taskId: string) => record(taskId, { status: 'working' });
  const done = (taskId: string) => record(taskId, { status: 'success', result: { status: 'success', response_text: 'ok' } });

  it('drops the oldest finished record to make room, never a pending one, even the oldest', async () => {
    const store = new MemoryTaskStore({ maxRecords: 3, clock });
    await store.create(pending('p-old'), 'k-p-old');
    await store.create(done('d-1'), 'k-d-1');
    await store.create(pending('p-new'));
    await store.create(record('n-1'), 'k-n-1');
    expect(await store.get('d-1')).toBeUndefined();
    expect(await store.getByRequest('k-d-1')).toBeUndefined();
    expect((await store.get('p-old'))?.status).toBe('working');
    expect((await store.getByRequest('k-p-old'))?.task_id).toBe('p-old');
    expect((await store.get('p-new'))?.status).toBe('working');
    expect(store.size).toBe(3);
  });

  it('refuses a new task when every slot is pending, and takes it once one finishes', async () => {
    const store = new MemoryTaskStore({ maxRecords: 2, clock });
    await store.create(record('a'));
    await store.create(pending('b'), 'k-b');
    await expect(store.create(record('c'), 'k-c')).rejects.toThrow(TaskStoreFullError);
    expect(await store.getByRequest('k-c')).toBeUndefined();
    expect([(await store.get('a'))?.status, (await store.get('b'))?.status]).toEqual(['accepted', 'working']);
    // A repeated key still finds its pending task while the store is full.
    expect(await store.create(record('b-again'), 'k-b')).toEqual({ created: false, record: pending('b') });
    await store.transition('a', ['accepted'], { status: 'failed', error: { code: -32000, message: 'x' } });
    expect((await store.create(record('c'), 'k-c')).created).toBe(true);
    expect(await store.get('a')).toBeUndefined();
    expect((await store.get('b'))?.status).toBe('working');
  });

  it('an expired record makes room whatever its status', async () => {
    const store = new MemoryTaskStore({ maxRecords: 1, clock });
    await store.create(pending('stuck'));
    clock.advance(61_000);
    try {
      expect((await store.create(record('next'))).created).toBe(true);
      expect(store.size).toBe(1);
    } finally {
      clock.advance(-61_000);
    }
  });
});

/**
 * Two TaskServices in this process, each with its own DynamoDB client and store over one dynalite
 * table: all they share is the table, as two runtime processes (or AgentCore microVMs) would.
 */
describe('TaskService: two instances over one DynamoDB table, each with its own client', () => {
  const clients: DynamoDBClient[] = [];
  const instance = () => {
    const client = new DynamoDBClient({ endpoint: db.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    clients.push(client);
    return new TaskService({ executor: new EchoExecutor(), log: createLogger('test'), syncBudgetMs: 20, taskTimeoutMs: 5000, ttlSeconds: 600, store: new DynamoDbTaskStore({ client, tableName: 'tasks' }) });
  };
  afterAll(() => {
    for (const client of clients) client.destroy();
  });

  it('a task accepted by one is polled to its answer through the other, which finds it again by its request id', async () => {
    const first = instance();
    const second = instance();

    const accepted = await first.executeTask({ text: '#sleep=200' }, 'shared-1');
    expect(accepted.status).toBe('accepted');
    const taskId = (accepted as { task_id: string }).task_id;
    expect((await second.getTaskResult(taskId)).status).toMatch(/accepted|working/);
    const done = await eventually(async () => {
      const result = await second.getTaskResult(taskId);
      return result.status === 'success' ? result : undefined;
    });
    expect(done).toEqual(echoSuccess('#sleep=200'));
    // The same id, sent to the other instance, finds the same finished task.
    expect(await second.executeTask({ text: '#sleep=200' }, 'shared-1')).toEqual(done);
  });

  it('a task accepted by one is cancelled through the other: both then answer -32003, and the first one\'s run does not bring it back', async () => {
    const first = instance();
    const second = instance();
    const accepted = await first.executeTask({ text: 'long one #sleep=400' }, 'shared-cancel');
    expect(accepted.status).toBe('accepted');
    const taskId = (accepted as { task_id: string }).task_id;
    expect(first.busy).toBe(true);

    // Act: cancel_task reaches the instance that is not running the task.
    await expect(second.cancelTask(taskId)).resolves.toEqual({ status: 'cancelled', task_id: taskId });

    // Assess: cancelled for both at once, and still after the first instance's run has ended
    // (its success may not overwrite the cancel); a second cancel_task answers the same.
    for (const service of [first, second]) await expect(service.getTaskResult(taskId)).rejects.toMatchObject({ code: -32003 });
    await eventually(() => (first.busy ? undefined : true), 3000);
    for (const service of [first, second]) await expect(service.getTaskResult(taskId)).rejects.toMatchObject({ code: -32003 });
    await expect(first.cancelTask(taskId)).resolves.toEqual({ status: 'cancelled', task_id: taskId });
    // The request id keeps pointing at the cancelled task: sending it again starts nothing new.
    await expect(second.executeTask({ text: 'long one #sleep=400' }, 'shared-cancel')).rejects.toMatchObject({ code: -32003 });
  });
});
