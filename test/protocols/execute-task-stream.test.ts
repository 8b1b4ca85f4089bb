import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { ExecuteTaskProtocol } from '../../src/protocols/execute-task';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { AgentStreamStep as StreamStep, Outcome } from '../../src/protocols/outcome';
import type { CallContext } from '../../src/protocols/protocol';
import { InProcessTransport } from '../../src/transport/in-process';
import { TransportError } from '../../src/transport/transport';

/**
 * The execute-task protocol read as a stream (docs/contract.md, "Streaming"): a fake agent behind
 * the in-process transport answers with the JSON-RPC responses the wire format names — progress
 * (`working`, text and cursor), then success, an error, or `accepted` at the hold — chosen by the
 * task's text (execute_task) or its task id (get_task_result).
 */

type Request = { jsonrpc: '2.0'; id: string; method: string; params: Record<string, unknown> };
const result = (request: Request, value: unknown) => JSON.stringify({ jsonrpc: '2.0', id: request.id, result: value });
const working = (request: Request, text: string, cursor: number) => result(request, { status: 'working', task_id: 'task-s', text, cursor: String(cursor) });

/** What the fake agent streams for each task text. */
const SCRIPTS: Record<string, (request: Request) => AsyncGenerator<string>> = {
  async *'#words'(request) {
    yield working(request, 'one ', 4);
    yield working(request, 'two ', 8);
    yield result(request, { status: 'success', response_text: 'one two three', model_id: 'm' });
  },
  async *'#hold'(request) {
    yield working(request, 'one ', 4);
    yield result(request, { status: 'accepted', task_id: 'task-s', cursor: '4' });
  },
  async *'#fail-after'(request) {
    yield working(request, 'one ', 4);
    yield JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32012, message: 'Model unavailable' } });
  },
  async *'#cut'(request) {
    yield working(request, 'one ', 4);
    throw new TransportError('the response broke off', 'connection', true);
  },
  async *'#plain-accepted'(request) {
    yield result(request, { status: 'accepted', task_id: 'task-s', text: 'first ', cursor: '6' });
  },
  async *'#wrong-id'() {
    yield JSON.stringify({ jsonrpc: '2.0', id: 'someone-else', result: { status: 'working', task_id: 'task-x', text: 'not yours', cursor: '9' } });
  },
  async *'#nothing'() {},
  async *'#forever'(request) {
    yield working(request, 'one ', 4);
    await sleep(60_000, undefined, { ref: false });
  },
  async *'#refused'() {
    throw new TransportError('the endpoint answered HTTP 503', 'server', true, { status: 503 });
  },
};

function fakeAgent() {
  const requests: Request[] = [];
  const dispatchStream = async function* (body: Uint8Array): AsyncGenerator<string> {
    const request = JSON.parse(new TextDecoder().decode(body)) as Request;
    requests.push(request);
    if (request.method === 'get_task_result') {
      yield working(request, 'three', 13);
      yield result(request, { status: 'success', response_text: 'one two three' });
      return;
    }
    yield* SCRIPTS[String(request.params.text)]!(request);
  };
  const transport = new InProcessTransport(async () => {
    throw new Error('not used');
  }, dispatchStream);
  return { transport, requests };
}

async function steps(stream: AsyncIterable<StreamStep>): Promise<StreamStep[]> {
  const out: StreamStep[] = [];
  for await (const step of stream) out.push(step);
  return out;
}

const hold = { holdMs: 10_000 };

