import { createHash, randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { ErrorCode, type ExecuteTaskParams } from '../../src/contract';
import type { Executor } from '../../src/execution/executors/executor';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { RpcError } from '../../src/execution/rpc-error';
import { DynamoDbTaskStore } from '../../src/execution/stores/dynamodb-task-store';
import { MemoryTaskStore } from '../../src/execution/stores/memory-task-store';
import type { TaskStore } from '../../src/execution/stores/task-store';
import { paramsHashOf } from '../../src/execution/params-fingerprint';
import { TaskService, requestKeyOf } from '../../src/execution/task-service';
import { createLogger } from '../../src/observability/logger';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { eventually, post } from '../support/http';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { echoSuccess, echoUsage } from '../support/echo-usage';

/**
 * A repeated `execute_task` id is the same task only with the same params (in any key order),
 * and a task id cannot be worked out from the request id that started it.
 */

async function rpc(target: RunningRuntime, body: unknown) {
  const response = await post(target.invocationsUrl, JSON.stringify(body));
  return response.text ? JSON.parse(response.text) : undefined;
}
const call = (method: string, params: unknown, id: string | number | null) => ({ jsonrpc: '2.0', method, params, id });

/** The task id the runtime used to derive from a request id: what an attacker would try. */
const derivedTaskId = (requestId: string | number) => `task-${createHash('sha256').update(`${typeof requestId}:${requestId}`).digest('hex').slice(0, 32)}`;

describe('repeated execute_task ids over HTTP', () => {
  let target: RunningRuntime;
  let runs = 0;
  const echo = new EchoExecutor();
  const counting: Executor = { name: 'counting-echo', execute: (params, context) => ((runs += 1), echo.execute(params, context)) };
  beforeAll(async () => {
    target = await startExecutionRuntime({ SYNC_BUDGET_MS: '50' }, { executor: counting });
  });
  afterAll(() => target.close());
  beforeEach(() => {
    runs = 0;
  });

  it('the same params with every key order shuffled are the same task: one run, one answer', async () => {
    const params = { text: 'hello', channel: 'C1', thread_ts: '1.2', attachments: [{ name: 'a.txt', size: 3, mimetype: 'text/plain', data: 'YWJj' }], extra: { b: 1, a: [2, { d: 4, c: 3 }] } };
    const shuffled = { extra: { a: [2, { c: 3, d: 4 }], b: 1 }, attachments: [{ data: 'YWJj', mimetype: 'text/plain', size: 3, name: 'a.txt' }], thread_ts: '1.2', channel: 'C1', text: 'hello' };
    const first = await rpc(target, call('execute_task', params, 'same-1'));
    const second = await rpc(target, call('execute_task', shuffled, 'same-1'));
    expect(first.result).toEqual({ status: 'success', response_text: expect.stringMatching(/^echo: hello\nattachment: a\.txt text\/plain 3 bytes sha256=/), usage: { input_tokens: 1, output_tokens: 8, model: 'echo' } });
    expect(second).toEqual(first);
    expect(runs).toBe(1);
  });

  it('a retry whose thread context and files were read afresh is the same task: one run, the first answer', async () => {
    const first = await rpc(target, call('execute_task', { text: 'ctx', user_id: 'U1', messages: [{ role: 'user', text: 'earlier', user_id: 'U1', ts: '1.1' }] }, 'ctx-1'));
    const retry = await rpc(
      target,
      call('execute_task', {
        text: 'ctx',
        user_id: 'U1',
        messages: [{ role: 'user', text: 'earlier (edited)', user_id: 'U1', ts: '1.1' }, { role: 'assistant', text: 'a reply posted meanwhile', ts: '1.2' }],
        attachments: [{ name: 'a.txt', mimetype: 'text/plain', size: 3, data: 'YWJj' }],
      }, 'ctx-1'),
    );
    // The first run's answer, usage included: its thread's one word counted as input, not the retry's.
    expect(first.result).toEqual({ ...echoSuccess('ctx'), usage: echoUsage('ctx', 'echo: ctx', ['earlier']) });
    expect(retry).toEqual(first);
    expect(runs).toBe(1);
  });

  it('a rotated bot_token does not make a retry another task', async () => {
    const first = await rpc(target, call('execute_task', { text: 'tok', bot_token: 'xoxb-old' }, 'tok-1'));
    const second = await rpc(target, call('execute_task', { bot_token: 'xoxb-new', text: 'tok' }, 'tok-1'));
    expect(second).toEqual(first);
    expect(runs).toBe(1);
  });

  it.each([
    ['another text', { text: 'goodbye', channel: 'C1' }],
    ['another channel', { text: 'hello', channel: 'C2' }],
    ['a param more', { text: 'hello', channel: 'C1', user_id: 'U1' }],
    ['a param less', { text: 'hello' }],
    ['an array in another order', { text: 'hello', channel: 'C1', labels: ['b', 'a'] }],
  ])('the same id with %s is refused with -32005, whether the task is done or pending', async (_label, other) => {
    const base = { text: 'hello', channel: 'C1', ...(_label === 'an array in another order' ? { labels: ['a', 'b'] } : {}) };
    const doneId = randomUUID();
    const done = await rpc(target, call('execute_task', base, doneId));
    expect(done.result.status).toBe('success');
    const refused = await rpc(target, call('execute_task', other, doneId));
    expect(refused).toEqual({
      jsonrpc: '2.0',
      error: { code: ErrorCode.RequestIdConflict, message: expect.stringMatching(/different params/), data: { retryable: false } },
      id: doneId,
    });

    const pendingId = randomUUID();
    const pending = await rpc(target, call('execute_task', { ...base, text: `${base.text} #sleep=300` }, pendingId));
    expect(pending.result.status).toBe('accepted');
    expect((await rpc(target, call('execute_task', { ...other, text: `${other.text} #sleep=300` }, pendingId))).error.code).toBe(ErrorCode.RequestIdConflict);
    expect(runs).toBe(2);
    // The refusal leaves the task alone: it finishes with its own params.
    const result = await eventually(async () => {
      const polled = await rpc(target, call('get_task_result', { task_id: pending.result.task_id }, randomUUID()));
      return polled.result?.status === 'success' ? polled.result : undefined;
    });
    expect(result.response_text).toBe(`echo: ${base.text} #sleep=300`);
  });

  it('a transiently failed task is run again only for the same params', async () => {
    let attempts = 0;
    const flaky: Executor = {
      name: 'flaky',
      execute: async (params) => {
        attempts += 1;
        if (attempts === 1) throw new RpcError(ErrorCode.ModelThrottled, 'Model throttled', { retryable: true });
        return { response_text: `ok: ${params.text}` };
      },
    };
    const own = await startExecutionRuntime({ SYNC_BUDGET_MS: '1000' }, { executor: flaky });
    try {
      expect((await rpc(own, call('execute_task', { text: 'x', channel: 'C1' }, 'flaky-1'))).error.code).toBe(ErrorCode.ModelThrottled);
      expect((await rpc(own, call('execute_task', { text: 'y', channel: 'C1' }, 'flaky-1'))).error.code).toBe(ErrorCode.RequestIdConflict);
      expect(attempts).toBe(1);
      expect((await rpc(own, call('execute_task', { channel: 'C1', text: 'x' }, 'flaky-1'))).result).toEqual({ status: 'success', response_text: 'ok: x' });
      expect(attempts).toBe(2);
    } finally {
      await own.close();
    }
  });
});

describe('task ids are not derived from request ids', () => {
  it('the same request id gets unrelated random task ids from two runtimes, and the old derivation finds nothing', async () => {
    const one = await startExecutionRuntime({ SYNC_BUDGET_MS: '20' });
    const two = await startExecutionRuntime({ SYNC_BUDGET_MS: '20' });
    try {
      const requestId = 'guessable-request-id';
      const a = (await rpc(one, call('execute_task', { text: 'slow #sleep=5000' }, requestId))).result.task_id;
      const b = (await rpc(two, call('execute_task', { text: 'slow #sleep=5000' }, requestId))).result.task_id;
      expect(a).toMatch(/^task-[0-9a-f]{32}$/);
      expect(b).toMatch(/^task-[0-9a-f]{32}$/);
      expect(a).not.toBe(b);
      expect(a).not.toBe(derivedTaskId(requestId));
      expect(a).not.toContain(createHash('sha256').update(`string:${requestId}`).digest('hex').slice(0, 32));
      // Knowing the request id is not enough to poll or cancel its task ...
      for (const guess of [derivedTaskId(requestId), `request-${requestKeyOf(requestId)}`, requestKeyOf(requestId), requestId]) {
        expect((await rpc(one, call('get_task_result', { task_id: guess }, 'g'))).error.code).toBe(ErrorCode.TaskNotFound);
        expect((await rpc(one, call('cancel_task', { task_id: guess }, 'c'))).error.code).toBe(ErrorCode.TaskNotFound);
      }
      // ... while the request id itself still finds the task, and the task id still polls it.
      expect((await rpc(one, call('execute_task', { text: 'slow #sleep=5000' }, requestId))).result).toEqual({ status: 'accepted', task_id: a });
      expect((await rpc(one, call('get_task_result', { task_id: a }, 'p'))).result.task_id).toBe(a);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('numeric and string forms of an id stay separate tasks', async () => {
    const target = await startExecutionRuntime({ SYNC_BUDGET_MS: '20' });
    try {
      const asNumber = await rpc(target, call('execute_task', { text: 'n #sleep=100' }, 7));
      const asString = await rpc(target, call('execute_task', { text: 's #sleep=100' }, '7'));
      expect(asNumber.result.task_id).not.toBe(asString.result.task_id);
    } finally {
      await target.close();
    }
  });

  it('two hundred task ids are all distinct and all 128-bit hex', async () => {
    const target = await startExecutionRuntime({ SYNC_BUDGET_MS: '0' });
    try {
      const ids = new Set<string>();
      for (let i = 0; i < 200; i += 1) {
        const answer = (await target.runtime.service.executeTask({ text: '#sleep=1' }, `r-${i}`)) as { task_id: string };
        expect(answer.task_id).toMatch(/^task-[0-9a-f]{32}$/);
        ids.add(answer.task_id);
      }
      expect(ids.size).toBe(200);
    } finally {
      await target.close();
    }
  });
});

describe('paramsHashOf', () => {
  const file = (name: string, bytes: string) => ({ name, mimetype: 'text/plain', size: Buffer.byteLength(bytes), data: Buffer.from(bytes).toString('base64') });
  const thread: ExecuteTaskParams['messages'] = [
    { role: 'user', text: 'first', user_id: 'U1', ts: '1.1' },
    { role: 'assistant', text: 'answer', ts: '1.2' },
  ];

  it('ignores key order and bot_token, and sees every other difference', () => {
    const base: ExecuteTaskParams = { text: 'a', channel: 'C', extra: [{ name: 'x', size: 1 }] };
    expect(paramsHashOf({ extra: [{ size: 1, name: 'x' }], channel: 'C', text: 'a' })).toBe(paramsHashOf(base));
    expect(paramsHashOf({ ...base, bot_token: 'xoxb-1' })).toBe(paramsHashOf(base));
    expect(paramsHashOf({ ...base, text: 'b' })).not.toBe(paramsHashOf(base));
    expect(paramsHashOf({ ...base, extra: [{ name: 'x', size: 2 }] })).not.toBe(paramsHashOf(base));
    expect(paramsHashOf({ text: 'a', channel: 'C' })).not.toBe(paramsHashOf(base));
    // Values that JSON keeps apart stay apart.
    expect(paramsHashOf({ text: 'a', n: 1 })).not.toBe(paramsHashOf({ text: 'a', n: '1' }));
    expect(paramsHashOf({ text: 'a', n: null })).not.toBe(paramsHashOf({ text: 'a' }));
    expect(paramsHashOf(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('leaves out the thread context and the attachments: the same text with another context is the same task', () => {
    const base: ExecuteTaskParams = { text: 'summarize', channel: 'C', thread_ts: '1.1', user_id: 'U1', messages: thread, attachments: [file('a.txt', 'abc')] };
    const hash = paramsHashOf(base);
    expect(paramsHashOf({ ...base, messages: [...thread!, { role: 'user', text: 'posted meanwhile', user_id: 'U2', ts: '1.3' }] })).toBe(hash);
    expect(paramsHashOf({ ...base, messages: [] })).toBe(hash);
    expect(paramsHashOf({ ...base, attachments: [file('a.txt', 'abd')] })).toBe(hash);
    expect(paramsHashOf({ ...base, attachments: [file('b.txt', 'x'.repeat(100_000)), file('a.txt', 'abc')] })).toBe(hash);
    const { messages: _m, attachments: _a, ...bare } = base;
    expect(paramsHashOf(bare)).toBe(hash);
    // Everything else still counts.
    expect(paramsHashOf({ ...base, text: 'summarize again' })).not.toBe(hash);
    expect(paramsHashOf({ ...base, text: 'summarize again', messages: thread, attachments: [file('a.txt', 'abc')] })).not.toBe(hash);
    expect(paramsHashOf({ ...base, user_id: 'U2' })).not.toBe(hash);
  });
});

describe('TaskService: repeated ids across two processes, per store', () => {
  let db: LocalDynamoDb;
  beforeAll(async () => {
    db = await startLocalDynamoDb();
    await createTable(db.client, 'repeat-tasks', 'task_id', 'expires_at');
  });
  afterAll(() => db.close());

  const options = { executor: new EchoExecutor(), log: createLogger('test'), syncBudgetMs: 20, taskTimeoutMs: 5000, ttlSeconds: 600 };
  const memory = new MemoryTaskStore();
  const stores: Array<[string, () => TaskStore]> = [
    ['DynamoDbTaskStore (dynalite)', () => new DynamoDbTaskStore({ client: db.client, tableName: 'repeat-tasks' })],
    ['MemoryTaskStore (one store, two services)', () => memory],
  ];

  it.each(stores)('%s: same params find the task from the other process; other params are refused', async (_name, store) => {
    const first = new TaskService({ ...options, store: store() });
    const second = new TaskService({ ...options, store: store() });
    const id = randomUUID();
    const accepted = await first.executeTask({ text: 'shared #sleep=100', channel: 'C1', thread_ts: '1.1' }, id);
    expect(accepted).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-[0-9a-f]{32}$/) });
    expect(await second.executeTask({ thread_ts: '1.1', channel: 'C1', text: 'shared #sleep=100' }, id)).toEqual(accepted);
    await expect(second.executeTask({ text: 'shared #sleep=100', channel: 'C2', thread_ts: '1.1' }, id)).rejects.toMatchObject({ code: ErrorCode.RequestIdConflict });
    const taskId = (accepted as { task_id: string }).task_id;
    const done = await eventually(async () => {
      const result = await second.getTaskResult(taskId);
      return result.status === 'success' ? result : undefined;
    });
    expect(done).toEqual(echoSuccess('shared #sleep=100'));
    expect(await second.executeTask({ channel: 'C1', text: 'shared #sleep=100', thread_ts: '1.1' }, id)).toEqual(done);
  });

  it('DynamoDB keeps the params hash and never the text', async () => {
    // An executor whose answer does not repeat the question: the answer is kept (it is what polls return), the question must not be.
    const executor: Executor = { name: 'terse', execute: async () => ({ response_text: 'done' }) };
    const service = new TaskService({ ...options, syncBudgetMs: 5000, executor, store: new DynamoDbTaskStore({ client: db.client, tableName: 'repeat-tasks' }) });
    const secret = `a private message ${randomUUID()}`;
    const params = { text: secret, channel: 'C9', user_id: 'U9', bot_token: 'xoxb-secret-token' };
    expect(await service.executeTask(params, 'privacy-1')).toEqual({ status: 'success', response_text: 'done' });
    const { Items = [] } = await db.client.send(new ScanCommand({ TableName: 'repeat-tasks' }));
    const stored = JSON.stringify(Items);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain('xoxb-secret-token');
    expect(stored).not.toContain('privacy-1');
    expect(stored).toContain(paramsHashOf(params));
  });
});
