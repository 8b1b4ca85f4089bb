import type { ExecuteTaskParams } from '../../src/contract';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import type { Executor, ExecutorOutput } from '../../src/execution/executors/executor';
import { HandoffHeldError, handoffMessageBody, runHandoffMessage } from '../../src/execution/handoff-message';
import { DynamoDbTaskStore } from '../../src/execution/stores/dynamodb-task-store';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import type { TaskStore } from '../../src/execution/stores/task-store';
import { TaskService, type TaskHandoff } from '../../src/execution/task-service';
import type { Log, LogExtra } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { eventually } from '../support/http';
import { manualClock } from '../support/manual-clock';
import { recordsOn } from './task-records';

/**
 * A hand-off handled twice runs the model once (issue 25, item 3). The worker takes the task
 * with a conditional `accepted → working` that carries its own owner token and a lease; another
 * delivery of the same hand-off finds the lease held and runs nothing. A worker that dies mid-run
 * holds the task only until its lease is over: the queue's redelivery then takes it over.
 */

let db: LocalDynamoDb;
const TABLE = 'lease-tasks';
beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, TABLE, 'task_id', 'expires_at');
});
afterAll(() => db.close());

const clock = manualClock();
let n = 0;
const newId = () => `task-lease-${(n += 1)}`;
const record = recordsOn(clock, 600);

/** Two stores over one backing: two Lambda workers' own clients over the table, or one process's memory. */
const backings: Array<[string, () => [TaskStore, TaskStore]]> = [
  ['DynamoDbTaskStore (dynalite)', () => [new DynamoDbTaskStore({ client: db.client, tableName: TABLE, clock }), new DynamoDbTaskStore({ client: db.client, tableName: TABLE, clock })]],
  [
    'MemoryTaskStore',
    () => {
      const store = new MemoryTaskStore({ clock });
      return [store, store];
    },
  ],
];

type Line = { level: string; message: string; extra: Record<string, unknown> };
function recordingLog(): Log & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (message: string, ...extra: LogExtra[]) =>
      void lines.push({ level, message, extra: Object.assign({}, ...extra) as Record<string, unknown> });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** An executor that counts its runs and answers only when the test lets it. */
function gatedExecutor(answer: string): Executor & { runs: number; release(): void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const executor = {
    name: 'gated',
    runs: 0,
    release: () => open(),
    async execute(): Promise<ExecutorOutput> {
      executor.runs += 1;
      await gate;
      return { response_text: answer };
    },
  };
  return executor;
}

describe.each(backings)('%s: take', (_name, makeStores) => {
  it('takes an accepted task once: the lease and owner are kept, a second take is refused while the lease lasts', async () => {
    const [store, other] = makeStores();
    const taskId = newId();
    await store.create(record(taskId));
    const until = clock.now() + 60_000;

    const taken = await store.take(taskId, { owner: 'worker-a', until });
    const again = await other.take(taskId, { owner: 'worker-b', until });

    expect(taken).toMatchObject({ task_id: taskId, status: 'working', lease: { owner: 'worker-a', until } });
    expect(again).toBeUndefined();
    expect(await other.get(taskId)).toMatchObject({ status: 'working', lease: { owner: 'worker-a', until } });
  });

  it('a working task whose lease is over is taken over; the old holder can then neither stream into it nor settle it', async () => {
    const [store, other] = makeStores();
    const taskId = newId();
    await store.create(record(taskId));
    await store.take(taskId, { owner: 'worker-dead', until: clock.now() + 1000 });
    clock.advance(1000);

    const takenOver = await other.take(taskId, { owner: 'worker-new', until: clock.now() + 60_000 });
    const staleText = await store.transition(taskId, ['working'], { status: 'working', partial: { text: 'stale', length: 5 }, owner: 'worker-dead' });
    const staleSettle = await store.transition(taskId, ['working'], { status: 'success', result: { status: 'success', response_text: 'stale' }, owner: 'worker-dead' });
    const settled = await other.transition(taskId, ['working'], { status: 'success', result: { status: 'success', response_text: 'fresh' }, owner: 'worker-new' });

    expect(takenOver).toMatchObject({ status: 'working', lease: { owner: 'worker-new' } });
    expect(staleText).toBeUndefined();
    expect(staleSettle).toBeUndefined();
    expect(settled).toMatchObject({ status: 'success', result: { response_text: 'fresh' } });
  });

  it('a working task with no lease (written before leases) can be taken; an ended or unknown one cannot', async () => {
    const [store] = makeStores();
    const legacy = newId();
    const ended = newId();
    await store.create(record(legacy, { status: 'working' }));
    await store.create(record(ended, { status: 'success', result: { status: 'success', response_text: 'done' } }));
    const lease = { owner: 'worker-a', until: clock.now() + 60_000 };

    expect(await store.take(legacy, lease)).toMatchObject({ status: 'working', lease });
    expect(await store.take(ended, lease)).toBeUndefined();
    expect(await store.take('task-never', lease)).toBeUndefined();
    expect((await store.get(ended))?.status).toBe('success');
  });

  it('a task that streams starts with empty partial text, and keeps the text an earlier holder wrote', async () => {
    const [store] = makeStores();
    const fresh = newId();
    const streamedBefore = newId();
    await store.create(record(fresh));
    await store.create(record(streamedBefore));
    await store.take(streamedBefore, { owner: 'worker-dead', until: clock.now() });
    await store.transition(streamedBefore, ['working'], { status: 'working', partial: { text: 'Hello', length: 5 }, owner: 'worker-dead' });

    const first = await store.take(fresh, { owner: 'worker-a', until: clock.now() + 60_000 }, true);
    const second = await store.take(streamedBefore, { owner: 'worker-a', until: clock.now() + 60_000 }, true);

    expect(first?.partial).toEqual({ text: '', length: 0 });
    expect(second?.partial).toEqual({ text: 'Hello', length: 5 });
  });
});

