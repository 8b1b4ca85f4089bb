import { request as httpRequest } from 'node:http';
import { ResponseSchema } from '../../src/contract';
import type { Executor } from '../../src/execution/executors/executor';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { RpcError } from '../../src/execution/rpc-error';
import { eventually, post } from '../support/http';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { echoSuccess } from '../support/echo-usage';

/** Sends one JSON-RPC body and returns the HTTP status and parsed JSON (if any). */
async function rpc(target: RunningRuntime, body: unknown) {
  const response = await post(target.invocationsUrl, typeof body === 'string' ? body : JSON.stringify(body));
  return { status: response.status, body: response.text ? JSON.parse(response.text) : undefined };
}

const call = (method: string, params: unknown, id: string | number | null = 'req-1') => ({ jsonrpc: '2.0', method, params, id });

describe('execution runtime over HTTP: the error table', () => {
  let target: RunningRuntime;
  beforeAll(async () => {
    target = await startExecutionRuntime({ SYNC_BUDGET_MS: '2000', TASK_TIMEOUT_MS: '150' });
  });
  afterAll(() => target.close());

  it('-32700 Parse error, id null, HTTP 200', async () => {
    const res = await rpc(target, '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]');
    expect(res).toEqual({ status: 200, body: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null } });
  });

  it('-32700 for bytes that are not UTF-8', async () => {
    const response = await post(target.invocationsUrl, new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    expect(JSON.parse(response.text).error.code).toBe(-32700);
  });

  it.each([
    ['method is a number', { jsonrpc: '2.0', method: 1, params: 'bar', id: 1 }],
    ['params is a string', { jsonrpc: '2.0', method: 'execute_task', params: 'bar', id: 1 }],
    ['params is null', { jsonrpc: '2.0', method: 'execute_task', params: null, id: 1 }],
    ['id is an object', { jsonrpc: '2.0', method: 'execute_task', params: { text: 'x' }, id: {} }],
    ['id is a boolean', { jsonrpc: '2.0', method: 'execute_task', params: { text: 'x' }, id: true }],
    ['jsonrpc is 1.0', { jsonrpc: '1.0', method: 'execute_task', params: { text: 'x' }, id: 1 }],
    ['the body is a number', 42],
  ])('-32600 Invalid Request with id null when %s', async (_label, body) => {
    const res = await rpc(target, body);
    expect(res).toEqual({ status: 200, body: { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null } });
  });

  it('-32601 Method not found, id echoed; rpc.* methods are never found', async () => {
    expect((await rpc(target, call('foobar', {}, 'abc'))).body).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 'abc' });
    expect((await rpc(target, call('rpc.discover', {}, 5))).body.error.code).toBe(-32601);
  });

  it('-32602 Invalid params lists every failing field', async () => {
    const res = await rpc(target, call('execute_task', { text: '', channel: 3 }, 9));
    expect(res.body.id).toBe(9);
    expect(res.body.error.code).toBe(-32602);
    expect(res.body.error.data).toEqual(
      expect.arrayContaining([
        { path: 'text', message: expect.any(String) },
        { path: 'channel', message: expect.any(String) },
      ]),
    );
    const byPosition = await rpc(target, call('execute_task', ['hello'], 10));
    expect(byPosition.body.error).toMatchObject({ code: -32602, data: [{ path: '(params)', message: expect.stringMatching(/by name/) }] });
    const missingTaskId = await rpc(target, call('get_task_result', {}, 11));
    expect(missingTaskId.body.error).toMatchObject({ code: -32602, data: [{ path: 'task_id' }] });
  });

  it('-32603 Internal error hides the cause', async () => {
    const res = await rpc(target, call('execute_task', { text: 'please #crash' }, 'c1'));
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 'c1' });
    expect(JSON.stringify(res.body)).not.toMatch(/crashed on purpose|stack|at /);
  });

  it('-32001 Timeout when a task runs past TASK_TIMEOUT_MS', async () => {
    const res = await rpc(target, call('execute_task', { text: 'slow #sleep=2000' }, 't1'));
    expect(res.body.id).toBe('t1');
    expect(res.body.error).toMatchObject({ code: -32001, message: expect.stringMatching(/time limit/) });
  });

  it('-32002 Task not found for an unknown task id', async () => {
    const res = await rpc(target, call('get_task_result', { task_id: 'task-nope' }, 'g1'));
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32002, message: 'Task not found' }, id: 'g1' });
    expect((await rpc(target, call('cancel_task', { task_id: 'task-nope' }, 'g2'))).body.error.code).toBe(-32002);
  });

  it('a server-defined error (-32000..-32099) from the executor reaches the caller', async () => {
    const res = await rpc(target, call('execute_task', { text: '#fail' }, 'f1'));
    expect(res.body.error.code).toBe(-32000);
    expect(res.body.error.message).toMatch(/asked to fail/);
  });
});

