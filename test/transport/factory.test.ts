import { InvokeAgentRuntimeCommand } from '@aws-sdk/client-bedrock-agentcore';
import { ConfigError } from '../../src/config/env';
import { startAgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { staticSecret } from '../../src/secrets/secret-source';
import { AgentCoreTransport } from '../../src/transport/agentcore';
import { ENV_VARIABLES, transportConfigFrom, transportEnvironment } from '../../src/transport/config';
import { createTransport } from '../../src/transport/factory';
import { HttpsTransport } from '../../src/transport/https';
import { InProcessTransport } from '../../src/transport/in-process';
import { startExecutionRuntime } from '../support/execution-runtime';
import { executeTask, json, startTestServer } from './fixtures';

const ARN = 'arn:aws:bedrock-agentcore:eu-west-1:123456789012:runtime/slack_zone_exec-AbCdEf1234';
const transportConfigFromEnv = (env: NodeJS.ProcessEnv) => transportConfigFrom({ env });

describe('transportConfigFrom', () => {
  it('defaults to agentcore, which needs a runtime ARN', () => {
    expect(() => transportConfigFromEnv({})).toThrow(new ConfigError('invalid transport configuration: TRANSPORT=agentcore needs AGENTCORE_RUNTIME_ARN'));
    expect(transportConfigFromEnv({ AGENTCORE_RUNTIME_ARN: ARN, AGENTCORE_QUALIFIER: 'prod', AWS_REGION: 'us-east-1' })).toEqual({
      kind: 'agentcore',
      runtimeArn: ARN,
      qualifier: 'prod',
      region: 'us-east-1',
      maxAttempts: 3,
      maxResponseBytes: 10 * 1024 * 1024,
      streamHoldS: 30,
      streamQuietS: 5,
    });
  });

  it('names the variable when a value is wrong', () => {
    expect(() => transportConfigFromEnv({ AGENTCORE_RUNTIME_ARN: 'my-runtime' })).toThrow(/AGENTCORE_RUNTIME_ARN: must be an AgentCore runtime ARN/);
    expect(() => transportConfigFromEnv({ TRANSPORT: 'carrier-pigeon' })).toThrow(/TRANSPORT/);
    expect(() => transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'https://x.example', EXECUTION_MAX_ATTEMPTS: '0' })).toThrow(/EXECUTION_MAX_ATTEMPTS/);
    expect(() => transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'https://x.example', EXECUTION_AUTH: 'basic' })).toThrow(/EXECUTION_AUTH/);
  });

  it('reads the https settings, with defaults, and treats empty variables as unset', () => {
    expect(transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'http://127.0.0.1:8080/invocations', EXECUTION_AUTH: '', EXECUTION_TIMEOUT_MS: '5000' })).toEqual({
      kind: 'https',
      url: 'http://127.0.0.1:8080/invocations',
      timeoutMs: 5000,
      maxAttempts: 3,
      baseDelayMs: 200,
      maxDelayMs: 5000,
      maxRetryAfterMs: 10_000,
      maxResponseBytes: 10 * 1024 * 1024,
      streamHoldS: 30,
      streamQuietS: 5,
    });
    expect(() => transportConfigFromEnv({ TRANSPORT: 'https' })).toThrow(/TRANSPORT=https needs EXECUTION_URL/);
  });

  it('bearer auth needs a token or the ARN of a secret holding one', () => {
    expect(() => transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'https://x.example', EXECUTION_AUTH: 'bearer' })).toThrow(
      /EXECUTION_AUTH=bearer needs EXECUTION_BEARER_TOKEN or EXECUTION_BEARER_SECRET_ARN/,
    );
  });

  it("takes one agent's entry over the variables, keeping the shared settings (timeouts, retries, token)", () => {
    const env = { TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: ARN, EXECUTION_TIMEOUT_MS: '7000', EXECUTION_MAX_ATTEMPTS: '5', EXECUTION_BEARER_TOKEN: 'shared' };
    const entry = { kind: 'https' as const, fields: { url: 'https://agent-b.example/a2a', auth: 'bearer' }, label: 'EXECUTION_AGENTS[1]' };

    expect(transportConfigFrom({ env, entry })).toMatchObject({ kind: 'https', url: 'https://agent-b.example/a2a', auth: 'bearer', bearerToken: 'shared', timeoutMs: 7000, maxAttempts: 5 });
    expect(transportConfigFrom({ env, entry: { ...entry, fields: { ...entry.fields, timeoutMs: 900 } } })).toMatchObject({ timeoutMs: 900, maxAttempts: 5 });
  });

  it('names an entry\'s own bad or unknown option by its place in EXECUTION_AGENTS', () => {
    const entry = (fields: Record<string, unknown>) => ({ kind: 'agentcore' as const, fields, label: 'EXECUTION_AGENTS[0]' });

    expect(() => transportConfigFrom({ entry: entry({}) })).toThrow(/EXECUTION_AGENTS\[0\]\.runtimeArn: transport agentcore needs runtimeArn/);
    expect(() => transportConfigFrom({ entry: entry({ runtimeArn: ARN, runtimeARN: ARN }) })).toThrow(/EXECUTION_AGENTS\[0\].*runtimeARN/);
    expect(() => transportConfigFrom({ entry: entry({ runtimeArn: ARN, maxAttempts: 0 }) })).toThrow(/EXECUTION_AGENTS\[0\]\.maxAttempts/);
  });

  it('applies overrides over the environment and defaults under it', () => {
    const env = { TRANSPORT: 'https', EXECUTION_URL: 'https://from-env.example/' };

    expect(transportConfigFrom({ env, overrides: { https: { url: 'https://flag.example/' } } })).toMatchObject({ kind: 'https', url: 'https://flag.example/' });
    expect(transportConfigFrom({ env, defaults: { https: { url: 'https://default.example/' } } })).toMatchObject({ url: 'https://from-env.example/' });
    expect(transportConfigFrom({ env: {}, defaults: { kind: 'https', https: { url: 'http://127.0.0.1:1/' } } })).toMatchObject({ kind: 'https', url: 'http://127.0.0.1:1/' });
    expect(transportConfigFrom({ env: { TRANSPORT: 'in-process' }, defaults: { kind: 'https' } })).toEqual({ kind: 'in-process', streamHoldS: 30, streamQuietS: 5 });
  });

  it('writes a configuration back as the environment a deployment sets, and reads it again unchanged', () => {
    const env = transportEnvironment('https', { url: 'https://x.example/', auth: 'bearer', bearerSecretArn: 'token-secret', timeoutMs: 4000 });

    expect(env).toEqual({ TRANSPORT: 'https', EXECUTION_URL: 'https://x.example/', EXECUTION_AUTH: 'bearer', EXECUTION_BEARER_SECRET_ARN: 'token-secret', EXECUTION_TIMEOUT_MS: '4000' });
    expect(transportConfigFrom({ env })).toMatchObject({ kind: 'https', url: 'https://x.example/', auth: 'bearer', bearerSecretArn: 'token-secret', timeoutMs: 4000 });
    expect(() => transportEnvironment('agentcore', { url: 'https://x.example/' } as never)).toThrow(/agentcore has no option url/);
  });

  it('lists a variable for every option of every transport (a new option cannot be left unreadable)', () => {
    expect(Object.keys(ENV_VARIABLES.https).sort()).toEqual(['auth', 'baseDelayMs', 'bearerSecretArn', 'bearerToken', 'maxAttempts', 'maxDelayMs', 'maxResponseBytes', 'maxRetryAfterMs', 'region', 'sigv4Service', 'streamHoldS', 'streamQuietS', 'timeoutMs', 'url']);
    expect(Object.keys(ENV_VARIABLES.agentcore).sort()).toEqual(['maxAttempts', 'maxResponseBytes', 'qualifier', 'region', 'runtimeArn', 'streamHoldS', 'streamQuietS', 'timeoutMs']);
    expect(Object.keys(ENV_VARIABLES['in-process'])).toEqual(['streamHoldS', 'streamQuietS']);
  });

  it('reads the hold of streamed reads for every transport: STREAM_HOLD_S, default 30, 0 for none, at most 900', () => {
    expect(transportConfigFromEnv({ TRANSPORT: 'in-process', STREAM_HOLD_S: '0' })).toEqual({ kind: 'in-process', streamHoldS: 0, streamQuietS: 5 });
    expect(transportConfigFromEnv({ AGENTCORE_RUNTIME_ARN: ARN, STREAM_HOLD_S: '45' })).toMatchObject({ kind: 'agentcore', streamHoldS: 45 });
    expect(transportConfigFrom({ env: { STREAM_HOLD_S: '45' }, entry: { kind: 'https', fields: { url: 'https://x.example/', streamHoldS: 5 }, label: 'EXECUTION_AGENTS[0]' } })).toMatchObject({ streamHoldS: 5 });
    expect(() => transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'https://x.example', STREAM_HOLD_S: '901' })).toThrow(/STREAM_HOLD_S/);
    expect(() => transportConfigFromEnv({ TRANSPORT: 'in-process', STREAM_HOLD_S: '-1' })).toThrow(/STREAM_HOLD_S/);
  });

  it('reads how long a held stream may be quiet: STREAM_QUIET_S, default 5, 1 to 900, per agent too', () => {
    expect(transportConfigFromEnv({ TRANSPORT: 'in-process', STREAM_QUIET_S: '3' })).toEqual({ kind: 'in-process', streamHoldS: 30, streamQuietS: 3 });
    expect(transportConfigFrom({ env: { STREAM_QUIET_S: '3' }, entry: { kind: 'https', fields: { url: 'https://x.example/', streamQuietS: 60 }, label: 'EXECUTION_AGENTS[0]' } })).toMatchObject({ streamQuietS: 60 });
    expect(() => transportConfigFromEnv({ TRANSPORT: 'in-process', STREAM_QUIET_S: '0' })).toThrow(/STREAM_QUIET_S/);
    expect(() => transportConfigFromEnv({ TRANSPORT: 'in-process', STREAM_QUIET_S: '901' })).toThrow(/STREAM_QUIET_S/);
  });
});

