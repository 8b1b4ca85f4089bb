import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../src/contract';
import type { Executor } from '../../src/execution/executors/executor';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { DynamoDbTaskStore } from '../../src/execution/stores/dynamodb-task-store';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import { TaskService } from '../../src/execution/task-service';
import { createLogger } from '../../src/observability/logger';
import { ExecuteTaskProtocol } from '../../src/protocols/execute-task';
import { createTable, startLocalDynamoDb } from '../support/dynalite';
import { eventually, post } from '../support/http';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { echoSuccess } from '../support/echo-usage';

/**
 * The execution runtime's caps, each driven over loopback HTTP to one past its limit: the batch
 * length, the tasks running at once, and a bounded task store full of pending tasks.
 */

async function rpc(target: RunningRuntime, body: unknown) {
  const response = await post(target.invocationsUrl, JSON.stringify(body));
  return { status: response.status, body: response.text ? JSON.parse(response.text) : undefined };
}

const call = (method: string, params: unknown, id: string | number | null) => ({ jsonrpc: '2.0', method, params, id });

/** The echo executor, counting how often it was asked to run. */
function countingEcho(): Executor & { runs: number } {
  const echo = new EchoExecutor();
  const counting = {
    name: 'counting-echo',
    runs: 0,
    execute: (...args: Parameters<Executor['execute']>) => {
      counting.runs += 1;
      return echo.execute(...args);
    },
  };
  return counting;
}

const batchOf = (length: number, prefix: string) => Array.from({ length }, (_, i) => call('execute_task', { text: `member ${i}` }, `${prefix}-${i}`));

describe('MAX_BATCH_LENGTH', () => {
  it('defaults to 50: a batch of 50 is answered member by member, one of 51 is refused whole', async () => {
    const executor = countingEcho();
    const target = await startExecutionRuntime({ SYNC_BUDGET_MS: '2000' }, { executor });
    try {
      const full = await rpc(target, batchOf(50, 'b50'));
      expect(full.body).toHaveLength(50);
      expect(executor.runs).toBe(50);

      const over = await rpc(target, batchOf(51, 'b51'));
      expect(over.status).toBe(200);
      expect(over.body).toEqual({
        jsonrpc: '2.0',
        error: { code: ErrorCode.OverCapacity, message: expect.stringMatching(/51 requests, at most 50/), data: { retryable: false, limit: 'batch_length', max: 50 } },
        id: null,
      });
      // None of its members ran.
      expect(executor.runs).toBe(50);
    } finally {
      await target.close();
    }
  });

  it('is configurable, and counts notifications and invalid members too', async () => {
    const executor = countingEcho();
    const target = await startExecutionRuntime({ SYNC_BUDGET_MS: '2000', MAX_BATCH_LENGTH: '3' }, { executor });
    try {
      const atCap = await rpc(target, [call('execute_task', { text: 'a' }, 'c-1'), { jsonrpc: '2.0', method: 'execute_task', params: { text: 'n' } }, 1]);
      expect(atCap.body).toHaveLength(2);
      const overCap = await rpc(target, [call('execute_task', { text: 'a' }, 'c-2'), { jsonrpc: '2.0', method: 'execute_task', params: { text: 'n' } }, 1, 2]);
      expect(Array.isArray(overCap.body)).toBe(false);
      expect(overCap.body.error).toMatchObject({ code: ErrorCode.OverCapacity, data: { retryable: false, max: 3 } });
      expect(executor.runs).toBe(2);
      // A single request is no batch: the cap does not apply to it.
      expect((await rpc(target, call('execute_task', { text: 'single' }, 'c-3'))).body.result.status).toBe('success');
    } finally {
      await target.close();
    }
  });
});

