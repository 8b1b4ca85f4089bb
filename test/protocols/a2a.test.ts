import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import type { Attachment, ExecuteTaskParams, ThreadMessage } from '../../src/contract';
import { A2aProtocol, agentCardVersionResolver, categoryOfA2aError, slackThreadContextId } from '../../src/protocols/a2a';
import type { A2aVersion } from '../../src/protocols/a2a-dialects';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { CancelError, ProtocolFailure } from '../../src/protocols/json-rpc-exchange';
import type { AgentOutcome as Outcome, Failure, PendingHandle } from '../../src/protocols/outcome';
import { startHandWrittenA2aAgent, startSdkA2aAgent, streamedAnswer, streamedLines, type A2aTestAgent, type PartsSeen } from '../support/a2a-agents';
import { staticSecret } from '../../src/secrets/secret-source';
import { HttpsTransport, type HttpsTransportOptions } from '../../src/transport/https';
import type { Transport } from '../../src/transport/transport';
import type { CallContext } from '../../src/protocols/protocol';
import { callContext, pollUntilSettled } from './support/recording-transport';

const handleOf = (outcome: Outcome): PendingHandle => {
  if (outcome.kind !== 'pending') throw new Error(`expected a pending outcome, got ${JSON.stringify(outcome)}`);
  return outcome.handle;
};

type Streamed = { outcome: Outcome; partials: string[]; handles: PendingHandle[] };

/**
 * Follows a task as the pipeline does: each poll uses the handle of the answer before it, and every
 * partial (the start's included) is kept in order.
 */