describe('ExecuteTaskProtocol.stream / streamPoll', () => {
  const protocol = new ExecuteTaskProtocol();
  const callOver = (transport: InProcessTransport, requestId: string): CallContext => ({ transport, sessionKey: requestId });

  it('sends execute_task with stream and hold_ms under the request id; progress becomes text steps whose handles carry the cursor, the success the outcome', async () => {
    const { transport, requests } = fakeAgent();
    const requestId = randomUUID();

    const read = await steps(protocol.stream({ requestId, params: { text: '#words' } }, callOver(transport, requestId), { holdMs: 12_345 }));

    expect(requests).toEqual([{ jsonrpc: '2.0', id: requestId, method: 'execute_task', params: { text: '#words', stream: true, hold_ms: 12_345 } }]);
    expect(read).toEqual([
      { kind: 'text', text: 'one ', handle: { taskId: 'task-s', cursor: '4' } },
      { kind: 'text', text: 'two ', handle: { taskId: 'task-s', cursor: '8' } },
      { kind: 'success', text: 'one two three', extra: { model_id: 'm' } },
    ]);
  });

  it('a stream the agent ends with accepted (its hold) is pending, polled on from the last cursor', async () => {
    const { transport } = fakeAgent();
    const read = await steps(protocol.stream({ requestId: randomUUID(), params: { text: '#hold' } }, callOver(transport, 'k'), hold));

    expect(read.at(-1)).toEqual({ kind: 'pending', handle: { taskId: 'task-s', cursor: '4' }, state: 'accepted' });
  });

  it('streamPoll sends get_task_result with the cursor, stream and hold_ms under a fresh id', async () => {
    const { transport, requests } = fakeAgent();
    const requestId = randomUUID();

    const read = await steps(protocol.streamPoll({ taskId: 'task-s', cursor: '8' }, callOver(transport, requestId), { holdMs: 5_000 }));

    expect(requests[0]).toMatchObject({ method: 'get_task_result', params: { task_id: 'task-s', cursor: '8', stream: true, hold_ms: 5_000 } });
    expect(requests[0]!.id).not.toBe(requestId);
    expect(read).toEqual([
      { kind: 'text', text: 'three', handle: { taskId: 'task-s', cursor: '13' } },
      { kind: 'success', text: 'one two three', extra: {} },
    ]);
  });

  it('an error after text is the outcome, categorised as for start', async () => {
    const { transport } = fakeAgent();
    const read = await steps(protocol.stream({ requestId: randomUUID(), params: { text: '#fail-after' } }, callOver(transport, 'k'), hold));

    expect(read.map((step) => step.kind)).toEqual(['text', 'failure']);
    expect(read.at(-1)).toMatchObject({ category: 'unavailable', code: -32012, retryable: true });
  });

  it('a stream cut off once the task is known ends pending from the last cursor, not failed', async () => {
    const { transport } = fakeAgent();
    const read = await steps(protocol.stream({ requestId: randomUUID(), params: { text: '#cut' } }, callOver(transport, 'k'), hold));

    expect(read.at(-1)).toEqual({ kind: 'pending', handle: { taskId: 'task-s', cursor: '4' }, state: 'working' });
  });

  it('the caller ends a stream still open past the hold itself: pending from the last cursor', async () => {
    const { transport } = fakeAgent();
    const read = await steps(new ExecuteTaskProtocol({ holdGraceMs: 0 }).stream({ requestId: randomUUID(), params: { text: '#forever' } }, callOver(transport, 'k'), { holdMs: 1_000 }));

    expect(read).toEqual([
      { kind: 'text', text: 'one ', handle: { taskId: 'task-s', cursor: '4' } },
      { kind: 'pending', handle: { taskId: 'task-s', cursor: '4' }, state: 'working' },
    ]);
  });

  it('a plain answer is read the same way: its text a text step, then its outcome', async () => {
    const { transport } = fakeAgent();
    const read = await steps(protocol.stream({ requestId: randomUUID(), params: { text: '#plain-accepted' } }, callOver(transport, 'k'), hold));

    expect(read).toEqual([
      { kind: 'text', text: 'first ', handle: { taskId: 'task-s', cursor: '6' } },
      { kind: 'pending', handle: { taskId: 'task-s', cursor: '6' }, state: 'accepted' },
    ]);
  });

  it.each([
    ['another request’s id', '#wrong-id', 'protocol:id-mismatch'],
    ['no answer at all', '#nothing', 'protocol:empty'],
  ])('%s is a failure that is never retried', async (_label, text, code) => {
    const { transport } = fakeAgent();
    const read = await steps(protocol.stream({ requestId: randomUUID(), params: { text } }, callOver(transport, 'k'), hold));

    expect(read).toEqual([expect.objectContaining({ kind: 'failure', category: 'failed', code, retryable: false })]);
  });

  it('a transport fault before the task is known is thrown, for the agent to report', async () => {
    const { transport } = fakeAgent();
    await expect(steps(protocol.stream({ requestId: randomUUID(), params: { text: '#refused' } }, callOver(transport, 'k'), hold))).rejects.toBeInstanceOf(TransportError);
  });
});