describe('execution runtime over HTTP: batches and notifications (JSON-RPC 2.0 spec examples)', () => {
  let target: RunningRuntime;
  beforeAll(async () => {
    target = await startExecutionRuntime({ SYNC_BUDGET_MS: '2000' });
  });
  afterAll(() => target.close());

  it('a notification gets HTTP 204 and no body', async () => {
    const response = await post(target.invocationsUrl, JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'fire and forget' } }));
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
  });

  it('a notification of an unknown method still gets no response', async () => {
    expect((await post(target.invocationsUrl, JSON.stringify({ jsonrpc: '2.0', method: 'foobar' }))).status).toBe(204);
  });

  it('an empty batch is one -32600 error, not an array', async () => {
    expect((await rpc(target, [])).body).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null });
  });

  it('an invalid batch of one gets an array of one error; of three, three errors', async () => {
    expect((await rpc(target, [1])).body).toEqual([{ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null }]);
    const three = (await rpc(target, [1, 2, 3])).body;
    expect(three).toHaveLength(3);
    for (const response of three) expect(response.error.code).toBe(-32600);
  });

  it('a mixed batch answers each non-notification member, in an array', async () => {
    const res = await rpc(target, [
      call('execute_task', { text: 'one' }, '1'),
      { jsonrpc: '2.0', method: 'execute_task', params: { text: 'notify' } },
      call('execute_task', { text: 'two' }, '2'),
      { foo: 'boo' },
      call('foo.get', { name: 'myself' }, '5'),
      call('get_task_result', { task_id: 'unknown' }, '9'),
    ]);
    expect(res.status).toBe(200);
    const byId = new Map<unknown, { result?: { response_text: string }; error?: { code: number } }>(res.body.map((r: { id: unknown }) => [r.id, r]));
    expect(res.body).toHaveLength(5);
    expect(byId.get('1')?.result?.response_text).toBe('echo: one');
    expect(byId.get('2')?.result?.response_text).toBe('echo: two');
    expect(byId.get(null)?.error?.code).toBe(-32600);
    expect(byId.get('5')?.error?.code).toBe(-32601);
    expect(byId.get('9')?.error?.code).toBe(-32002);
    for (const response of res.body) expect(ResponseSchema.safeParse(response).success).toBe(true);
  });

  it('an all-notification batch gets HTTP 204', async () => {
    const response = await post(
      target.invocationsUrl,
      JSON.stringify([
        { jsonrpc: '2.0', method: 'execute_task', params: { text: 'a' } },
        { jsonrpc: '2.0', method: 'execute_task', params: { text: 'b' } },
      ]),
    );
    expect(response.status).toBe(204);
  });

  it('echoes numeric and null ids as given', async () => {
    expect((await rpc(target, call('execute_task', { text: 'n' }, 42))).body.id).toBe(42);
    expect((await rpc(target, call('execute_task', { text: 'n' }, null))).body).toMatchObject({ id: null, result: { status: 'success' } });
  });
});

