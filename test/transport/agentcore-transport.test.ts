import { agentCoreTransport } from '../support/transports';
import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { AgentCoreTransport, classifyAgentCoreFault } from '../../src/transport/agentcore';
import { runtimeSessionId } from '../../src/transport/session-id';
import { TransportError } from '../../src/transport/transport';
import { eventually } from '../support/http';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { caught, closedPortUrl, executeTask, getTaskResult, json, startTestServer, type TestServer } from './fixtures';
import { echoSuccess } from '../support/echo-usage';

const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/slack_zone_exec-AbCdEf1234';
const CRASHING_ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/crashing-AbCdEf1234';
const HANGING_ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/hanging-AbCdEf1234';
const HUGE_ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/huge-AbCdEf1234';
const GONE_ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/gone-AbCdEf1234';
const taskKey = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';

/** The real SDK client, pointed at the emulator; retries keep the SDK's logic but wait 1 ms. */
function clientFor(endpoint: string, maxAttempts = 3): BedrockAgentCoreClient {
  return new BedrockAgentCoreClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local-secret' },
    retryStrategy: new ConfiguredRetryStrategy(maxAttempts, 1),
  });
}

describe('AgentCoreTransport → real SDK client → AgentCore emulator → execution runtime', () => {
  let runtime: RunningRuntime;
  let crashing: TestServer;
  let hanging: TestServer;
  let huge: TestServer;
  let emulator: AgentCoreEmulator;
  let client: BedrockAgentCoreClient;
  let transport: AgentCoreTransport;

  beforeAll(async () => {
    runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: '50' });
    crashing = await startTestServer((_req, res) => json(res, 500, { error: 'Internal Server Error' }));
    hanging = await startTestServer(() => undefined);
    huge = await startTestServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'x'.repeat(300_000)}"`));
    emulator = await startAgentCoreEmulator({
      runtimes: { [ARN]: runtime.baseUrl, [CRASHING_ARN]: crashing.url, [HANGING_ARN]: hanging.url, [HUGE_ARN]: huge.url, [GONE_ARN]: await closedPortUrl() },
      // The emulator checks the SigV4 signature itself against this key, as AWS does.
      credentials: { AKIDLOCAL: 'local-secret' },
    });
    client = clientFor(emulator.endpoint);
    transport = agentCoreTransport({ client, runtimeArn: ARN });
  });
  afterAll(async () => {
    client.destroy();
    await emulator.close();
    await Promise.all([runtime.close(), crashing.close(), hanging.close(), huge.close()]);
  });
  beforeEach(() => {
    emulator.invocations.length = 0;
  });

  it('is refused, as AWS refuses it, when the signature was made with another secret key (the emulator verifies it)', async () => {
    const wrongSecret = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'not-the-secret' }, maxAttempts: 1 });
    const unknownKey = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDOTHER', secretAccessKey: 'local-secret' }, maxAttempts: 1 });
    try {
      await expect(agentCoreTransport({ client: wrongSecret, runtimeArn: ARN }).send(executeTask('hello', 'req-sig'), { sessionKey: taskKey })).rejects.toMatchObject({ reason: 'auth', retryable: false });
      expect(emulator.invocations.at(-1)).toMatchObject({ status: 403, errorType: 'InvalidSignatureException' });
      await expect(agentCoreTransport({ client: unknownKey, runtimeArn: ARN }).send(executeTask('hello', 'req-sig'), { sessionKey: taskKey })).rejects.toMatchObject({ reason: 'auth' });
      expect(emulator.invocations.at(-1)).toMatchObject({ status: 403, errorType: 'UnrecognizedClientException' });
    } finally {
      wrongSecret.destroy();
      unknownKey.destroy();
    }
  });

  it('brings back the runtime JSON-RPC answer, signed for bedrock-agentcore', async () => {
    // Act
    const body = await transport.send(executeTask('hello', 'req-1'), { sessionKey: taskKey });
    // Assess
    expect(JSON.parse(body!)).toEqual({ jsonrpc: '2.0', id: 'req-1', result: echoSuccess('hello') });
    expect(emulator.invocations).toEqual([
      expect.objectContaining({ runtimeArn: ARN, qualifier: undefined, status: 200, signingService: 'bedrock-agentcore', signingRegion: 'us-east-1' }),
    ]);
  });

  it('answers undefined for a notification (the runtime sends no content)', async () => {
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'fire and forget' } });
    await expect(transport.send(notification, { sessionKey: taskKey })).resolves.toBeUndefined();
  });

  it('every call about one task uses the same session, so get_task_result finds it', async () => {
    // Prepare: a task that outlives the 50 ms sync budget, so it is accepted and polled.
    const accepted = JSON.parse((await transport.send(executeTask('slow #sleep=200'), { sessionKey: taskKey }))!);
    expect(accepted.result).toMatchObject({ status: 'accepted', task_id: expect.any(String) });
    // Act
    const done = await eventually(async () => {
      const answer = JSON.parse((await transport.send(getTaskResult(accepted.result.task_id), { sessionKey: taskKey }))!);
      return answer.result?.status === 'success' ? answer : undefined;
    });
    // Assess
    expect(done.result.response_text).toBe('echo: slow #sleep=200');
    const sessions = new Set(emulator.invocations.map((i) => i.sessionId));
    expect([...sessions]).toEqual([runtimeSessionId(taskKey)]);
    expect(emulator.invocations.length).toBeGreaterThanOrEqual(2);
  });

  it('different tasks get different sessions', async () => {
    await transport.send(executeTask('a'), { sessionKey: 'task-a-0000-0000-0000-000000000000' });
    await transport.send(executeTask('b'), { sessionKey: 'task-b-0000-0000-0000-000000000000' });
    expect(new Set(emulator.invocations.map((i) => i.sessionId)).size).toBe(2);
  });

  it('a short session key still yields a session id AgentCore accepts (33+ characters)', async () => {
    await expect(transport.send(executeTask('short'), { sessionKey: 'x' })).resolves.toContain('echo: short');
    expect(emulator.invocations[0]!.sessionId!.length).toBeGreaterThanOrEqual(33);
    expect(emulator.invocations[0]!.status).toBe(200);
  });

  it('passes the qualifier (the runtime endpoint name)', async () => {
    const qualified = agentCoreTransport({ client, runtimeArn: ARN, qualifier: 'prod' });
    await qualified.send(executeTask('q'), { sessionKey: taskKey });
    expect(emulator.invocations.at(-1)).toMatchObject({ qualifier: 'prod', status: 200 });
  });

  it('an unknown runtime ARN is a non-retryable rejection, not retried by the SDK', async () => {
    const unknown = agentCoreTransport({ client, runtimeArn: ARN.replace('AbCdEf1234', 'ZzZzZz9999') });
    const error = await caught<TransportError>(() => unknown.send(executeTask('x'), { sessionKey: taskKey }));
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'rejected', retryable: false, details: { status: 404, transport: 'agentcore' } });
    expect(error.message).toMatch(/ResourceNotFoundException/);
    expect(emulator.invocations).toHaveLength(1);
  });

  it('a runtime that answers 500 surfaces as RuntimeClientError: reason runtime, retryable, not retried by the SDK', async () => {
    const error = await caught<TransportError>(() => agentCoreTransport({ client, runtimeArn: CRASHING_ARN }).send(executeTask('x'), { sessionKey: taskKey }));
    expect(error).toMatchObject({ reason: 'runtime', retryable: true, details: { status: 424 } });
    expect(error.message).toMatch(/RuntimeClientError: Received error \(500\) from runtime/);
    expect(crashing.requests).toHaveLength(1);
  });

  it('an unreachable runtime is a RuntimeClientError too', async () => {
    await expect(agentCoreTransport({ client, runtimeArn: GONE_ARN }).send(executeTask('x'), { sessionKey: taskKey })).rejects.toMatchObject({
      reason: 'runtime',
      retryable: true,
    });
  });

  it('the deadline option ends a call the runtime never answers: a retryable timeout', async () => {
    const slow = agentCoreTransport({ client, runtimeArn: HANGING_ARN, timeoutMs: 200 });
    const error = await caught<TransportError>(() => slow.send(executeTask('x'), { sessionKey: taskKey }));
    expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    expect(error.message).toMatch(/within 200 ms/);
  });

  it("the caller's signal cancels the call: a retryable timeout, not retried", async () => {
    const slow = agentCoreTransport({ client, runtimeArn: HANGING_ARN });
    const before = hanging.requests.length;
    const error = await caught<TransportError>(() => slow.send(executeTask('x'), { sessionKey: taskKey, signal: AbortSignal.timeout(150) }));
    expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    expect(error.message).toMatch(/cancelled/);
    expect(hanging.requests.length - before).toBe(1);
  });

  it('an already-aborted signal sends nothing', async () => {
    await expect(transport.send(executeTask('x'), { sessionKey: taskKey, signal: AbortSignal.abort() })).rejects.toMatchObject({ reason: 'timeout' });
    expect(emulator.invocations).toHaveLength(0);
  });

  it('a response over maxResponseBytes is too-large, not retryable', async () => {
    const limited = agentCoreTransport({ client, runtimeArn: HUGE_ARN, maxResponseBytes: 100_000 });
    await expect(limited.send(executeTask('x'), { sessionKey: taskKey })).rejects.toMatchObject({ reason: 'too-large', retryable: false });
    // The same body under a larger limit comes through whole.
    const roomy = agentCoreTransport({ client, runtimeArn: HUGE_ARN, maxResponseBytes: 1_000_000 });
    expect((await roomy.send(executeTask('x'), { sessionKey: taskKey }))!.length).toBe(300_002);
  });

  describe('faults AgentCore itself returns (emulator fault injection)', () => {
    it('throttling is retried by the SDK and then succeeds', async () => {
      emulator.injectFaults({ status: 429, type: 'ThrottlingException' }, { status: 429, type: 'ThrottlingException' });
      await expect(transport.send(executeTask('after throttling'), { sessionKey: taskKey })).resolves.toContain('echo: after throttling');
      expect(emulator.invocations.map((i) => i.status)).toEqual([429, 429, 200]);
    });

    it('throttling on every attempt ends as a retryable throttled fault after maxAttempts', async () => {
      emulator.injectFaults(...Array.from({ length: 3 }, () => ({ status: 429, type: 'ThrottlingException' })));
      const error = await caught<TransportError>(() => transport.send(executeTask('x'), { sessionKey: taskKey }));
      expect(error).toMatchObject({ reason: 'throttled', retryable: true, details: { status: 429 } });
      expect(error.message).toMatch(/after 3 attempts/);
      expect(emulator.invocations).toHaveLength(3);
    });

    it('an InternalServerException is retried by the SDK', async () => {
      emulator.injectFaults({ status: 500, type: 'InternalServerException' });
      await expect(transport.send(executeTask('after 500'), { sessionKey: taskKey })).resolves.toContain('echo: after 500');
      expect(emulator.invocations.map((i) => i.status)).toEqual([500, 200]);
    });

    it('a persistent InternalServerException is a retryable server fault', async () => {
      emulator.injectFaults(...Array.from({ length: 3 }, () => ({ status: 500, type: 'InternalServerException' })));
      await expect(transport.send(executeTask('x'), { sessionKey: taskKey })).rejects.toMatchObject({ reason: 'server', retryable: true });
      expect(emulator.invocations).toHaveLength(3);
    });

    it('a 409 RetryableConflictException (the session in use) is retried by the SDK and then succeeds', async () => {
      emulator.injectFaults({ status: 409, type: 'RetryableConflictException' }, { status: 409, type: 'RetryableConflictException' });
      await expect(transport.send(executeTask('after 409'), { sessionKey: taskKey })).resolves.toContain('echo: after 409');
      expect(emulator.invocations.map((i) => i.status)).toEqual([409, 409, 200]);
    });

    it('a 409 that outlasts the SDK\'s attempts is a retryable session-busy fault (the invoker queues the task again)', async () => {
      emulator.injectFaults(...Array.from({ length: 3 }, () => ({ status: 409, type: 'RetryableConflictException' })));
      const error = await caught<TransportError>(() => transport.send(executeTask('x'), { sessionKey: taskKey }));
      expect(error).toMatchObject({ reason: 'session-busy', retryable: true, details: { status: 409 } });
      expect(emulator.invocations).toHaveLength(3);
    });

    it('StopRuntimeSession answered 409 is retried by the SDK, then a retryable session-busy fault', async () => {
      await transport.send(executeTask('open the session'), { sessionKey: 'stop-409-session-key' });
      emulator.injectStopFaults({ status: 409, type: 'RetryableConflictException' });
      await expect(transport.stopSession('stop-409-session-key')).resolves.toBeUndefined();
      expect(emulator.stops.at(-1)).toMatchObject({ ended: true });
      emulator.injectStopFaults(...Array.from({ length: 3 }, () => ({ status: 409, type: 'RetryableConflictException' })));
      await expect(transport.stopSession('stop-409-session-key')).rejects.toMatchObject({ reason: 'session-busy', retryable: true });
    });

    it.each([
      [400, 'ValidationException', 'rejected', false],
      [403, 'AccessDeniedException', 'auth', false],
      [402, 'ServiceQuotaExceededException', 'session-quota', true],
    ] as const)('%i %s → %s, retryable %s, one request', async (status, type, reason, retryable) => {
      emulator.injectFaults({ status, type });
      const error = await caught<TransportError>(() => transport.send(executeTask('x'), { sessionKey: taskKey }));
      expect(error).toMatchObject({ reason, retryable, details: { status } });
      expect(error.message).toContain(type);
      expect(emulator.invocations).toHaveLength(1);
    });
  });
});