async function followStreaming(protocol: A2aProtocol, started: Outcome, call: CallContext, timeoutMs = 5_000): Promise<Streamed> {
  const deadline = Date.now() + timeoutMs;
  const partials: string[] = [];
  const handles: PendingHandle[] = [];
  let outcome = started;
  while (outcome.kind === 'pending') {
    if (outcome.partial !== undefined) partials.push(outcome.partial);
    handles.push(outcome.handle);
    if (Date.now() > deadline) throw new Error(`task ${outcome.handle.taskId} still pending after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    outcome = await protocol.poll(outcome.handle, call);
  }
  return { outcome, partials, handles };
}

/** Each partial carries only new text: together they are the answer's beginning, each handle counting what was given. */
function expectStreamedInOrder({ partials, handles }: Streamed, answer: string): void {
  const given = partials.join('');
  expect(answer.startsWith(given)).toBe(true);
  expect(partials.every((partial) => partial.length > 0)).toBe(true);
  const counts = handles.map((handle) => Number(handle.shown));
  expect(counts).toEqual([...counts].sort((a, b) => a - b));
  expect(counts.at(-1)).toBe(given.length);
}

type Dialect = { version: A2aVersion; legacyCompat: boolean; methods: [string, string, string] };

/** Two earlier turns of a Slack thread and two files, as the verification zone fills them. */
const THREAD: ThreadMessage[] = [
  { role: 'user', text: 'Can you summarise the report?', user_id: 'U1', ts: '1.2' },
  { role: 'assistant', text: 'Sure: revenue is up 4%.', ts: '1.3' },
];
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64');
const FILES: Attachment[] = [
  { name: 'chart.png', mimetype: 'image/png', size: 8, data: PNG },
  { name: 'notes.txt', mimetype: 'text/plain', size: 5, data: Buffer.from('hello').toString('base64') },
];

describe.each<[string, Dialect]>([
  ['A2A 1.0 (the SDK default)', { version: '1.0', legacyCompat: false, methods: ['SendMessage', 'GetTask', 'CancelTask'] }],
  ['A2A 0.3 (the SDK compat layer)', { version: '0.3', legacyCompat: true, methods: ['message/send', 'tasks/get', 'tasks/cancel'] }],
])('A2aProtocol against an @a2a-js/sdk agent speaking %s', (_label, dialect) => {
  let agent: A2aTestAgent;
  let transport: HttpsTransport;
  const protocol = new A2aProtocol({ version: dialect.version });

  beforeAll(async () => {
    agent = await startSdkA2aAgent({ legacyCompat: dialect.legacyCompat });
    transport = httpsTransport({ url: agent.url, maxAttempts: 1 });
  });
  afterAll(() => agent.close());

  const start = (text: string, requestId = randomUUID(), extra: Partial<ExecuteTaskParams> = {}) =>
    protocol.start({ requestId, params: { text, channel: 'C1', thread_ts: '1.2', ...extra } }, callContext(transport, requestId));
  const sentMessage = () => (agent.requests.at(-1)!.body as { params: { message: Record<string, unknown> } }).params.message;
  const poller = () => callContext(transport, 'poller');

  it('answers with the text of a message the agent returns at once', async () => {
    // Act
    const outcome = await start('hello');

    // Assess
    expect(outcome).toEqual({ kind: 'success', text: 'a2a echo: hello', extra: { messageId: expect.any(String), contextId: expect.any(String) } });
  });

  it('sends the dialect’s wire shape, with the request id as message id and JSON-RPC id', async () => {
    const requestId = randomUUID();

    await start('shape', requestId, { bot_token: 'xoxb-never-leaves' });

    const { headers, body } = agent.requests.at(-1)!;
    const metadata = { channel: 'C1', thread_ts: '1.2' };
    const contextId = 'slack::C1:1.2';
    if (dialect.version === '1.0') {
      expect(headers['a2a-version']).toBe('1.0');
      expect(body).toEqual({ jsonrpc: '2.0', id: requestId, method: 'SendMessage', params: { message: { messageId: requestId, contextId, role: 'ROLE_USER', parts: [{ text: 'shape' }], metadata }, configuration: { returnImmediately: true } } });
    } else {
      expect(headers['a2a-version']).toBeUndefined();
      expect(body).toEqual({ jsonrpc: '2.0', id: requestId, method: 'message/send', params: { message: { kind: 'message', messageId: requestId, contextId, role: 'user', parts: [{ kind: 'text', text: 'shape' }], metadata }, configuration: { blocking: false } } });
    }
    expect(JSON.stringify(body)).not.toContain('xoxb-never-leaves');
  });

  it('sends a task without a thread, messages or attachments exactly as before: one text part, no contextId', async () => {
    const requestId = randomUUID();

    await protocol.start({ requestId, params: { text: 'bare', user_id: 'U1' } }, callContext(transport, requestId));

    const metadata = { user_id: 'U1' };
    expect(sentMessage()).toEqual(
      dialect.version === '1.0'
        ? { messageId: requestId, role: 'ROLE_USER', parts: [{ text: 'bare' }], metadata }
        : { kind: 'message', messageId: requestId, role: 'user', parts: [{ kind: 'text', text: 'bare' }], metadata },
    );
  });

  it('sends the Slack thread as the contextId, its earlier messages as a data part after the text, and each file as a file part', async () => {
    const requestId = randomUUID();

    await start('what does the chart show?', requestId, { team_id: 'T1', user_id: 'U2', messages: THREAD, attachments: FILES });

    const metadata = { team_id: 'T1', channel: 'C1', thread_ts: '1.2', user_id: 'U2' };
    if (dialect.version === '1.0') {
      expect(sentMessage()).toEqual({
        messageId: requestId,
        contextId: 'slack:T1:C1:1.2',
        role: 'ROLE_USER',
        parts: [
          { text: 'what does the chart show?' },
          { data: { slack_thread: { messages: THREAD } }, mediaType: 'application/json' },
          { raw: PNG, filename: 'chart.png', mediaType: 'image/png' },
          { raw: 'aGVsbG8=', filename: 'notes.txt', mediaType: 'text/plain' },
        ],
        metadata,
      });
    } else {
      expect(sentMessage()).toEqual({
        kind: 'message',
        messageId: requestId,
        contextId: 'slack:T1:C1:1.2',
        role: 'user',
        parts: [
          { kind: 'text', text: 'what does the chart show?' },
          { kind: 'data', data: { slack_thread: { messages: THREAD } } },
          { kind: 'file', file: { name: 'chart.png', mimeType: 'image/png', bytes: PNG } },
          { kind: 'file', file: { name: 'notes.txt', mimeType: 'text/plain', bytes: 'aGVsbG8=' } },
        ],
        metadata,
      });
    }
  });

  it('leaves the data part out when the thread has no earlier messages', async () => {
    await start('first in thread', randomUUID(), { messages: [], attachments: [FILES[1]!] });

    const kinds = (sentMessage().parts as Array<Record<string, unknown>>).map((part) => part.kind ?? Object.keys(part).find((key) => ['text', 'data', 'raw'].includes(key)));
    expect(kinds).toEqual(dialect.version === '1.0' ? ['text', 'raw'] : ['text', 'file']);
  });

  it('reaches the agent: it works in the thread’s context and reads the earlier messages and the file bytes', async () => {
    const outcome = await start('#parts look', randomUUID(), { team_id: 'T1', channel: 'C9', thread_ts: '7.7', messages: THREAD, attachments: FILES });

    expect(outcome).toMatchObject({ kind: 'success', extra: { contextId: 'slack:T1:C9:7.7' } });
    const seen = JSON.parse((outcome as { text: string }).text.replace(/^a2a parts: /, '')) as PartsSeen;
    expect(seen).toEqual({
      contextId: 'slack:T1:C9:7.7',
      parts: [
        { kind: 'text', value: '#parts look', filename: '', mediaType: '' },
        // The SDK's 0.3 layer has no media type for data parts.
        { kind: 'data', value: { slack_thread: { messages: THREAD } }, filename: '', mediaType: dialect.version === '1.0' ? 'application/json' : '' },
        { kind: 'raw', value: PNG, filename: 'chart.png', mediaType: 'image/png' },
        { kind: 'raw', value: 'aGVsbG8=', filename: 'notes.txt', mediaType: 'text/plain' },
      ],
    });
  });

  it('keeps one context for every task of a thread, across tasks the agent runs', async () => {
    const first = await start('#parts one', randomUUID(), { team_id: 'T1', thread_ts: '5.5' });
    const second = await start('#parts two', randomUUID(), { team_id: 'T1', thread_ts: '5.5', messages: THREAD });
    const other = await start('#parts three', randomUUID(), { team_id: 'T1', thread_ts: '6.6' });

    expect(first).toMatchObject({ extra: { contextId: 'slack:T1:C1:5.5' } });
    expect(second).toMatchObject({ extra: { contextId: 'slack:T1:C1:5.5' } });
    expect(other).toMatchObject({ extra: { contextId: 'slack:T1:C1:6.6' } });
  });

  it('reuses the message id and JSON-RPC id when the same task is retried', async () => {
    const requestId = randomUUID();

    await start('once', requestId);
    await start('once', requestId);

    const [first, second] = agent.requests.slice(-2).map((request) => request.body as { id: string; params: { message: { messageId: string } } });
    expect(second!.id).toBe(first!.id);
    expect(second!.params.message.messageId).toBe(first!.params.message.messageId);
  });

  it('follows a task that works on: pending with its ids, then polled to the artifact text', async () => {
    const started = await start('#task #delay=150 think');
    const handle = handleOf(started);
    expect(started).toEqual({ kind: 'pending', handle: { taskId: expect.any(String), contextId: expect.any(String), a2aVersion: dialect.version }, state: 'submitted' });

    const { outcome } = await pollUntilSettled(protocol, handle, poller());

    expect(outcome).toEqual({ kind: 'success', text: 'a2a done: #task #delay=150 think', extra: { taskId: handle.taskId, contextId: handle.contextId, state: 'completed' } });
    expect(agent.requests.at(-1)!.body).toMatchObject({ method: dialect.methods[1], params: { id: handle.taskId } });
  });

  describe('streaming (params.stream)', () => {
    const text = '#stream #delay=120 tell me';

    it('hands over the artifact text of a working task as it grows: in order, never twice, the beginning of the final answer', async () => {
      const started = await start(text, randomUUID(), { stream: true });
      expect(started).toEqual({ kind: 'pending', handle: { taskId: expect.any(String), contextId: expect.any(String), a2aVersion: dialect.version, shown: '0' }, state: 'submitted' });

      const streamed = await followStreaming(protocol, started, poller());

      expect(streamed.outcome).toEqual({ kind: 'success', text: streamedAnswer(text), extra: { taskId: handleOf(started).taskId, contextId: handleOf(started).contextId, state: 'completed' } });
      expect(streamed.partials.length).toBeGreaterThanOrEqual(2);
      expectStreamedInOrder(streamed, streamedAnswer(text));
      // The agent's progress messages ("thinking…") are in its status and history, never in the answer.
      expect(streamed.partials.join('')).not.toContain('thinking');
    });

    it('streams an agent that replaces its artifact with the whole text so far just the same', async () => {
      const replacing = '#stream #replace #delay=120 tell me';

      const streamed = await followStreaming(protocol, await start(replacing, randomUUID(), { stream: true }), poller());

      expect(streamed.outcome).toMatchObject({ kind: 'success', text: streamedAnswer(replacing) });
      expect(streamed.partials.length).toBeGreaterThanOrEqual(2);
      expectStreamedInOrder(streamed, streamedAnswer(replacing));
    });

    it('hands over the text a working task already holds when it starts', async () => {
      const early = '#stream #early #delay=120 tell me';

      const started = await start(early, randomUUID(), { stream: true });
      const streamed = await followStreaming(protocol, started, poller());

      const [first] = streamedLines(early);
      expect(started).toMatchObject({ kind: 'pending', state: 'working', partial: first, handle: { shown: String(first!.length) } });
      expect(streamed.outcome).toMatchObject({ kind: 'success', text: streamedAnswer(early) });
      expectStreamedInOrder(streamed, streamedAnswer(early));
    });

    it('stops handing over text the agent rewrote, and ends with the rewritten answer', async () => {
      const rewriting = '#stream #rewrite #delay=150 tell me';
      const [one, two] = streamedLines(rewriting);

      const streamed = await followStreaming(protocol, await start(rewriting, randomUUID(), { stream: true }), poller());

      expect(streamed.outcome).toMatchObject({ kind: 'success', text: `a2a rewritten: ${rewriting}` });
      expect(streamed.partials.length).toBeGreaterThanOrEqual(1);
      expect([one, `${one}\n${two}`]).toContain(streamed.partials.join(''));
    });

    it('gives nothing more to a handle whose shown text the task no longer starts with', async () => {
      const started = await start(text, randomUUID(), { stream: true });
      const forged: PendingHandle = { ...handleOf(started), shown: '3', shownDigest: 'not-what-was-shown' };
      await new Promise((resolve) => setTimeout(resolve, 200)); // the first line is out

      const outcome = await protocol.poll(forged, poller());
      await pollUntilSettled(protocol, handleOf(started), poller());

      expect(outcome).toEqual({ kind: 'pending', handle: forged, state: 'working' });
    });

    it('leaves a caller that does not stream exactly as before: no partial, no count in the handle', async () => {
      const early = '#stream #early #delay=50 tell me';

      const started = await start(early);
      const streamed = await followStreaming(protocol, started, poller());

      expect(started).toEqual({ kind: 'pending', handle: { taskId: expect.any(String), contextId: expect.any(String), a2aVersion: dialect.version }, state: 'working' });
      expect(streamed.partials).toEqual([]);
      expect(streamed.handles.every((handle) => handle.shown === undefined)).toBe(true);
      expect(streamed.outcome).toMatchObject({ kind: 'success', text: streamedAnswer(early) });
    });

    it('follows an agent that does not stream as before, whatever the caller asks', async () => {
      const streamed = await followStreaming(protocol, await start('#task #delay=100 think', randomUUID(), { stream: true }), poller());

      expect(streamed.partials).toEqual([]);
      expect(streamed.outcome).toMatchObject({ kind: 'success', text: 'a2a done: #task #delay=100 think', extra: { state: 'completed' } });
    });

    it('answers a message at once, streaming or not', async () => {
      expect(await start('hello', randomUUID(), { stream: true })).toMatchObject({ kind: 'success', text: 'a2a echo: hello' });
    });
  });

  it('reports a task that fails while polled, with the agent’s reason', async () => {
    const handle = handleOf(await start('#task-fail #delay=50'));

    const { outcome } = await pollUntilSettled(protocol, handle, poller());

    expect(outcome).toEqual({ kind: 'failure', category: 'failed', code: 'a2a:failed', message: expect.stringContaining('the tool timed out'), retryable: false });
  });

  it('takes the answer from the last agent message in the history when there is no artifact', async () => {
    expect(await start('#history')).toMatchObject({ kind: 'success', text: 'from history: #history' });
  });

  it.each([
    ['#fail', 'a2a:failed', 'failed', 'the model exploded'],
    ['#reject', 'a2a:rejected', 'rejected', 'this agent does not do that'],
  ])('turns a task answered %s into failure %s (%s), not retryable', async (text, code, category, reason) => {
    const outcome = await start(text);

    expect(outcome).toEqual({ kind: 'failure', category, code, message: expect.stringContaining(reason), retryable: false });
  });

  it.each([
    ['#input', 'a2a:input-required', 'which city do you mean?', undefined],
    ['#auth', 'a2a:auth-required', 'sign in first', 'auth'],
  ])('turns a task answered %s into a question (docs/contract.md, "Questions"); a caller without questions gets failure %s', async (text, code, reason, kind) => {
    const outcome = await start(text);

    expect(outcome).toMatchObject({ kind: 'input-required', handle: { taskId: expect.any(String) }, question: { text: reason, ...(kind ? { kind } : { free_text: { label: 'Your answer' } }) } });
    expect(outcome.kind === 'input-required' && outcome.unanswered).toEqual({ kind: 'failure', category: 'failed', code, message: expect.stringContaining(reason), retryable: false });
  });

  it('reads an HTTP 429 in front of the agent as busy, and leaves the retry to the queue', async () => {
    const outcome = await new ExecutionAgent('a2a', protocol, transport).start({ text: '#throttle' }, { requestId: randomUUID() });

    expect(outcome).toMatchObject({ kind: 'failure', category: 'busy', code: 'transport:throttled', retryable: true });
  });

  it(`reads the agent’s own rate limit (an ErrorInfo reason) as busy${dialect.version === '0.3' ? ' — except in 0.3, which carries no reason' : ''}`, async () => {
    const outcome = await start('#rate-limited');

    expect(outcome).toMatchObject({ kind: 'failure', category: dialect.version === '1.0' ? 'busy' : 'failed', code: 'a2a:-32603', retryable: false });
  });

  it('cancels a working task; the next poll reports it canceled', async () => {
    const handle = handleOf(await start('#slow'));

    await protocol.cancel(handle, poller());
    const outcome = await protocol.poll(handle, poller());

    expect(agent.requests.at(-2)!.body).toMatchObject({ method: dialect.methods[2], params: { id: handle.taskId } });
    expect(outcome).toMatchObject({ kind: 'failure', category: 'cancelled', code: 'a2a:canceled', retryable: false });
  });

  it('reports an unknown task by its A2A error code, namespaced and not retryable', async () => {
    const outcome = await protocol.poll({ taskId: randomUUID(), a2aVersion: dialect.version }, poller());

    expect(outcome).toEqual({ kind: 'failure', category: 'failed', code: 'a2a:-32001', message: expect.stringContaining('Task not found'), retryable: false });
  });
});

describe('A2aProtocol dialect mismatch', () => {
  it('gets -32009 from a 1.0-only SDK agent when it speaks 0.3', async () => {
    const agent = await startSdkA2aAgent();
    const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined); // the SDK logs the refusal
    try {
      const outcome = await new A2aProtocol({ version: '0.3' }).start({ requestId: randomUUID(), params: { text: 'hi' } }, callContext(httpsTransport({ url: agent.url, maxAttempts: 1 }), 'r'));

      expect(outcome).toMatchObject({ kind: 'failure', category: 'failed', code: 'a2a:-32009', retryable: false });
    } finally {
      quiet.mockRestore();
      await agent.close();
    }
  });
});

describe('A2aProtocol against a hand-written 0.3 agent (no kind, no ids)', () => {
  let agent: A2aTestAgent;
  let transport: HttpsTransport;
  const protocol = new A2aProtocol({ version: '0.3' });

  beforeAll(async () => {
    agent = await startHandWrittenA2aAgent();
    transport = httpsTransport({ url: agent.url, maxAttempts: 1 });
  });
  afterAll(() => agent.close());

  const start = (text: string) => {
    const requestId = randomUUID();
    return protocol.start({ requestId, params: { text } }, callContext(transport, requestId));
  };

  it('reads a bare message without kind or message id', async () => {
    expect(await start('hi')).toEqual({ kind: 'success', text: 'plain: hi', extra: {} });
  });

  it('still gets the question from the text part when the thread and files ride along', async () => {
    const requestId = randomUUID();

    const outcome = await protocol.start({ requestId, params: { text: 'hi', channel: 'C1', thread_ts: '1.2', messages: THREAD, attachments: FILES } }, callContext(transport, requestId));

    expect(outcome).toEqual({ kind: 'success', text: 'plain: hi', extra: {} });
    expect((agent.requests.at(-1)!.body as { params: { message: { parts: unknown[] } } }).params.message.parts).toHaveLength(4);
  });

  it('detects a task by its status, and keeps following it when poll answers leave the id out', async () => {
    const started = await start('#task #delay=100 dig');
    expect(started).toEqual({ kind: 'pending', handle: { taskId: expect.stringMatching(/^hw-task-/), a2aVersion: '0.3' }, state: 'working' });

    const { outcome, polls } = await pollUntilSettled(protocol, handleOf(started), callContext(transport, 'poller'));

    expect(polls).toBeGreaterThan(1);
    expect(outcome).toEqual({ kind: 'success', text: 'hand-written done: #task #delay=100 dig', extra: { state: 'completed' } });
  });

  it('gives no partial text for a task that does not stream, and the same answer, when the caller streams', async () => {
    const requestId = randomUUID();
    const started = await protocol.start({ requestId, params: { text: '#task #delay=80 dig', stream: true } }, callContext(transport, requestId));

    const streamed = await followStreaming(protocol, started, callContext(transport, 'poller'));

    expect(started).toEqual({ kind: 'pending', handle: { taskId: expect.stringMatching(/^hw-task-/), a2aVersion: '0.3', shown: '0' }, state: 'working' });
    expect(streamed.partials).toEqual([]);
    expect(streamed.outcome).toEqual({ kind: 'success', text: 'hand-written done: #task #delay=80 dig', extra: { state: 'completed' } });
  });

  it('takes the answer of a completed task from its status message when that is all there is', async () => {
    expect(await start('#done')).toMatchObject({ kind: 'success', text: 'done: #done' });
  });

  it.each([
    ['#fail', 'a2a:failed', 'failed', 'no model available'],
    ['#cancelled', 'a2a:canceled', 'cancelled', 'canceled'],
    ['#noid', 'a2a:no-task-id', 'failed', 'no task id'],
  ])('turns %s into failure %s (%s), not retryable', async (text, code, category, words) => {
    expect(await start(text)).toEqual({ kind: 'failure', category, code, message: expect.stringContaining(words), retryable: false });
  });

  it('turns #auth (no status message) into an auth question with words of its own; without questions, failure a2a:auth-required', async () => {
    const outcome = await start('#auth');
    expect(outcome).toMatchObject({ kind: 'input-required', handle: { taskId: 'hw-auth' }, question: { kind: 'auth', text: 'The agent needs you to sign in first.' } });
    expect(outcome.kind === 'input-required' && outcome.unanswered).toEqual({ kind: 'failure', category: 'failed', code: 'a2a:auth-required', message: expect.stringContaining('authentication'), retryable: false });
  });

  it('refuses an answer carrying another request’s id', async () => {
    expect(await start('#wrong-id')).toMatchObject({ kind: 'failure', category: 'failed', code: ProtocolFailure.IdMismatch, retryable: false });
  });

  it('refuses a body that is not JSON', async () => {
    expect(await start('#garbage')).toMatchObject({ kind: 'failure', category: 'failed', code: ProtocolFailure.Malformed, retryable: false });
  });

  it('cancels with tasks/cancel; an unknown task counts as nothing left to cancel', async () => {
    const handle = handleOf(await start('#task #delay=5000'));

    await protocol.cancel(handle, callContext(transport, 'c'));
    const outcome = await protocol.poll(handle, callContext(transport, 'p'));
    await expect(protocol.cancel({ taskId: 'hw-unknown', a2aVersion: '0.3' }, callContext(transport, 'c'))).resolves.toBeUndefined();

    expect(outcome).toMatchObject({ kind: 'failure', code: 'a2a:canceled' });
  });

  it('rejects a cancel the agent does not understand, so the caller can log it', async () => {
    const legacyOnly = new A2aProtocol({ version: '1.0' });

    await expect(legacyOnly.cancel({ taskId: 'hw-1' }, callContext(transport, 'c'))).rejects.toBeInstanceOf(CancelError);
  });
});

describe('A2aProtocol with a2aVersion auto (the agent card decides)', () => {
  let sdk: A2aTestAgent;
  let compat: A2aTestAgent;
  let handWritten: A2aTestAgent;

  beforeAll(async () => {
    [sdk, compat, handWritten] = await Promise.all([startSdkA2aAgent(), startSdkA2aAgent({ legacyCompat: true }), startHandWrittenA2aAgent()]);
  });
  afterAll(() => Promise.all([sdk.close(), compat.close(), handWritten.close()]));

  const transportTo = (agent: A2aTestAgent, options: Partial<HttpsTransportOptions> = {}) => httpsTransport({ url: agent.url, maxAttempts: 1, ...options });
  const startOnce = (protocol: A2aProtocol, transport: HttpsTransport, text = 'hi') => protocol.start({ requestId: randomUUID(), params: { text } }, callContext(transport, 'r'));

  it.each<[string, A2aVersion, () => A2aTestAgent]>([
    ['a 1.0 SDK agent', '1.0', () => sdk],
    ['a 1.0 SDK agent that also serves 0.3', '1.0', () => compat],
    ['a hand-written 0.3 agent', '0.3', () => handWritten],
  ])('reads %s as %s, through the agent’s transport', async (_what, version, agent) => {
    await expect(agentCardVersionResolver(transportTo(agent()))()).resolves.toBe(version);
    // A 1.0 server that also serves 0.3 hands out its 1.0 card only when asked for it.
    expect(agent().cardRequests.at(-1)).toMatchObject({ 'a2a-version': '1.0', accept: 'application/json' });
  });

  it('talks to each agent in the dialect its card names, and pins the dialect in the handle', async () => {
    const run = (agent: A2aTestAgent, text: string) => {
      const transport = transportTo(agent);
      return startOnce(new A2aProtocol({ version: agentCardVersionResolver(transport) }), transport, text);
    };

    const fromSdk = await run(sdk, 'hello');
    const fromHandWritten = await run(handWritten, '#task');

    expect(fromSdk).toMatchObject({ kind: 'success', text: 'a2a echo: hello' });
    expect(sdk.requests.at(-1)!.body.method).toBe('SendMessage');
    expect(fromHandWritten).toMatchObject({ kind: 'pending', handle: { a2aVersion: '0.3' } });
  });

  it('reads the card once and remembers it', async () => {
    let gets = 0;
    const counting: typeof fetch = (input, init) => {
      if (init?.method === 'GET') gets++;
      return fetch(input, init);
    };
    const resolve = agentCardVersionResolver(transportTo(sdk, { fetch: counting }));

    await Promise.all([resolve(), resolve()]);
    await resolve();

    expect(gets).toBe(1);
  });

  it('fails the task as retryable when the card cannot be fetched, and asks again next time', async () => {
    let gets = 0;
    const flaky: typeof fetch = (input, init) => (init?.method === 'GET' && ++gets === 1 ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init));
    const transport = transportTo(sdk, { fetch: flaky });
    const protocol = new A2aProtocol({ version: agentCardVersionResolver(transport) });

    const first = await startOnce(protocol, transport);
    const second = await startOnce(protocol, transport);

    expect(first).toMatchObject({ kind: 'failure', category: 'unavailable', code: 'a2a:version-unknown', retryable: true });
    expect(second).toMatchObject({ kind: 'success', text: 'a2a echo: hi' });
  });

  it('fails the task for good when there is no card to read', async () => {
    const transport = transportTo(sdk);
    const protocol = new A2aProtocol({ version: agentCardVersionResolver(transport, { path: '/no-card-here' }) });

    const outcome = await startOnce(protocol, transport);

    expect(outcome).toMatchObject({ kind: 'failure', category: 'unavailable', code: 'a2a:version-unknown', retryable: false, message: expect.stringContaining('HTTP 404') });
  });

  it('says so plainly when the transport cannot read documents (a2aVersion auto needs https)', async () => {
    const inProcess: Transport = { kind: 'in-process', send: async () => undefined };

    await expect(agentCardVersionResolver(inProcess)()).rejects.toThrow('the in-process transport cannot read the agent card (/.well-known/agent-card.json); a2aVersion auto needs transport https');
  });

  describe('of a bearer-protected agent', () => {
    let guarded: A2aTestAgent;
    beforeAll(async () => {
      guarded = await startSdkA2aAgent({ bearerToken: 'card-token-1' });
    });
    afterAll(() => guarded.close());

    it('reads the card with the agent’s token, and so detects its dialect', async () => {
      const transport = transportTo(guarded, { auth: { kind: 'bearer', token: staticSecret('card-token-1') } });
      const protocol = new A2aProtocol({ version: agentCardVersionResolver(transport) });

      const outcome = await startOnce(protocol, transport, 'hello');

      expect(outcome).toMatchObject({ kind: 'success', text: 'a2a echo: hello' });
      expect(guarded.cardRequests.at(-1)!.authorization).toBe('Bearer card-token-1');
      expect(guarded.requests.at(-1)!.body.method).toBe('SendMessage');
    });

    it.each<[string, Partial<HttpsTransportOptions>]>([
      ['without a token', { auth: { kind: 'none' } }],
      ['with the wrong token', { auth: { kind: 'bearer', token: staticSecret('not-the-token') } }],
    ])('fails %s, with an error that names the card, the 401 and the auth', async (_what, options) => {
      const transport = transportTo(guarded, options);
      const sent = guarded.requests.length;

      const outcome = await startOnce(new A2aProtocol({ version: agentCardVersionResolver(transport) }), transport);

      expect(outcome).toMatchObject({ kind: 'failure', category: 'unavailable', code: 'a2a:version-unknown', retryable: false });
      const { message } = outcome as Failure;
      expect(message).toContain(`${new URL(guarded.url).origin}/.well-known/agent-card.json answered HTTP 401`);
      expect(message).toContain("the card is requested with the same auth as the agent's tasks, and the agent refused it");
      expect(guarded.requests).toHaveLength(sent); // no task was sent in a guessed dialect
    });
  });
});

describe('slackThreadContextId', () => {
  it('is the same for every task of one thread, whoever writes and whatever the task', () => {
    const thread = { team_id: 'T1', channel: 'C1', thread_ts: '1700000000.000100' };

    expect(slackThreadContextId({ ...thread })).toBe('slack:T1:C1:1700000000.000100');
    expect(slackThreadContextId({ ...thread, text: 'later', user_id: 'U9', correlation_id: 'x' } as ExecuteTaskParams)).toBe('slack:T1:C1:1700000000.000100');
  });

  it('differs across teams, channels and threads', () => {
    const ids = [
      { team_id: 'T1', channel: 'C1', thread_ts: '1.1' },
      { team_id: 'T2', channel: 'C1', thread_ts: '1.1' },
      { team_id: 'T1', channel: 'C2', thread_ts: '1.1' },
      { team_id: 'T1', channel: 'C1', thread_ts: '1.2' },
      { channel: 'C1', thread_ts: '1.1' },
      // No separator inside a part can make two threads look alike.
      { team_id: 'T1:C1', channel: '1.1', thread_ts: 'x' },
      { team_id: 'T1', channel: 'C1:1.1', thread_ts: 'x' },
    ].map(slackThreadContextId);

    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[4]).toBe('slack::C1:1.1');
  });

  it.each([
    ['no channel', { team_id: 'T1', thread_ts: '1.1' }],
    ['no thread', { team_id: 'T1', channel: 'C1' }],
    ['an empty thread', { team_id: 'T1', channel: 'C1', thread_ts: '' }],
  ])('is left out with %s', (_what, params) => {
    expect(slackThreadContextId(params)).toBeUndefined();
  });
});

describe('categoryOfA2aError', () => {
  const info = (reason: string) => [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' }];

  it.each<[string, string, { code: number; message: string; data?: unknown }]>([
    ['an ErrorInfo rate limit, whatever the code', 'busy', { code: -32603, message: 'x', data: info('RATE_LIMIT_EXCEEDED') }],
    ['RESOURCE_EXHAUSTED', 'busy', { code: -32000, message: 'x', data: info('RESOURCE_EXHAUSTED') }],
    ['a reason in a single data object, in any case', 'busy', { code: -32603, message: 'x', data: { reason: 'quota_exceeded' } }],
    ['UNAVAILABLE', 'unavailable', { code: -32603, message: 'x', data: info('UNAVAILABLE') }],
    ['DEADLINE_EXCEEDED', 'timed-out', { code: -32603, message: 'x', data: info('DEADLINE_EXCEEDED') }],
    ['-32602 invalid params', 'rejected', { code: -32602, message: 'x' }],
    ['-32005 content type not supported', 'rejected', { code: -32005, message: 'x', data: info('CONTENT_TYPE_NOT_SUPPORTED') }],
    ['-32001 task not found', 'failed', { code: -32001, message: 'x', data: info('TASK_NOT_FOUND') }],
    ['-32009 version not supported', 'failed', { code: -32009, message: 'x' }],
    ['-32603 without a reason', 'failed', { code: -32603, message: 'rate limited, really' }],
  ])('%s → %s', (_what, category, error) => {
    expect(categoryOfA2aError(error)).toBe(category);
  });
});
