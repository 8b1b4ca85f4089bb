import { httpsTransport, agentCoreTransport } from '../support/transports';
import { createServer, type Server } from 'node:http';
import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { errorResponse, successResponse } from '../../src/contract';
import { readBody } from '../../src/execution/hosts/http-host';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { FailureCategory, Outcome, StreamStep } from '../../src/protocols/outcome';
import { InProcessTransport, type BodyHandler } from '../../src/transport/in-process';
import type { Transport } from '../../src/transport/transport';
import { userMessageForFailure } from '../../src/verification/messages/failure-messages';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { startSdkA2aAgent, startHandWrittenA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { closeServer, listenOnLoopback } from '../support/http';
import { startLegacyAgent, type LegacyTestAgent } from '../support/legacy-agent';
import { echoUsage } from '../support/echo-usage';

/**
 * One suite, the same cases over every transport: in-process, https to a loopback host, and
 * agentcore through the real SDK client and the local emulator. Swapping is configuration: each
 * case builds the agent from (protocol, transport) and never branches on either.
 */

/** A contract endpoint that misbehaves on request: its answers are chosen by the task text. */
const scripted: BodyHandler = async (bytes) => {
  const request = JSON.parse(Buffer.from(bytes).toString()) as { id: string; method: string; params: { text?: string; task_id?: string } };
  const text = request.params.text ?? '';
  const code = /#rpc-error=(-?\d+)/.exec(text)?.[1];
  if (code) return JSON.stringify(errorResponse(request.id, Number(code), 'scripted error', Number(code) === -32010 ? { retryable: true } : undefined));
  if (text.includes('#wrong-id')) return JSON.stringify(successResponse('someone-else', { status: 'success', response_text: 'x' }));
  if (text.includes('#garbage')) return '<html>oops</html>';
  if (text.includes('#empty')) return undefined;
  return JSON.stringify(successResponse(request.id, { status: 'success', response_text: `scripted: ${text}` }));
};

/**
 * The scripted endpoint read as a stream: a task with `#sse` asked with `stream: true` is answered
 * with progress events (`one `, `two `, `three`), then success; `#sse-cut` stops after two, as a
 * stream cut off does. Anything else is the one plain answer.
 */
async function* scriptedStream(bytes: Uint8Array): AsyncGenerator<string> {
  const request = JSON.parse(Buffer.from(bytes).toString()) as { id: string; params: { text?: string; stream?: boolean } };
  const text = request.params.text ?? '';
  if (!request.params.stream || !text.includes('#sse')) {
    const answer = await scripted(bytes);
    if (answer !== undefined) yield answer;
    return;
  }
  const words = ['one ', 'two ', 'three'];
  let cursor = 0;
  for (const word of words.slice(0, text.includes('#sse-cut') ? 2 : 3)) {
    cursor += word.length;
    yield JSON.stringify(successResponse(request.id, { status: 'working', task_id: 'task-sse', text: word, cursor: String(cursor) }));
  }
  if (!text.includes('#sse-cut')) yield JSON.stringify(successResponse(request.id, { status: 'success', response_text: words.join('') }));
}

function serve(handler: BodyHandler): Server {
  return createServer(async (req, res) => {
    const body = await readBody(req, 1_000_000);
    if ((req.headers.accept ?? '').includes('text/event-stream') && body.toString().includes('#sse')) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      for await (const event of scriptedStream(body as Buffer)) res.write(`data: ${event}\n\n`);
      return void res.end();
    }
    const answer = await handler(body as Buffer);
    if (answer === undefined) res.writeHead(204).end();
    else res.writeHead(200, { 'Content-Type': 'application/json' }).end(answer);
  });
}

/** Forwards every request to another URL, headers included (puts an A2A agent behind /invocations). */
function forwardTo(url: string): Server {
  return createServer(async (req, res) => {
    const body = await readBody(req, 1_000_000);
    const response = await fetch(url, { method: 'POST', body: new Uint8Array(body as Buffer), headers: { 'content-type': 'application/json', ...(req.headers['a2a-version'] ? { 'a2a-version': String(req.headers['a2a-version']) } : {}) } });
    res.writeHead(response.status, { 'Content-Type': response.headers.get('content-type') ?? 'application/json' }).end(await response.text());
  });
}

const ARN = (name: string) => `arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/${name}-0123456789`;

