import { BedrockAgentCoreClient, InvokeAgentRuntimeCommand, ValidationException } from '@aws-sdk/client-bedrock-agentcore';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { caught, json, startTestServer, type TestServer } from './fixtures';

const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/recorder-AbCdEf1234';
const SESSION = 'session-0000000000000000000000000000001';
const SIGNED = 'AWS4-HMAC-SHA256 Credential=AKIDLOCAL/20261121/us-east-1/bedrock-agentcore/aws4_request, SignedHeaders=host;x-amz-date, Signature=00';
const invocationsUrl = (endpoint: string, arn = ARN, query = '') => `${endpoint}/runtimes/${encodeURIComponent(arn)}/invocations${query}`;

describe('startAgentCoreEmulator', () => {
  let agent: TestServer;
  let emulator: AgentCoreEmulator;
  beforeAll(async () => {
    agent = await startTestServer((req, res) => json(res, 200, { echoed: req.body }));
    emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: agent.url } });
  });
  afterAll(async () => {
    await emulator.close();
    await agent.close();
  });

  const post = (url: string, headers: Record<string, string>, body = '{"hello":1}') =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('forwards the body to /invocations with the session and a request id, as AgentCore does', async () => {
    const response = await post(invocationsUrl(emulator.endpoint, ARN, '?qualifier=DEFAULT'), { authorization: SIGNED, 'x-amzn-bedrock-agentcore-runtime-session-id': SESSION });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ echoed: '{"hello":1}' });
    expect(response.headers.get('x-amzn-bedrock-agentcore-runtime-session-id')).toBe(SESSION);
    const seen = agent.requests.at(-1)!;
    expect(seen.path).toBe('/invocations');
    expect(seen.headers['x-amzn-bedrock-agentcore-runtime-session-id']).toBe(SESSION);
    expect(seen.headers['x-amzn-bedrock-agentcore-runtime-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.headers.authorization).toBeUndefined();
    expect(emulator.invocations.at(-1)).toMatchObject({ runtimeArn: ARN, qualifier: 'DEFAULT', sessionId: SESSION, status: 200 });
  });

  it.each([
    ['no Authorization header', {}],
    ['a non-SigV4 Authorization header', { authorization: 'Bearer abc' }],
    ['SigV4 without a credential scope', { authorization: 'AWS4-HMAC-SHA256 Signature=00' }],
  ])('refuses %s with 403 AccessDeniedException', async (_label, headers) => {
    const before = agent.requests.length;
    const response = await post(invocationsUrl(emulator.endpoint), { ...headers, 'x-amzn-bedrock-agentcore-runtime-session-id': SESSION });
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toBe('AccessDeniedException');
    expect(await response.json()).toEqual({ message: expect.any(String) });
    expect(agent.requests.length).toBe(before);
  });

  it.each([
    ['missing', undefined],
    ['32 characters', 'x'.repeat(32)],
    ['257 characters', 'x'.repeat(257)],
  ])('refuses a session id that is %s with 400 ValidationException', async (_label, session) => {
    const response = await post(invocationsUrl(emulator.endpoint), { authorization: SIGNED, ...(session ? { 'x-amzn-bedrock-agentcore-runtime-session-id': session } : {}) });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-amzn-errortype')).toBe('ValidationException');
  });

  it('accepts session ids of exactly 33 and 256 characters', async () => {
    for (const session of ['x'.repeat(33), 'x'.repeat(256)]) {
      const response = await post(invocationsUrl(emulator.endpoint), { authorization: SIGNED, 'x-amzn-bedrock-agentcore-runtime-session-id': session });
      expect(response.status).toBe(200);
    }
  });

  it('refuses an unknown runtime with 404 ResourceNotFoundException and an unknown path with 404', async () => {
    const unknown = await post(invocationsUrl(emulator.endpoint, `${ARN}x`), { authorization: SIGNED, 'x-amzn-bedrock-agentcore-runtime-session-id': SESSION });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-amzn-errortype')).toBe('ResourceNotFoundException');
    expect((await post(`${emulator.endpoint}/elsewhere`, { authorization: SIGNED })).status).toBe(404);
  });

  it('speaks restJson1 errors the real SDK turns into its modelled exceptions', async () => {
    const client = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } });
    try {
      // The SDK does not check lengths itself: the service does, and so does the emulator.
      const error = await caught<ValidationException>(() =>
        client.send(new InvokeAgentRuntimeCommand({ agentRuntimeArn: ARN, runtimeSessionId: 'too-short', payload: new TextEncoder().encode('{}') })),
      );
      expect(error).toBeInstanceOf(ValidationException);
      expect(error.reason).toBe('FieldValidationFailed');
      expect(error.$metadata.httpStatusCode).toBe(400);
    } finally {
      client.destroy();
    }
  });

  it('serves injected faults before invoking the agent, with Retry-After when asked', async () => {
    const before = agent.requests.length;
    emulator.injectFaults({ status: 429, type: 'ThrottlingException', retryAfterSeconds: 1 });
    const faulted = await post(invocationsUrl(emulator.endpoint), { authorization: SIGNED, 'x-amzn-bedrock-agentcore-runtime-session-id': SESSION });
    expect(faulted.status).toBe(429);
    expect(faulted.headers.get('x-amzn-errortype')).toBe('ThrottlingException');
    expect(faulted.headers.get('retry-after')).toBe('1');
    expect(agent.requests.length).toBe(before);
    const next = await post(invocationsUrl(emulator.endpoint), { authorization: SIGNED, 'x-amzn-bedrock-agentcore-runtime-session-id': SESSION });
    expect(next.status).toBe(200);
  });

  it('takes a fault function that decides per request', async () => {
    const selective = await startAgentCoreEmulator({
      runtimes: { [ARN]: agent.url },
      faults: ({ sessionId }) => (sessionId.startsWith('slow') ? { status: 500, type: 'InternalServerException' } : undefined),
    });
    try {
      const slow = await post(invocationsUrl(selective.endpoint), { authorization: SIGNED, 'x-amzn-bedrock-agentcore-runtime-session-id': `slow-${SESSION}` });
      const fine = await post(invocationsUrl(selective.endpoint), { authorization: SIGNED, 'x-amzn-bedrock-agentcore-runtime-session-id': SESSION });
      expect([slow.status, fine.status]).toEqual([500, 200]);
    } finally {
      await selective.close();
    }
  });
});