describe('AgentCoreTransport without an emulator', () => {
  it('connection refused is retried by the SDK, then a retryable connection fault', async () => {
    const client = clientFor(await closedPortUrl());
    try {
      const error = await caught<TransportError>(() => agentCoreTransport({ client, runtimeArn: ARN }).send('{}', { sessionKey: taskKey }));
      expect(error).toMatchObject({ reason: 'connection', retryable: true });
      expect(error.message).toMatch(/ECONNREFUSED.*after 3 attempts/);
    } finally {
      client.destroy();
    }
  });

  it('a response body that stalls after the headers is still cut off by the deadline', async () => {
    // Stands in for AgentCore itself: it answers 200 and then never finishes the body.
    const stalling = await startTestServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0",');
    });
    const client = clientFor(stalling.url);
    try {
      const error = await caught<TransportError>(() => agentCoreTransport({ client, runtimeArn: ARN, timeoutMs: 200 }).send('{}', { sessionKey: taskKey }));
      expect(error).toMatchObject({ reason: 'timeout', retryable: true });
      expect(stalling.requests).toHaveLength(1);
    } finally {
      client.destroy();
      await stalling.close();
    }
  });

  it('AWS_ENDPOINT_URL_BEDROCK_AGENTCORE points a client built with no endpoint at the emulator', async () => {
    // Prepare
    const runtime = await startExecutionRuntime();
    const emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: runtime.baseUrl } });
    const previous = process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE;
    process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE = emulator.endpoint;
    const client = new BedrockAgentCoreClient({ region: 'us-east-1' });
    try {
      // Act
      const body = await agentCoreTransport({ client, runtimeArn: ARN }).send(executeTask('via env'), { sessionKey: taskKey });
      // Assess
      expect(body).toContain('echo: via env');
      expect(emulator.invocations).toHaveLength(1);
    } finally {
      if (previous === undefined) delete process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE;
      else process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE = previous;
      client.destroy();
      await emulator.close();
      await runtime.close();
    }
  });
});

describe('classifyAgentCoreFault', () => {
  it.each([
    ['RetryableConflictException', 409, 'session-busy', true],
    ['UnrecognizedClientException', 403, 'auth', false],
    ['CredentialsProviderError', undefined, 'auth', false],
    ['SomethingNew', 503, 'server', true],
    ['SomethingNew', 418, 'rejected', false],
    ['SomethingNew', 413, 'too-large', false],
    ['Error', undefined, 'connection', true],
  ] as const)('%s (HTTP %s) → %s, retryable %s', (name, status, reason, retryable) => {
    expect(classifyAgentCoreFault(name, status)).toEqual([reason, retryable]);
  });
});