describe('execution runtime over HTTP: sync, accepted, polling, repeats, cancellation', () => {
  let target: RunningRuntime;
  let runs = 0;
  let lastSignal: AbortSignal | undefined;
  const echo = new EchoExecutor();
  const counting: Executor = {
    name: 'counting-echo',
    execute: (params, context) => {
      runs += 1;
      lastSignal = context.signal;
      return echo.execute(params, context);
    },
  };
  beforeAll(async () => {
    target = await startExecutionRuntime({ SYNC_BUDGET_MS: '100', TASK_TIMEOUT_MS: '5000' }, { executor: counting });
  });
  afterAll(() => target.close());
  beforeEach(() => {
    runs = 0;
  });

  it('answers with the final result when the task finishes within the sync budget', async () => {
    const res = await rpc(target, call('execute_task', { text: 'quick', channel: 'C1' }, 's1'));
    expect(res.body).toEqual({ jsonrpc: '2.0', result: echoSuccess('quick'), id: 's1' });
  });

  it('answers accepted past the budget, then get_task_result moves to success', async () => {
    const accepted = await rpc(target, call('execute_task', { text: 'slow #sleep=400' }, 'a1'));
    expect(accepted.body.result).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/) });
    const taskId = accepted.body.result.task_id;
    const pendingNow = await rpc(target, call('get_task_result', { task_id: taskId }, 'p1'));
    expect(['accepted', 'working']).toContain(pendingNow.body.result.status);
    const done = await eventually(async () => {
      const res = await rpc(target, call('get_task_result', { task_id: taskId }, 'p2'));
      return res.body.result?.status === 'success' ? res.body.result : undefined;
    });
    expect(done).toEqual(echoSuccess('slow #sleep=400'));
  });

  it('a repeated id does not run the executor again, whether done or pending', async () => {
    const first = await rpc(target, call('execute_task', { text: 'once' }, 'dup-1'));
    const second = await rpc(target, call('execute_task', { text: 'once' }, 'dup-1'));
    expect(second.body).toEqual(first.body);
    expect(runs).toBe(1);

    const slowFirst = await rpc(target, call('execute_task', { text: 'slow #sleep=300' }, 'dup-2'));
    const slowSecond = await rpc(target, call('execute_task', { text: 'slow #sleep=300' }, 'dup-2'));
    expect(slowSecond.body.result).toEqual(slowFirst.body.result);
    expect(slowFirst.body.result.status).toBe('accepted');
    expect(runs).toBe(2);
  });

  it('a repeated id of a failed task answers with its error', async () => {
    await rpc(target, call('execute_task', { text: '#fail' }, 'dup-3'));
    const again = await rpc(target, call('execute_task', { text: '#fail' }, 'dup-3'));
    expect(again.body.error.code).toBe(-32000);
    expect(runs).toBe(1);
  });

  it('a repeated id of a task that failed transiently (retryable) runs it again', async () => {
    let attempts = 0;
    const flaky: Executor = {
      name: 'flaky',
      execute: async () => {
        attempts += 1;
        if (attempts === 1) throw new RpcError(-32010, 'Model throttled', { retryable: true });
        return { response_text: 'second time lucky' };
      },
    };
    const own = await startExecutionRuntime({ SYNC_BUDGET_MS: '1000' }, { executor: flaky });
    try {
      expect((await rpc(own, call('execute_task', { text: 'x' }, 'flaky-1'))).body.error.code).toBe(-32010);
      expect((await rpc(own, call('execute_task', { text: 'x' }, 'flaky-1'))).body.result).toEqual({ status: 'success', response_text: 'second time lucky' });
      expect((await rpc(own, call('execute_task', { text: 'x' }, 'flaky-1'))).body.result.response_text).toBe('second time lucky');
      expect(attempts).toBe(2);
    } finally {
      await own.close();
    }
  });

  it('cancel_task stops a pending task: the executor sees its abort, get_task_result answers -32003', async () => {
    const accepted = await rpc(target, call('execute_task', { text: 'long #sleep=3000' }, 'x1'));
    const taskId = accepted.body.result.task_id;
    const cancelled = await rpc(target, call('cancel_task', { task_id: taskId }, 'x2'));
    expect(cancelled.body.result).toEqual({ status: 'cancelled', task_id: taskId });
    expect(lastSignal?.aborted).toBe(true);
    expect((await rpc(target, call('get_task_result', { task_id: taskId }, 'x3'))).body.error).toEqual({ code: -32003, message: 'Task cancelled' });
    expect((await rpc(target, call('cancel_task', { task_id: taskId }, 'x4'))).body.result.status).toBe('cancelled');
  });

  it('cancelling a finished task answers with its final state', async () => {
    const accepted = await rpc(target, call('execute_task', { text: 'short #sleep=150' }, 'y1'));
    const taskId = accepted.body.result.task_id;
    await eventually(async () => ((await rpc(target, call('get_task_result', { task_id: taskId }))).body.result?.status === 'success' ? true : undefined));
    const res = await rpc(target, call('cancel_task', { task_id: taskId }, 'y2'));
    expect(res.body.result).toEqual(echoSuccess('short #sleep=150'));
  });
});

describe('execution runtime over HTTP: the AgentCore host contract', () => {
  let target: RunningRuntime;
  beforeAll(async () => {
    target = await startExecutionRuntime({ SYNC_BUDGET_MS: '20', MAX_BODY_BYTES: '256' });
  });
  afterAll(() => target.close());

  it('GET /ping is Healthy when idle and HealthyBusy while a task runs', async () => {
    const idle = await (await fetch(`${target.baseUrl}/ping`)).json();
    expect(idle).toEqual({ status: 'Healthy', time_of_last_update: expect.any(Number) });
    await rpc(target, call('execute_task', { text: '#sleep=300' }, 'busy-1'));
    const busy = await (await fetch(`${target.baseUrl}/ping`)).json();
    expect(busy.status).toBe('HealthyBusy');
    expect(busy.time_of_last_update).toBeGreaterThanOrEqual(idle.time_of_last_update);
    const back = await eventually(async () => {
      const ping = await (await fetch(`${target.baseUrl}/ping`)).json();
      return ping.status === 'Healthy' ? ping : undefined;
    });
    expect(back.status).toBe('Healthy');
  });

  it('serves the agent card', async () => {
    const card = await (await fetch(`${target.baseUrl}/.well-known/agent-card.json`)).json();
    expect(card).toMatchObject({ protocol: 'execute-task', methods: ['execute_task', 'get_task_result', 'cancel_task', 'resume_task'], executor: 'echo' });
  });

  it('refuses a body over the limit with 413 before parsing it', async () => {
    const big = JSON.stringify(call('execute_task', { text: 'x'.repeat(1000) }));
    expect((await post(target.invocationsUrl, big)).status).toBe(413);
  });

  it('refuses a chunked body (no Content-Length) once it grows past the limit', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(target.invocationsUrl, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 10; i += 1) req.write('x'.repeat(100));
      req.end();
    });
    expect(status).toBe(413);
  });

  it('answers 404 for other paths and 405 (with Allow) for other methods', async () => {
    expect((await fetch(`${target.baseUrl}/nope`)).status).toBe(404);
    const wrongMethod = await fetch(target.invocationsUrl);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect((await fetch(`${target.baseUrl}/ping`, { method: 'POST' })).status).toBe(405);
  });
});