describe('createTransport', () => {
  it('https to a loopback URL: no auth; to a function URL: sigv4', () => {
    const local = createTransport(transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'http://127.0.0.1:8080/invocations' }));
    expect(local).toBeInstanceOf(HttpsTransport);
    expect((local as HttpsTransport).authKind).toBe('none');
    const remote = createTransport(transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'https://abc.lambda-url.us-east-1.on.aws/' }));
    expect((remote as HttpsTransport).authKind).toBe('sigv4');
  });

  it('https with plain http:// to another host fails as a configuration error', () => {
    expect(() => createTransport(transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: 'http://exec.internal:8080/invocations' }))).toThrow(ConfigError);
  });

  it('https with a custom domain and sigv4 needs EXECUTION_SIGV4_SERVICE, then signs with it in AWS_REGION', async () => {
    const env = { TRANSPORT: 'https', EXECUTION_URL: 'https://agent.example.com/invocations', EXECUTION_AUTH: 'sigv4', AWS_REGION: 'ap-southeast-2' };
    expect(() => createTransport(transportConfigFromEnv(env))).toThrow(/EXECUTION_SIGV4_SERVICE/);
    let authorization: string | null = null;
    const transport = createTransport(transportConfigFromEnv({ ...env, EXECUTION_SIGV4_SERVICE: 'execute-api' }), {
      credentials: { accessKeyId: 'AKIDFACTORY', secretAccessKey: 's' },
      fetch: async (_url, init) => {
        authorization = new Headers(init?.headers).get('authorization');
        return new Response('{"ok":true}', { status: 200 });
      },
    });
    await transport.send('{}', { sessionKey: 'k' });
    expect(authorization).toMatch(/Credential=AKIDFACTORY\/\d{8}\/ap-southeast-2\/execute-api\/aws4_request/);
  });

  it('https with a bearer token from the environment, over a real loopback server', async () => {
    const server = await startTestServer((req, res) => json(res, 200, { auth: req.headers.authorization }));
    try {
      const transport = createTransport(
        transportConfigFromEnv({ TRANSPORT: 'https', EXECUTION_URL: server.url, EXECUTION_AUTH: 'bearer', EXECUTION_BEARER_TOKEN: 'tok-from-env' }),
      );
      expect(await transport.send('{}', { sessionKey: 'k' })).toBe('{"auth":"Bearer tok-from-env"}');
    } finally {
      await server.close();
    }
  });

  it('https with a bearer secret uses the injected token provider instead of AWS', async () => {
    const server = await startTestServer((req, res) => json(res, 200, { auth: req.headers.authorization }));
    try {
      const config = transportConfigFromEnv({
        TRANSPORT: 'https',
        EXECUTION_URL: server.url,
        EXECUTION_AUTH: 'bearer',
        EXECUTION_BEARER_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:exec-token',
      });
      const transport = createTransport(config, { bearerTokenProvider: staticSecret('tok-from-provider') });
      expect(await transport.send('{}', { sessionKey: 'k' })).toBe('{"auth":"Bearer tok-from-provider"}');
    } finally {
      await server.close();
    }
  });

  it('agentcore builds its own client in the region of the runtime ARN, honouring the endpoint override', async () => {
    // Prepare
    const runtime = await startExecutionRuntime();
    const emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: runtime.baseUrl } });
    const previous = process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE;
    process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE = emulator.endpoint;
    try {
      const transport = createTransport(transportConfigFromEnv({ TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: ARN, AWS_REGION: 'us-east-1' }));
      expect(transport).toBeInstanceOf(AgentCoreTransport);
      // Act
      const body = await transport.send(executeTask('from the factory'), { sessionKey: 'f47ac10b-58cc-4372-a567-0e02b2c3d479' });
      // Assess
      expect(body).toContain('echo: from the factory');
      expect(emulator.invocations[0]).toMatchObject({ signingRegion: 'eu-west-1', signingService: 'bedrock-agentcore' });

      // AGENTCORE_MAX_ATTEMPTS reaches the SDK's retry strategy.
      const impatient = createTransport(transportConfigFromEnv({ AGENTCORE_RUNTIME_ARN: ARN, AGENTCORE_MAX_ATTEMPTS: '2' }));
      emulator.injectFaults(...Array.from({ length: 3 }, () => ({ status: 429, type: 'ThrottlingException' })));
      await expect(impatient.send(executeTask('x'), { sessionKey: 'k' })).rejects.toMatchObject({ reason: 'throttled', retryable: true });
      expect(emulator.invocations.slice(1).map((i) => i.status)).toEqual([429, 429]);
    } finally {
      if (previous === undefined) delete process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE;
      else process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE = previous;
      await emulator.close();
      await runtime.close();
    }
  });

  it('agentcore sends through an injected client, one InvokeAgentRuntime for the configured runtime', async () => {
    // Prepare: a client that answers every command with a JSON body, as the SDK streams it.
    const send = jest.fn(async (_command: unknown, _options?: unknown) => ({
      response: (async function* () {
        yield new TextEncoder().encode('{"jsonrpc":"2.0","id":"1","result":{"status":"success","response_text":"from the injected client"}}');
      })(),
    }));
    const transport = createTransport(transportConfigFromEnv({ AGENTCORE_RUNTIME_ARN: ARN, AGENTCORE_QUALIFIER: 'live' }), { agentCoreClient: { send } as never });
    expect(transport).toBeInstanceOf(AgentCoreTransport);
    // Act
    const body = await transport.send(executeTask('via the injected client', '1'), { sessionKey: 'f47ac10b-58cc-4372-a567-0e02b2c3d479' });
    // Assess
    expect(body).toContain('from the injected client');
    expect(send).toHaveBeenCalledTimes(1);
    const [command] = send.mock.calls[0]!;
    expect(command).toBeInstanceOf(InvokeAgentRuntimeCommand);
    const input = (command as InvokeAgentRuntimeCommand).input;
    expect(input).toMatchObject({ agentRuntimeArn: ARN, qualifier: 'live', contentType: 'application/json', accept: 'application/json' });
    expect(new TextDecoder().decode(input.payload as Uint8Array)).toBe(executeTask('via the injected client', '1'));
  });

  it('in-process needs the dispatcher from whoever wires the stack, and fails clearly without it', async () => {
    const config = transportConfigFromEnv({ TRANSPORT: 'in-process' });
    expect(() => createTransport(config)).toThrow(/TRANSPORT=in-process .* local runs and tests only/);
    const transport = createTransport(config, { inProcess: async (body) => `got ${new TextDecoder().decode(body)}` });
    expect(transport).toBeInstanceOf(InProcessTransport);
    await expect(transport.send('{"a":1}', { sessionKey: 'k' })).resolves.toBe('got {"a":1}');
  });
});