describe('MAX_CONCURRENT_TASKS', () => {
  const N = 3;
  let target: RunningRuntime;
  beforeAll(async () => {
    target = await startExecutionRuntime({ SYNC_BUDGET_MS: '50', MAX_CONCURRENT_TASKS: String(N) });
  });
  afterAll(() => target.close());

  it(`refuses the ${N + 1}th task while ${N} sleep, retryably, and takes it once one ends`, async () => {
    const sleepers = await Promise.all(Array.from({ length: N }, (_, i) => rpc(target, call('execute_task', { text: `sleeper ${i} #sleep=600` }, `sleep-${i}`))));
    for (const sleeper of sleepers) expect(sleeper.body.result.status).toBe('accepted');

    const refused = await rpc(target, call('execute_task', { text: 'one too many' }, 'extra-1'));
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({
      jsonrpc: '2.0',
      error: { code: ErrorCode.OverCapacity, message: expect.stringMatching(/3 tasks are running/), data: { retryable: true, limit: 'concurrent_tasks', max: N } },
      id: 'extra-1',
    });

    // At capacity a repeated id still learns where its task stands, and polls still answer.
    const repeat = await rpc(target, call('execute_task', { text: 'sleeper 0 #sleep=600' }, 'sleep-0'));
    expect(repeat.body.result).toEqual(sleepers[0]!.body.result);
    const polled = await rpc(target, call('get_task_result', { task_id: sleepers[1]!.body.result.task_id }, 'poll-1'));
    expect(['accepted', 'working']).toContain(polled.body.result.status);

    // The refused request, sent again with its id once the sleepers are done, runs.
    const retried = await eventually(async () => {
      const again = await rpc(target, call('execute_task', { text: 'one too many' }, 'extra-1'));
      return again.body.result ?? undefined;
    }, 5000, 50);
    expect(retried).toEqual(echoSuccess('one too many'));
  });

  it(`lets exactly ${N} of ${N + 1} simultaneous requests in`, async () => {
    const answers = await Promise.all(Array.from({ length: N + 1 }, (_, i) => rpc(target, call('execute_task', { text: `burst ${i} #sleep=400` }, `burst-${i}`))));
    const accepted = answers.filter((answer) => answer.body.result?.status === 'accepted');
    const refused = answers.filter((answer) => answer.body.error?.code === ErrorCode.OverCapacity);
    expect([accepted.length, refused.length]).toEqual([N, 1]);
    await eventually(async () => ((await rpc(target, call('execute_task', { text: 'after the burst' }, randomUUID()))).body.result ? true : undefined), 5000, 50);
  });

  it('a cancelled task frees its slot', async () => {
    const sleepers = await Promise.all(Array.from({ length: N }, (_, i) => rpc(target, call('execute_task', { text: `long ${i} #sleep=5000` }, `long-${i}`))));
    expect((await rpc(target, call('execute_task', { text: 'waiting' }, 'wait-1'))).body.error.code).toBe(ErrorCode.OverCapacity);
    for (const sleeper of sleepers) await rpc(target, call('cancel_task', { task_id: sleeper.body.result.task_id }, randomUUID()));
    const answer = await eventually(async () => (await rpc(target, call('execute_task', { text: 'waiting' }, 'wait-1'))).body.result, 2000);
    expect(answer).toEqual(echoSuccess('waiting'));
  });

  it('reaches the verification zone as a retryable `busy` failure (ExecuteTaskProtocol over HTTP)', async () => {
    const sleepers = await Promise.all(Array.from({ length: N }, (_, i) => rpc(target, call('execute_task', { text: `vz ${i} #sleep=300` }, `vz-${i}`))));
    expect(sleepers.every((s) => s.body.result?.status === 'accepted')).toBe(true);
    const transport = httpsTransport({ url: target.invocationsUrl, maxAttempts: 1 });
    const requestId = randomUUID();
    const outcome = await new ExecuteTaskProtocol().start({ requestId, params: { text: 'over the top' } }, { transport, sessionKey: requestId, correlationId: requestId });
    expect(outcome).toMatchObject({ kind: 'failure', category: 'busy', code: ErrorCode.OverCapacity, retryable: true });
    await eventually(async () => ((await rpc(target, call('execute_task', { text: 'drained' }, randomUUID()))).body.result ? true : undefined), 5000, 50);
  });
});

describe('MAX_CONCURRENT_TASKS with store I/O between the check and the start', () => {
  it('of N+1 calls made at once over a DynamoDB store (dynalite), exactly N start', async () => {
    const db = await startLocalDynamoDb();
    try {
      await createTable(db.client, 'cap-tasks', 'task_id', 'expires_at');
      const N = 4;
      const service = new TaskService({
        store: new DynamoDbTaskStore({ client: db.client, tableName: 'cap-tasks' }),
        executor: new EchoExecutor(),
        log: createLogger('test'),
        syncBudgetMs: 20,
        taskTimeoutMs: 5000,
        ttlSeconds: 600,
        maxConcurrentTasks: N,
      });
      const settled = await Promise.allSettled(Array.from({ length: N + 1 }, (_, i) => service.executeTask({ text: `at once ${i} #sleep=300` }, `once-${i}`)));
      expect(settled.filter((s) => s.status === 'fulfilled' && s.value.status === 'accepted')).toHaveLength(N);
      expect(settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason)).toEqual([
        expect.objectContaining({ code: ErrorCode.OverCapacity, data: { retryable: true, limit: 'concurrent_tasks', max: N } }),
      ]);
      await eventually(() => (service.busy ? undefined : true), 5000, 20);
    } finally {
      await db.close();
    }
  });
});

describe('a bounded memory task store full of pending tasks', () => {
  it('refuses the next task with -32004 and keeps every pending one; a finished task makes room', async () => {
    const target = await startExecutionRuntime({ SYNC_BUDGET_MS: '30' }, { store: new MemoryTaskStore({ maxRecords: 2 }) });
    try {
      const first = await rpc(target, call('execute_task', { text: 'first #sleep=300' }, 'p-1'));
      const second = await rpc(target, call('execute_task', { text: 'second #sleep=300' }, 'p-2'));
      const refused = await rpc(target, call('execute_task', { text: 'third' }, 'p-3'));
      expect(refused.body.error).toEqual({ code: ErrorCode.OverCapacity, message: expect.stringMatching(/2 pending tasks/), data: { retryable: true, limit: 'task_store', max: 2 } });

      // Both pending tasks survived the pressure and finish.
      for (const [started, text] of [[first, 'first #sleep=300'], [second, 'second #sleep=300']] as const) {
        const done = await eventually(async () => {
          const res = await rpc(target, call('get_task_result', { task_id: started.body.result.task_id }, randomUUID()));
          return res.body.result?.status === 'success' ? res.body.result : undefined;
        });
        expect(done).toEqual(echoSuccess(text));
      }
      // Now the oldest finished task gives way.
      expect((await rpc(target, call('execute_task', { text: 'third' }, 'p-3'))).body.result).toEqual(echoSuccess('third'));
      expect((await rpc(target, call('get_task_result', { task_id: first.body.result.task_id }, randomUUID()))).body.error.code).toBe(ErrorCode.TaskNotFound);
      expect((await rpc(target, call('get_task_result', { task_id: second.body.result.task_id }, randomUUID()))).body.result.status).toBe('success');
    } finally {
      await target.close();
    }
  });
});