describe.each(backings)('%s: one hand-off, two deliveries', (_name, makeStores) => {
  const TIMEOUT_MS = 30_000;

  /** A function URL front that hands off every task past 20 ms, and two workers, each with its own store, executor and log. */
  function deployment(executors: [Executor, Executor]) {
    const [frontStore, otherStore] = makeStores();
    const bodies: string[] = [];
    const handoff: TaskHandoff = async (task) => void bodies.push(await handoffMessageBody({ store: frontStore }, task));
    const base = { syncBudgetMs: 20, taskTimeoutMs: TIMEOUT_MS, ttlSeconds: 600, clock };
    const front = new TaskService({ ...base, store: frontStore, log: recordingLog(), executor: new EchoExecutor(), handoff });
    const workers = ([frontStore, otherStore] as const).map((store, i) => {
      const log = recordingLog();
      return { service: new TaskService({ ...base, store, log, executor: executors[i]! }), store, log };
    });
    return { front, bodies, workers };
  }

  const params: ExecuteTaskParams = { text: 'think hard #sleep=200', channel: 'C1' };

  it('delivered to two workers at once, it runs the executor once; the other skips with a log line and runs nothing', async () => {
    const a = gatedExecutor('answer of a');
    const b = gatedExecutor('answer of b');
    const { front, bodies, workers } = deployment([a, b]);
    const accepted = (await front.executeTask(params, `twice-${_name}`)) as { status: string; task_id: string };
    expect(accepted.status).toBe('accepted');
    expect(bodies).toHaveLength(1);

    // Act: both deliveries of the one message run at once; the executors answer once both have started.
    const deliveries = [runHandoffMessage(workers[0]!, bodies[0]!), runHandoffMessage(workers[1]!, bodies[0]!)];
    const over = [false, false];
    deliveries.forEach((delivery, i) => delivery.then(() => (over[i] = true), () => (over[i] = true)));
    // One delivery is over (it skipped) while the other still waits on its executor, or both executors run.
    await eventually(() => (over.some(Boolean) || a.runs + b.runs === 2 ? true : undefined), 3000, 5);
    const overBeforeRelease = [...over];
    a.release();
    b.release();
    const settled = await Promise.allSettled(deliveries);

    // Assess
    expect(a.runs + b.runs).toBe(1);
    const ran = a.runs === 1 ? 0 : 1;
    expect(overBeforeRelease).toEqual(ran === 0 ? [false, true] : [true, false]);
    expect(settled[ran]!.status).toBe('fulfilled');
    expect(settled[1 - ran]).toMatchObject({ status: 'rejected', reason: expect.any(HandoffHeldError) });
    expect(workers[1 - ran]!.log.lines).toContainEqual(
      expect.objectContaining({ level: 'info', message: expect.stringMatching(/held by another worker/), extra: expect.objectContaining({ task_id: accepted.task_id }) }),
    );
    expect(await front.getTaskResult(accepted.task_id)).toEqual({ status: 'success', response_text: ran === 0 ? 'answer of a' : 'answer of b' });
    // A later redelivery of the message finds the task done: it runs nothing and is taken off the queue.
    await expect(runHandoffMessage(workers[1 - ran]!, bodies[0]!)).resolves.toBeUndefined();
    expect(a.runs + b.runs).toBe(1);
  });

  it('a worker that dies mid-run holds the task until its lease is over; the redelivery then runs it, and the dead one cannot overwrite the answer', async () => {
    const dead = gatedExecutor('answer of the dead worker');
    const next = gatedExecutor('answer of the redelivery');
    next.release();
    const { front, bodies, workers } = deployment([dead, next]);
    const accepted = (await front.executeTask(params, `dies-${_name}`)) as { status: string; task_id: string };
    const stuck = runHandoffMessage(workers[0]!, bodies[0]!);
    await eventually(async () => ((await workers[1]!.store.get(accepted.task_id))?.lease ? true : undefined), 2000, 5);

    // A redelivery while the lease lasts is left for later: nothing runs.
    await expect(runHandoffMessage(workers[1]!, bodies[0]!)).rejects.toBeInstanceOf(HandoffHeldError);
    expect(next.runs).toBe(0);
    expect(await front.getTaskResult(accepted.task_id)).toEqual({ status: 'working', task_id: accepted.task_id });

    // The lease is the task timeout plus a minute; once it is over the next delivery takes the task over.
    clock.advance(TIMEOUT_MS + 60_000);
    await runHandoffMessage(workers[1]!, bodies[0]!);
    expect(next.runs).toBe(1);
    expect(await front.getTaskResult(accepted.task_id)).toEqual({ status: 'success', response_text: 'answer of the redelivery' });

    // The first worker was only slow after all: its late answer is dropped.
    dead.release();
    await stuck;
    expect(await front.getTaskResult(accepted.task_id)).toEqual({ status: 'success', response_text: 'answer of the redelivery' });
  });
});
