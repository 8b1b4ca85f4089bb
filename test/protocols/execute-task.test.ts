import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, errorResponse, successResponse, type ExecuteTaskParams } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import type { Executor, ExecutorContext, ExecutorOutput } from '../../src/execution/executors/executor';
import { RpcError } from '../../src/execution/rpc-error';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { ExecuteTaskProtocol } from '../../src/protocols/execute-task';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { CancelError, ProtocolFailure } from '../../src/protocols/json-rpc-exchange';
import type { FailureCategory, Outcome, PendingHandle } from '../../src/protocols/outcome';
import { InProcessTransport } from '../../src/transport/in-process';
import { TransportError, type Transport } from '../../src/transport/transport';
import { startExecutionRuntime } from '../support/execution-runtime';
import { RecordingTransport, callContext, pollUntilSettled } from './support/recording-transport';

/**
 * The echo executor's behaviour (`#sleep=<ms>`, `#fail`, `#crash`) plus the model errors a real
 * Bedrock executor raises, so every contract error comes from the real runtime, not a stub.
 */
class ModelLikeExecutor implements Executor {
  readonly name = 'model-like';
  async execute(params: ExecuteTaskParams, { signal }: ExecutorContext): Promise<ExecutorOutput> {
    const sleepMs = Number(/#sleep=(\d+)/.exec(params.text)?.[1] ?? 0);
    if (sleepMs) await sleep(sleepMs, undefined, { signal });
    if (params.text.includes('#throttle-final')) throw new RpcError(ErrorCode.ModelThrottled, 'quota gone for the month', { retryable: false });
    if (params.text.includes('#throttle')) throw new RpcError(ErrorCode.ModelThrottled, 'The model is busy; try again shortly', { retryable: true });
    if (params.text.includes('#unavailable')) throw new RpcError(ErrorCode.ModelUnavailable, 'The model service is unavailable', { retryable: true });
    if (params.text.includes('#rejected')) throw new RpcError(ErrorCode.ModelRejected, 'The model rejected the request', { retryable: false });
    if (params.text.includes('#fail')) throw new RpcError(-32000, 'The echo executor was asked to fail');
    if (params.text.includes('#crash')) throw new Error('crashed on purpose');
    if (params.text.includes('#extra')) return { response_text: `echo: ${params.text}`, model_id: 'test-model', usage: { input_tokens: 3, output_tokens: 4, cache_read_tokens: 2, model: 'test-model' } };
    return { response_text: `echo: ${params.text}` };
  }
}

const RUNTIME_ENV = { SYNC_BUDGET_MS: '50', TASK_TIMEOUT_MS: '400' };

type Wire = { transport: Transport; close(): Promise<void> };

const wires: Array<[string, () => Promise<Wire>]> = [
  [
    'the in-process transport',
    async () => {
      const runtime = createExecutionRuntime({ config: loadExecutionConfig(RUNTIME_ENV), executor: new ModelLikeExecutor() });
      return { transport: new InProcessTransport(runtime.dispatch), close: async () => undefined };
    },
  ],
  [
    'loopback HTTP (createExecutionHttpServer)',
    async () => {
      const running = await startExecutionRuntime(RUNTIME_ENV, { executor: new ModelLikeExecutor() });
      return { transport: httpsTransport({ url: running.invocationsUrl, maxAttempts: 1 }), close: running.close };
    },
  ],
];

describe.each(wires)('ExecuteTaskProtocol against the execution runtime over %s', (_label, startWire) => {
  let wire: Wire;
  let transport: RecordingTransport;
  const protocol = new ExecuteTaskProtocol();

  beforeAll(async () => {
    wire = await startWire();
  });
  afterAll(() => wire.close());
  beforeEach(() => {
    transport = new RecordingTransport(wire.transport);
  });

  const start = (text: string, requestId = randomUUID()) => protocol.start({ requestId, params: { text, channel: 'C1' } }, callContext(transport, requestId));

  it('answers a quick task with its text and usage, and keeps the other result fields as extra', async () => {
    // Act
    const outcome = await start('hello #extra');

    // Assess
    expect(outcome).toEqual({ kind: 'success', text: 'echo: hello #extra', extra: { model_id: 'test-model' }, usage: { input_tokens: 3, output_tokens: 4, cache_read_tokens: 2, model: 'test-model' } });
  });

  it('sends execute_task with the caller request id as JSON-RPC id and session key', async () => {
    const requestId = randomUUID();

    await start('hi', requestId);

    const { body, options } = transport.last();
    expect(body).toEqual({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'hi', channel: 'C1' }, id: requestId });
    expect(options).toMatchObject({ sessionKey: requestId, correlationId: requestId });
  });

  it('reuses the request id on a retry, so the runtime answers with the same task', async () => {
    const requestId = randomUUID();

    const first = await start('#sleep=300 slow', requestId);
    const retry = await start('#sleep=300 slow', requestId);

    expect(first).toMatchObject({ kind: 'pending', handle: { taskId: expect.any(String) } });
    expect(retry).toEqual(first);
    expect(transport.calls.map((call) => call.body.id)).toEqual([requestId, requestId]);
  });

  it('turns accepted into a pending handle and polls it to success with fresh request ids', async () => {
    const requestId = randomUUID();
    const started = await start('#sleep=150 take your time', requestId);
    expect(started).toEqual({ kind: 'pending', handle: { taskId: expect.stringMatching(/^task-/) }, state: 'accepted' });

    const { outcome, polls } = await pollUntilSettled(protocol, (started as { handle: PendingHandle }).handle, callContext(transport, requestId));

    expect(outcome).toEqual({ kind: 'success', text: 'echo: #sleep=150 take your time', extra: {} });
    const pollIds = transport.calls.slice(1).map((call) => call.body.id);
    expect(pollIds).toHaveLength(polls);
    expect(new Set(pollIds).size).toBe(polls);
    expect(pollIds).not.toContain(requestId);
    expect(transport.calls[1]?.body).toMatchObject({ method: 'get_task_result', params: { task_id: (started as { handle: PendingHandle }).handle.taskId } });
  });

  it.each<[string, string, number, FailureCategory, boolean]>([
    ['a server-defined task failure', '#fail', -32000, 'failed', false],
    ['an unexpected crash (-32603 Internal error)', '#crash', ErrorCode.InternalError, 'failed', false],
    ['model throttling', '#throttle', ErrorCode.ModelThrottled, 'busy', true],
    ['model throttling the runtime marks permanent', '#throttle-final', ErrorCode.ModelThrottled, 'busy', false],
    ['an unavailable model', '#unavailable', ErrorCode.ModelUnavailable, 'unavailable', true],
    ['a model that rejects the request', '#rejected', ErrorCode.ModelRejected, 'rejected', false],
    ['invalid params (empty text)', '', ErrorCode.InvalidParams, 'rejected', false],
  ])('maps %s (text %j) to code %d, category %s, retryable %s', async (_what, text, code, category, retryable) => {
    const outcome = await start(text);

    expect(outcome).toEqual({ kind: 'failure', category, code, message: expect.any(String), retryable });
  });

  it('never retries an error a poll reports: the task finished with it', async () => {
    const started = await start('#sleep=100 #throttle');
    expect(started.kind).toBe('pending');

    const { outcome } = await pollUntilSettled(protocol, (started as { handle: PendingHandle }).handle, callContext(transport, 'poller'));

    expect(outcome).toEqual({ kind: 'failure', category: 'busy', code: ErrorCode.ModelThrottled, message: expect.any(String), retryable: false });
  });

  it('reports a task that ran past its time limit as -32001, not retryable', async () => {
    const started = await start('#sleep=5000 forever');

    const { outcome } = await pollUntilSettled(protocol, (started as { handle: PendingHandle }).handle, callContext(transport, 'poller'));

    expect(outcome).toEqual({ kind: 'failure', category: 'timed-out', code: ErrorCode.Timeout, message: expect.stringContaining('time limit'), retryable: false });
  });

  it('reports a lost or expired task as -32002, not retryable', async () => {
    const outcome = await protocol.poll({ taskId: 'task-that-never-was' }, callContext(transport, 'poller'));

    expect(outcome).toEqual({ kind: 'failure', category: 'failed', code: ErrorCode.TaskNotFound, message: 'Task not found', retryable: false });
  });

  it('cancels a pending task, after which a poll reports -32003', async () => {
    const started = await start('#sleep=2000 long');
    const handle = (started as { handle: PendingHandle }).handle;

    await protocol.cancel(handle, callContext(transport, 'canceller'));
    const outcome = await protocol.poll(handle, callContext(transport, 'poller'));

    expect(transport.calls[1]?.body).toMatchObject({ method: 'cancel_task', params: { task_id: handle.taskId } });
    expect(outcome).toEqual({ kind: 'failure', category: 'cancelled', code: ErrorCode.TaskCancelled, message: 'Task cancelled', retryable: false });
  });

  it('treats cancelling an unknown task as done: nothing runs on', async () => {
    await expect(protocol.cancel({ taskId: 'task-unknown' }, callContext(transport, 'canceller'))).resolves.toBeUndefined();
  });
});