let runtime: RunningRuntime;
let scriptedServer: Server;
let scriptedUrl: string;
let sdkAgent: A2aTestAgent;
let handWritten: A2aTestAgent;
let legacy: LegacyTestAgent;
const proxies: Server[] = [];
const proxyUrls: Record<string, string> = {};
let emulator: AgentCoreEmulator;
let agentCoreClient: BedrockAgentCoreClient;

beforeAll(async () => {
  runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: '100' });
  scriptedServer = serve(scripted);
  scriptedUrl = await listenOnLoopback(scriptedServer);
  [sdkAgent, handWritten, legacy] = await Promise.all([startSdkA2aAgent({ legacyCompat: true }), startHandWrittenA2aAgent(), startLegacyAgent()]);
  for (const [name, url] of Object.entries({ sdk: sdkAgent.url, handWritten: handWritten.url })) {
    const proxy = forwardTo(url);
    proxies.push(proxy);
    proxyUrls[name] = await listenOnLoopback(proxy);
  }
  emulator = await startAgentCoreEmulator({
    runtimes: {
      [ARN('runtime')]: runtime.baseUrl,
      [ARN('scripted')]: scriptedUrl,
      [ARN('a2a_sdk')]: proxyUrls.sdk!,
      [ARN('a2a_hand')]: proxyUrls.handWritten!,
      [ARN('legacy')]: legacy.url,
      // Runtimes with ProtocolConfiguration A2A: one allow-lists A2A-Version, one does not.
      [ARN('a2a_v1')]: { url: sdkAgent.url, protocol: 'A2A', allowlistedHeaders: ['A2A-Version'] },
      [ARN('a2a_v1_no_allowlist')]: { url: sdkAgent.url, protocol: 'A2A' },
    },
  });
  agentCoreClient = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' }, maxAttempts: 1 });
});
afterAll(async () => {
  agentCoreClient.destroy();
  await Promise.all([runtime.close(), closeServer(scriptedServer), sdkAgent.close(), handWritten.close(), legacy.close(), emulator.close(), ...proxies.map(closeServer)]);
});

type Target = 'runtime' | 'scripted';
const transports: Record<string, (target: Target) => Transport> = {
  'in-process': (target) => (target === 'runtime' ? new InProcessTransport(runtime.runtime.dispatch) : new InProcessTransport(scripted, scriptedStream)),
  https: (target) => httpsTransport({ url: target === 'runtime' ? runtime.invocationsUrl : `${scriptedUrl}/invocations`, maxAttempts: 1 }),
  agentcore: (target) => agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN(target) }),
};

async function runToEnd(agent: ExecutionAgent, text: string): Promise<{ first: Outcome; last: Outcome }> {
  const requestId = globalThis.crypto.randomUUID();
  const first = await agent.start({ text }, { requestId });
  let last = first;
  for (let polls = 0; last.kind === 'pending' && polls < 50; polls += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await agent.poll(last.handle, { requestId });
  }
  return { first, last };
}

describe.each(Object.keys(transports))('execute-task over %s', (transportName) => {
  const agent = (target: Target) => new ExecutionAgent('matrix', createProtocol('execute-task'), transports[transportName]!(target));

  it('success', async () => {
    // The echo's usage (a token a word) crosses every transport with the answer.
    expect((await runToEnd(agent('runtime'), 'hi')).first).toEqual({ kind: 'success', text: 'echo: hi', extra: {}, usage: echoUsage('hi') });
  });

  it('accepted, then polled to success', async () => {
    const { first, last } = await runToEnd(agent('runtime'), 'slow #sleep=300');
    expect(first).toMatchObject({ kind: 'pending', handle: { taskId: expect.stringMatching(/^task-/) } });
    expect(last).toEqual({ kind: 'success', text: 'echo: slow #sleep=300', extra: {}, usage: echoUsage('slow #sleep=300') });
  });

  it.each<[number, FailureCategory, boolean]>([
    [-32000, 'failed', false],
    [-32001, 'timed-out', false],
    [-32002, 'failed', false],
    [-32003, 'cancelled', false],
    [-32010, 'busy', true],
    [-32011, 'rejected', false],
    [-32012, 'unavailable', true],
    [-32600, 'failed', false],
    [-32601, 'failed', false],
    [-32602, 'rejected', false],
    [-32603, 'failed', false],
  ])('JSON-RPC error %i → failure %s (retryable %s)', async (code, category, retryable) => {
    expect((await runToEnd(agent('scripted'), `#rpc-error=${code}`)).first).toEqual({ kind: 'failure', category, code, message: 'scripted error', retryable });
  });

  it.each([
    ['a response with another id', '#wrong-id', 'protocol:id-mismatch'],
    ['a malformed response', '#garbage', 'protocol:malformed'],
    ['an empty response', '#empty', 'protocol:empty'],
  ])('%s → a non-retryable failure', async (_label, text, code) => {
    expect((await runToEnd(agent('scripted'), text)).first).toMatchObject({ kind: 'failure', category: 'failed', code, retryable: false });
  });
});