describe('ExecutionAgent.startStreaming / pollStreaming (execute-task)', () => {
  it('streams when the protocol and transport can and the hold is not 0', () => {
    const { transport } = fakeAgent();
    expect(new ExecutionAgent('a', createProtocol('execute-task'), transport).streams).toBe(true);
    expect(new ExecutionAgent('a', createProtocol('execute-task'), transport, { streamHoldMs: 0 }).streams).toBe(false);
    expect(new ExecutionAgent('a', createProtocol('simple-a2a'), transport).streams).toBe(false);
    expect(new ExecutionAgent('a', createProtocol('execute-task'), { kind: 'https', send: async () => undefined }).streams).toBe(false);
  });

  it('never throws: a transport fault is the last step, a failure with the transport’s verdict', async () => {
    const { transport } = fakeAgent();
    const agent = new ExecutionAgent('a', createProtocol('execute-task'), transport);

    const read = await steps(agent.startStreaming({ text: '#refused' }, { requestId: randomUUID(), holdMs: 1_000 }));

    expect(read).toEqual([{ kind: 'failure', category: 'unavailable', code: 'transport:server', message: 'the endpoint answered HTTP 503', retryable: true }]);
  });

  it('reads the stream, then polls it as a stream from the handle of the last step', async () => {
    const { transport, requests } = fakeAgent();
    const agent = new ExecutionAgent('a', createProtocol('execute-task'), transport);
    const requestId = randomUUID();

    const first = await steps(agent.startStreaming({ text: '#hold' }, { requestId }));
    const last = first.at(-1) as Extract<Outcome, { kind: 'pending' }>;
    const second = await steps(agent.pollStreaming(last.handle, { requestId }));

    // The agent's own hold when the call names none.
    expect(requests[0]!.params.hold_ms).toBe(30_000);
    expect([...first, ...second].filter((step) => step.kind === 'text').map((step) => (step as { text: string }).text).join('')).toBe('one three');
    expect(second.at(-1)).toMatchObject({ kind: 'success', text: 'one two three' });
  });

  it('with streamed reads turned off, is the plain call: its pending partial becomes a text step before the outcome', async () => {
    // Text comes 20 ms after the first word, long before the sync budget and the task's end.
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '2000', STREAM_FIRST_TEXT_MS: '20' }) });
    const agent = new ExecutionAgent('a', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch), { streamHoldMs: 0 });

    const read = await steps(agent.startStreaming({ text: 'alpha beta gamma delta epsilon zeta eta theta #stream=40', stream: true }, { requestId: randomUUID() }));

    expect(read).toEqual([
      { kind: 'text', text: expect.stringMatching(/^echo: /), handle: { taskId: expect.stringMatching(/^task-/), cursor: expect.any(String) } },
      { kind: 'pending', handle: { taskId: expect.stringMatching(/^task-/), cursor: expect.any(String) }, state: 'accepted' },
    ]);
  });

  it('against a runtime that answers plain JSON (no streaming dispatcher): the same task, read to its end by streamed reads', async () => {
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '50', STREAM_FIRST_TEXT_MS: '20' }) });
    const agent = new ExecutionAgent('a', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch));
    const text = 'alpha beta gamma delta epsilon #stream=30';
    const requestId = randomUUID();

    const shown: string[] = [];
    let last: StreamStep | undefined;
    for (let read = agent.startStreaming({ text, stream: true }, { requestId, holdMs: 1_000 }); ; ) {
      for await (const step of read) {
        if (step.kind === 'text') shown.push(step.text);
        else last = step;
      }
      if (last?.kind !== 'pending') break;
      await sleep(30);
      read = agent.pollStreaming(last.handle, { requestId, holdMs: 1_000 });
    }

    expect(last).toMatchObject({ kind: 'success', text: `echo: ${text}` });
    // What was shown is how the answer begins (docs/contract.md, "Streaming").
    expect(`echo: ${text}`.startsWith(shown.join(''))).toBe(true);
  });
});