describe('ExecuteTaskProtocol with answers our runtime never gives', () => {
  const protocol = new ExecuteTaskProtocol();
  const requestId = randomUUID();
  /** An InProcessTransport whose "runtime" answers with whatever the test says. */
  const answering = (answer: (request: { id: unknown; method: string }) => string | undefined) =>
    new InProcessTransport(async (body) => answer(JSON.parse(new TextDecoder().decode(body))));
  const start = (transport: Transport) => protocol.start({ requestId, params: { text: 'hi' } }, callContext(transport, requestId));

  it('refuses a response to another request as protocol:id-mismatch, not retryable', async () => {
    const transport = answering(() => JSON.stringify(successResponse('another-request', { status: 'success', response_text: 'somebody else’s answer' })));

    const outcome = await start(transport);

    expect(outcome).toEqual({ kind: 'failure', category: 'failed', code: ProtocolFailure.IdMismatch, message: expect.stringContaining('another-request'), retryable: false });
  });

  it.each([
    ['a body that is not JSON', '<html>502 Bad Gateway</html>'],
    ['JSON that is not a JSON-RPC response', '{"hello": "world"}'],
    ['a batch where one response was expected', JSON.stringify([successResponse(requestId, { status: 'success', response_text: 'x' })])],
    ['a success result without response_text', JSON.stringify(successResponse(requestId, { status: 'success' }))],
    ['a result with an unknown status', JSON.stringify(successResponse(requestId, { status: 'done', response_text: 'x' }))],
    ['an accepted result without task_id', JSON.stringify(successResponse(requestId, { status: 'accepted' }))],
  ])('refuses %s as protocol:malformed, not retryable', async (_what, body) => {
    const outcome = await start(answering(() => body));

    expect(outcome).toMatchObject({ kind: 'failure', category: 'failed', code: ProtocolFailure.Malformed, retryable: false });
  });

  it('refuses an empty response as protocol:empty, not retryable', async () => {
    const outcome = await start(answering(() => undefined));

    expect(outcome).toEqual({ kind: 'failure', category: 'failed', code: ProtocolFailure.Empty, message: expect.any(String), retryable: false });
  });

  it('accepts an error the server could not attribute (id null), e.g. a parse error', async () => {
    const outcome = await start(answering(() => JSON.stringify(errorResponse(null, ErrorCode.ParseError))));

    expect(outcome).toEqual({ kind: 'failure', category: 'failed', code: ErrorCode.ParseError, message: 'Parse error', retryable: false });
  });

  it.each<[number, unknown, FailureCategory, boolean]>([
    [ErrorCode.ParseError, undefined, 'failed', false],
    [ErrorCode.Timeout, undefined, 'timed-out', false],
    [ErrorCode.TaskNotFound, undefined, 'failed', false],
    [ErrorCode.TaskCancelled, undefined, 'cancelled', false],
    [ErrorCode.InvalidRequest, undefined, 'failed', false],
    [ErrorCode.MethodNotFound, undefined, 'failed', false],
    [ErrorCode.InvalidParams, [{ path: 'text', message: 'required' }], 'rejected', false],
    [ErrorCode.InternalError, undefined, 'failed', false],
    [-32000, undefined, 'failed', false],
    [-32099, { retryable: true }, 'failed', false],
    [ErrorCode.ModelRejected, { retryable: true }, 'rejected', false],
    [ErrorCode.ModelThrottled, undefined, 'busy', true],
    [ErrorCode.ModelThrottled, { retryable: false }, 'busy', false],
    [ErrorCode.ModelUnavailable, { retryable: true }, 'unavailable', true],
    [ErrorCode.ModelUnavailable, { retryable: false }, 'unavailable', false],
  ])('execute_task error %d with data %j → %s, retryable %s', async (code, data, category, retryable) => {
    const outcome = await start(answering((request) => JSON.stringify(errorResponse(request.id as string, code, undefined, data))));

    expect(outcome).toMatchObject({ kind: 'failure', category, code, retryable });
  });

  it('reads the usage a cancelled task reports with its cancel, checked as every usage is: a malformed one is dropped', async () => {
    const usage = { input_tokens: 120, output_tokens: 7, model: 'm' };
    const cancelled = (reported: unknown) => answering((request) => JSON.stringify(successResponse(request.id as string, { status: 'cancelled', task_id: 'task-1', usage: reported })));
    expect(await protocol.cancel({ taskId: 'task-1' }, callContext(cancelled(usage), requestId))).toEqual(usage);
    for (const bad of [{ input_tokens: -1, output_tokens: 0 }, { input_tokens: 1.5, output_tokens: 0 }, 'lots']) {
      expect(await protocol.cancel({ taskId: 'task-1' }, callContext(cancelled(bad), requestId))).toBeUndefined();
    }
    // A task cancelled before (a repeated cancel_task): -32003 with what it used in `data.usage`.
    const again = answering((request) => JSON.stringify(errorResponse(request.id as string, ErrorCode.TaskCancelled, undefined, { usage })));
    expect(await protocol.cancel({ taskId: 'task-1' }, callContext(again, requestId))).toEqual(usage);
  });

  it('rejects a cancel answer it cannot read, so the caller can log it', async () => {
    const transport = answering(() => 'not json');

    await expect(protocol.cancel({ taskId: 'task-1' }, callContext(transport, requestId))).rejects.toBeInstanceOf(CancelError);
  });

  it('lets transport faults through; the execution agent turns them into the transport’s verdict', async () => {
    const refused = httpsTransport({ url: 'http://127.0.0.1:9/invocations', maxAttempts: 1 });
    const agent = new ExecutionAgent('default', protocol, refused);

    await expect(start(refused)).rejects.toBeInstanceOf(TransportError);
    const outcome: Outcome = await agent.start({ text: 'hi' }, { requestId });

    expect(outcome).toMatchObject({ kind: 'failure', category: 'unavailable', code: 'transport:connection', retryable: true });
  });
});