async function readAll(stream: AsyncIterable<StreamStep>): Promise<StreamStep[]> {
  const steps: StreamStep[] = [];
  for await (const step of stream) steps.push(step);
  return steps;
}

describe.each(Object.keys(transports))('execute-task read as a stream over %s', (transportName) => {
  const agent = (target: Target) => new ExecutionAgent('matrix', createProtocol('execute-task'), transports[transportName]!(target));
  const streamed = (target: Target, text: string) => readAll(agent(target).startStreaming({ text }, { requestId: globalThis.crypto.randomUUID(), holdMs: 10_000 }));

  it('text steps as the agent produces them, each handle with its cursor; then the success', async () => {
    expect(await streamed('scripted', '#sse')).toEqual([
      { kind: 'text', text: 'one ', handle: { taskId: 'task-sse', cursor: '4' } },
      { kind: 'text', text: 'two ', handle: { taskId: 'task-sse', cursor: '8' } },
      { kind: 'text', text: 'three', handle: { taskId: 'task-sse', cursor: '13' } },
      { kind: 'success', text: 'one two three', extra: {} },
    ]);
  });

  it('a stream that ends before the task is pending from the last cursor', async () => {
    expect((await streamed('scripted', '#sse-cut')).at(-1)).toEqual({ kind: 'pending', handle: { taskId: 'task-sse', cursor: '8' }, state: 'working' });
  });

  it('an agent that answers plain JSON: its one outcome, as start gives it', async () => {
    expect(await streamed('scripted', 'plain')).toEqual([{ kind: 'success', text: 'scripted: plain', extra: {} }]);
    expect(await streamed('scripted', '#rpc-error=-32010')).toEqual([expect.objectContaining({ kind: 'failure', category: 'busy', retryable: true })]);
  });

  it('the reference runtime: the read ends with the whole answer, and any text before it is how the answer begins', async () => {
    const steps = await streamed('runtime', 'hi');
    const shown = steps.flatMap((step) => (step.kind === 'text' ? [step.text] : [])).join('');

    expect(steps.at(-1)).toEqual({ kind: 'success', text: 'echo: hi', extra: {}, usage: echoUsage('hi') });
    expect('echo: hi'.startsWith(shown)).toBe(true);
  });
});

it('AgentCore’s own throttling (ThrottlingException) reads as busy', async () => {
  emulator.injectFaults({ status: 429, type: 'ThrottlingException', message: 'Rate exceeded' });
  const agent = new ExecutionAgent('matrix', createProtocol('execute-task'), transports.agentcore!('runtime'));

  expect((await runToEnd(agent, 'hi')).first).toMatchObject({ kind: 'failure', category: 'busy', code: 'transport:throttled', retryable: true });
});

describe('a2a over https and agentcore', () => {
  const cases: Array<[string, () => Transport, '1.0' | '0.3']> = [
    ['A2A 1.0 (@a2a-js/sdk) over https', () => httpsTransport({ url: sdkAgent.url, maxAttempts: 1 }), '1.0'],
    ['A2A 0.3 (@a2a-js/sdk compat) over https', () => httpsTransport({ url: sdkAgent.url, maxAttempts: 1 }), '0.3'],
    ['A2A 0.3 (hand-written) over https', () => httpsTransport({ url: handWritten.url, maxAttempts: 1 }), '0.3'],
    // AgentCore passes A2A-Version to the agent when the runtime allow-lists it (RequestHeaderConfiguration).
    ['A2A 1.0 (@a2a-js/sdk) over agentcore, A2A-Version allow-listed', () => agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN('a2a_v1') }), '1.0'],
    ['A2A 0.3 (@a2a-js/sdk compat) over agentcore', () => agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN('a2a_sdk') }), '0.3'],
    ['A2A 0.3 (hand-written) over agentcore', () => agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN('a2a_hand') }), '0.3'],
  ];
  it.each(cases)('%s: success, and a task polled to completion', async (_label, transport, a2aVersion) => {
    const agent = new ExecutionAgent('a2a', createProtocol('a2a', { a2aVersion }), transport());
    expect((await runToEnd(agent, 'hello')).first).toMatchObject({ kind: 'success', text: expect.stringContaining('hello') });
    const { first, last } = await runToEnd(agent, 'long #task');
    expect(first.kind).toBe('pending');
    expect(last).toMatchObject({ kind: 'success' });
  });
});