describe('ExecuteTaskProtocol streaming (docs/contract.md, "Streaming")', () => {
  const protocol = new ExecuteTaskProtocol();

  describe('against the execution runtime (echo, #stream)', () => {
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '2000', STREAM_FIRST_TEXT_MS: '30' }) });
    let transport: RecordingTransport;
    beforeEach(() => {
      transport = new RecordingTransport(new InProcessTransport(runtime.dispatch));
    });

    it('passes stream through as given, and turns accepted with text into a pending outcome with partial text and the cursor in the handle', async () => {
      // Prepare
      const requestId = randomUUID();
      // Act
      const outcome = await protocol.start({ requestId, params: { text: 'one two three four five six #stream=40', stream: true } }, callContext(transport, requestId));
      // Assess
      expect(transport.calls[0]?.body).toMatchObject({ method: 'execute_task', params: { text: 'one two three four five six #stream=40', stream: true } });
      expect(outcome).toEqual({ kind: 'pending', handle: { taskId: expect.stringMatching(/^task-/), cursor: expect.stringMatching(/^\d+$/) }, state: 'accepted', partial: expect.stringMatching(/^echo: /) });
      const { handle, partial } = outcome as { handle: PendingHandle; partial: string };
      expect(handle.cursor).toBe(String(partial.length));
    });

    it('polls with the cursor of the last answer: each partial is only the new text, and they add up to the start of the answer', async () => {
      // Prepare
      const requestId = randomUUID();
      const text = 'alpha beta gamma delta epsilon zeta eta theta #stream=30';
      const started = await protocol.start({ requestId, params: { text, stream: true } }, callContext(transport, requestId));
      let outcome = started;
      const partials = [(started as { partial?: string }).partial ?? ''];
      const sentCursors: unknown[] = [];
      // Act
      while (outcome.kind === 'pending') {
        await sleep(25);
        const handle: PendingHandle = outcome.handle;
        outcome = await protocol.poll(handle, callContext(transport, 'poller'));
        sentCursors.push((transport.last().body.params as { cursor?: unknown }).cursor);
        expect(sentCursors.at(-1)).toBe(handle.cursor);
        if (outcome.kind === 'pending') {
          partials.push(outcome.partial ?? '');
          expect(outcome.handle.cursor).toBe(String(Number(handle.cursor) + (outcome.partial?.length ?? 0)));
        }
      }
      // Assess
      // Echo's usage (a token a word) came through the task store with the answer.
      expect(outcome).toEqual({ kind: 'success', text: `echo: ${text}`, extra: {}, usage: { input_tokens: 9, output_tokens: 10, model: 'echo' } });
      expect(`echo: ${text}`.startsWith(partials.join(''))).toBe(true);
      expect(partials.filter(Boolean).length).toBeGreaterThanOrEqual(3);
      expect(sentCursors.every((cursor) => typeof cursor === 'string')).toBe(true);
    });

    it('without stream: no cursor in the handle, none in the poll, no partial', async () => {
      // Prepare
      const slow = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '30' }) });
      const recording = new RecordingTransport(new InProcessTransport(slow.dispatch));
      const requestId = randomUUID();
      // Act
      const started = await protocol.start({ requestId, params: { text: '#sleep=100 #stream=10 a b c' } }, callContext(recording, requestId));
      const polled = await protocol.poll((started as { handle: PendingHandle }).handle, callContext(recording, 'poller'));
      // Assess
      expect(recording.calls[0]?.body.params).toEqual({ text: '#sleep=100 #stream=10 a b c' });
      expect(started).toEqual({ kind: 'pending', handle: { taskId: expect.any(String) }, state: 'accepted' });
      expect(recording.calls[1]?.body.params).toEqual({ task_id: (started as { handle: PendingHandle }).handle.taskId });
      expect(polled).toEqual({ kind: 'pending', handle: { taskId: expect.any(String) }, state: 'working' });
    });
  });

  describe('with scripted answers', () => {
    /** Answers each request with the next result of the script; keeps the requests. */
    function scripted(results: unknown[]) {
      const requests: Array<{ id: unknown; method: string; params: Record<string, unknown> }> = [];
      const transport = new InProcessTransport(async (body) => {
        const request = JSON.parse(new TextDecoder().decode(body));
        requests.push(request);
        return JSON.stringify(successResponse(request.id, results.shift()));
      });
      return { transport, requests };
    }

    it('accepted with text but no cursor: partial, no cursor in the handle, and the poll sends none', async () => {
      // Prepare
      const { transport, requests } = scripted([
        { status: 'accepted', task_id: 't-1', text: 'Hello' },
        { status: 'working', task_id: 't-1', cursor: 'c2' },
        { status: 'working', task_id: 't-1' },
        { status: 'working', task_id: 't-1', text: '', cursor: 'c3' },
      ]);
      const requestId = randomUUID();
      // Act
      const started = await protocol.start({ requestId, params: { text: 'hi', stream: false } }, callContext(transport, requestId));
      const first = await protocol.poll((started as { handle: PendingHandle }).handle, callContext(transport, 'p'));
      const second = await protocol.poll((first as { handle: PendingHandle }).handle, callContext(transport, 'p'));
      const third = await protocol.poll((second as { handle: PendingHandle }).handle, callContext(transport, 'p'));
      // Assess
      expect(requests[0]?.params).toEqual({ text: 'hi', stream: false });
      expect(started).toEqual({ kind: 'pending', handle: { taskId: 't-1' }, state: 'accepted', partial: 'Hello' });
      expect(requests[1]?.params).toEqual({ task_id: 't-1' });
      // A cursor without text: nothing new, but the next poll sends it.
      expect(first).toEqual({ kind: 'pending', handle: { taskId: 't-1', cursor: 'c2' }, state: 'working' });
      expect(requests[2]?.params).toEqual({ task_id: 't-1', cursor: 'c2' });
      // An answer without a cursor leaves the last one in the handle.
      expect(second).toEqual({ kind: 'pending', handle: { taskId: 't-1', cursor: 'c2' }, state: 'working' });
      expect(requests[3]?.params).toEqual({ task_id: 't-1', cursor: 'c2' });
      // Empty text is no partial.
      expect(third).toEqual({ kind: 'pending', handle: { taskId: 't-1', cursor: 'c3' }, state: 'working' });
    });

    it('a success after streaming is the whole response_text, as always', async () => {
      // Prepare
      const { transport } = scripted([{ status: 'success', response_text: 'Hello, world', model_id: 'm' }]);
      // Act
      const outcome = await protocol.poll({ taskId: 't-1', cursor: '5' }, callContext(transport, 'p'));
      // Assess
      expect(outcome).toEqual({ kind: 'success', text: 'Hello, world', extra: { model_id: 'm' } });
    });

    it('reads the usage of a final answer, and drops a malformed one without failing the answer', async () => {
      // Prepare
      const { transport } = scripted([
        { status: 'success', response_text: 'counted', usage: { input_tokens: 12, output_tokens: 5, cache_write_tokens: 7, model: 'm', total_tokens: 24 } },
        { status: 'success', response_text: 'miscounted', usage: { input_tokens: -1, output_tokens: 'five' } },
        { status: 'success', response_text: 'not counted' },
      ]);
      // Act
      const counted = await protocol.poll({ taskId: 't-1' }, callContext(transport, 'p'));
      const miscounted = await protocol.poll({ taskId: 't-2' }, callContext(transport, 'p'));
      const uncounted = await protocol.poll({ taskId: 't-3' }, callContext(transport, 'p'));
      // Assess: only the contract's fields are kept; an unknown one is no fault
      expect(counted).toEqual({ kind: 'success', text: 'counted', extra: {}, usage: { input_tokens: 12, output_tokens: 5, cache_write_tokens: 7, model: 'm' } });
      expect(miscounted).toEqual({ kind: 'success', text: 'miscounted', extra: {}, usageDropped: expect.stringMatching(/input_tokens: input_tokens must not be negative; output_tokens: output_tokens must be a number of tokens/) });
      expect(uncounted).toEqual({ kind: 'success', text: 'not counted', extra: {} });
    });

    it('refuses a pending answer whose text or cursor is not a string as protocol:malformed', async () => {
      // Prepare
      const { transport } = scripted([{ status: 'working', task_id: 't-1', text: 5, cursor: 'c' }]);
      // Act
      const outcome = await protocol.poll({ taskId: 't-1' }, callContext(transport, 'p'));
      // Assess
      expect(outcome).toMatchObject({ kind: 'failure', code: ProtocolFailure.Malformed, retryable: false });
    });
  });
});