describe('A2A 1.0 behind AgentCore without A2A-Version allow-listed', () => {
  it('fails clearly, naming the missing allowlist, and the proof that it matters: the same agent allow-listed answers', async () => {
    const agent = new ExecutionAgent('a2a', createProtocol('a2a', { a2aVersion: '1.0' }), agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN('a2a_v1_no_allowlist') }));
    const outcome = await agent.start({ text: 'hello' }, { requestId: crypto.randomUUID() });
    expect(outcome).toMatchObject({ kind: 'failure', retryable: false, category: 'unavailable' });
    expect(outcome.kind === 'failure' && outcome.message).toMatch(/A2A-Version.*RequestHeaderConfiguration/);
    // The header was sent, and AgentCore (the emulator) dropped it; allow-listed, it arrives.
    const dropped = emulator.invocations.filter((invocation) => invocation.runtimeArn === ARN('a2a_v1_no_allowlist'));
    expect(dropped.at(-1)?.forwardedHeaders).toBeUndefined();
    const allowed = new ExecutionAgent('a2a', createProtocol('a2a', { a2aVersion: '1.0' }), agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN('a2a_v1') }));
    expect(await allowed.start({ text: 'hello' }, { requestId: crypto.randomUUID() })).toMatchObject({ kind: 'success' });
    const passed = emulator.invocations.filter((invocation) => invocation.runtimeArn === ARN('a2a_v1'));
    expect(passed.at(-1)?.forwardedHeaders).toEqual({ 'a2a-version': '1.0' });
  });
});

describe('an A2A agent that is throttled reaches the user as "busy", whatever carries it', () => {
  it.each<[string, () => Transport, '1.0' | '0.3', string]>([
    ['A2A 1.0 (@a2a-js/sdk), its own rate limit (ErrorInfo), over https', () => httpsTransport({ url: sdkAgent.url, maxAttempts: 1 }), '1.0', '#rate-limited'],
    ['A2A 1.0 (@a2a-js/sdk), an HTTP 429 in front of it, over https', () => httpsTransport({ url: sdkAgent.url, maxAttempts: 1 }), '1.0', '#throttle'],
    ['A2A 0.3 (@a2a-js/sdk compat), an HTTP 429 in front of it, over https', () => httpsTransport({ url: sdkAgent.url, maxAttempts: 1 }), '0.3', '#throttle'],
    ['A2A 0.3 (hand-written), its own rate limit (ErrorInfo), over https', () => httpsTransport({ url: handWritten.url, maxAttempts: 1 }), '0.3', '#rate-limited'],
    ['A2A 0.3 (hand-written), its own rate limit (ErrorInfo), over agentcore', () => agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN('a2a_hand') }), '0.3', '#rate-limited'],
  ])('%s', async (_label, transport, a2aVersion, text) => {
    const agent = new ExecutionAgent('a2a', createProtocol('a2a', { a2aVersion }), transport());

    const { first } = await runToEnd(agent, text);

    expect(first).toMatchObject({ kind: 'failure', category: 'busy' });
    expect(DEFAULT_USER_MESSAGES[userMessageForFailure((first as { category: FailureCategory }).category)]).toBe(DEFAULT_USER_MESSAGES.modelBusy);
  });
});

describe('simple-a2a over https and agentcore', () => {
  it.each([
    ['https', () => httpsTransport({ url: legacy.url, maxAttempts: 1 })],
    ['agentcore', () => agentCoreTransport({ client: agentCoreClient, runtimeArn: ARN('legacy') })],
  ])('%s: success, error, malformed', async (_label, transport) => {
    const agent = new ExecutionAgent('legacy', createProtocol('simple-a2a'), transport());
    expect((await runToEnd(agent, 'hello')).first).toMatchObject({ kind: 'success', text: 'legacy: hello' });
    expect((await runToEnd(agent, '#error')).first).toMatchObject({ kind: 'failure', category: 'failed', retryable: false });
    expect((await runToEnd(agent, '#error=model throttled, try later')).first).toMatchObject({ kind: 'failure', category: 'busy', retryable: false });
    expect((await runToEnd(agent, '#garbage')).first).toMatchObject({ kind: 'failure', category: 'failed', code: 'protocol:malformed' });
  });
});
