import { httpsTransport } from '../support/transports';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { secretsManagerSecret, staticSecret, type SecretSource } from '../../src/secrets/secret-source';
import { sigv4TargetOfHost } from '../../src/transport/sigv4-signer';
import { TransportError } from '../../src/transport/transport';
import { startFakeSecretsManager } from '../support/fake-secrets-manager';
import { manualClock } from '../support/manual-clock';
import { caught, json, startTestServer, type TestServer } from './fixtures';

const key = { sessionKey: 'a1b2c3d4-0000-4000-8000-000000000002' };
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const signingDate = new Date('2026-11-21T12:34:56Z');

describe('HttpsTransport with SigV4', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer((_req, res) => json(res, 200, { ok: true }));
  });
  afterAll(() => server.close());

  it('sends an Authorization header that verifies when the request is signed again', async () => {
    // Prepare
    const transport = httpsTransport({
      url: `${server.url}/invocations?v=1`,
      auth: { kind: 'sigv4', credentials, service: 'lambda', region: 'us-east-1' },
      clock: manualClock(signingDate.getTime()),
    });
    const body = '{"jsonrpc":"2.0","id":"1","method":"execute_task","params":{"text":"hi"}}';
    // Act
    await transport.send(body, { ...key, correlationId: 'corr-1' });
    // Assess
    const seen = server.requests.at(-1)!;
    const authorization = String(seen.headers.authorization);
    expect(authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261121\/us-east-1\/lambda\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/);
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)![1]!.split(';');
    expect(signedHeaders).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-content-sha256', 'content-type', 'x-correlation-id']));
    expect(seen.headers['x-amz-date']).toBe('20261121T123456Z');
    expect(seen.headers['x-amz-content-sha256']).toBe(await sha256Hex(body));

    // Re-sign what the server received, with the same key and clock: the signatures must match.
    const url = new URL(server.url);
    const received = Object.fromEntries(signedHeaders.map((name) => [name, String(seen.headers[name])]));
    const resigned = await new SignatureV4({ service: 'lambda', region: 'us-east-1', credentials, sha256: Hash.bind(null, 'sha256') }).sign(
      new HttpRequest({ method: seen.method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/invocations', query: { v: '1' }, headers: received, body: seen.body }),
      { signingDate },
    );
    expect(resigned.headers.authorization).toBe(authorization);
  });

  it("uses the SDK's default credential chain when no credentials are given", async () => {
    const transport = httpsTransport({ url: server.url, auth: { kind: 'sigv4', service: 'lambda', region: 'us-east-1' } });
    await transport.send('{}', key);
    // test/support/jest-env.ts puts placeholder credentials in the environment, the chain's first source.
    expect(server.requests.at(-1)!.headers.authorization).toContain(`Credential=${process.env.AWS_ACCESS_KEY_ID}/`);
  });

  it('sends the session token of temporary credentials', async () => {
    const transport = httpsTransport({
      url: server.url,
      auth: { kind: 'sigv4', credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzEXAMPLE' }, service: 'execute-api', region: 'eu-west-1' },
    });
    await transport.send('{}', key);
    const seen = server.requests.at(-1)!;
    expect(seen.headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEXAMPLE');
    expect(seen.headers.authorization).toMatch(/\/eu-west-1\/execute-api\/aws4_request/);
  });

  it('signs for the service and region a Lambda function URL host names, by default', async () => {
    // A real function URL is not reachable offline: capture what would be sent instead.
    let sent: Headers | undefined;
    const transport = httpsTransport({
      url: 'https://abcdefghijklmnop.lambda-url.ap-northeast-1.on.aws/',
      auth: { kind: 'sigv4', credentials },
      fetch: async (_input, init) => {
        sent = new Headers(init?.headers);
        return new Response(null, { status: 204 });
      },
    });
    expect(transport.authKind).toBe('sigv4');
    await transport.send('{}', key);
    expect(sent?.get('authorization')).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/ap-northeast-1\/lambda\/aws4_request/);
  });

  it('defaults to sigv4 for a non-loopback URL', () => {
    expect(httpsTransport({ url: 'https://abc.execute-api.us-west-2.amazonaws.com/prod/invocations', auth: undefined }).authKind).toBe('sigv4');
  });
});

describe('sigv4TargetOfHost', () => {
  it.each([
    ['abcdef123.lambda-url.us-east-1.on.aws', { service: 'lambda', region: 'us-east-1' }],
    ['a1b2c3.execute-api.eu-central-1.amazonaws.com', { service: 'execute-api', region: 'eu-central-1' }],
    ['a1b2c3-vpce-0123.execute-api.us-west-2.amazonaws.com', { service: 'execute-api', region: 'us-west-2' }],
    ['a1b2c3.execute-api.cn-north-1.amazonaws.com.cn', { service: 'execute-api', region: 'cn-north-1' }],
    ['agent.example.com', {}],
    ['lambda-url.us-east-1.on.aws.evil.example', {}],
  ])('%s → %j', (host, expected) => {
    expect(sigv4TargetOfHost(host)).toEqual(expected);
  });
});

describe('HttpsTransport with a bearer token', () => {
  let server: TestServer;
  let validToken = 'token-2';
  beforeAll(async () => {
    server = await startTestServer((req, res) => (req.headers.authorization === `Bearer ${validToken}` ? json(res, 200, { ok: true }) : json(res, 401, { message: 'Unauthorized' })));
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    validToken = 'token-2';
  });

  /** A secret that holds token-1 until refreshed, then token-2, …; counts refreshes. */
  const rotatingProvider = () => {
    let current = 1;
    let refreshes = 0;
    const provider: SecretSource = {
      get: async () => `token-${current}`,
      refresh: async () => {
        refreshes++;
        return `token-${++current}`;
      },
    };
    return { provider, refreshes: () => refreshes };
  };

  it('sends Authorization: Bearer <token>', async () => {
    const transport = httpsTransport({ url: server.url, auth: { kind: 'bearer', token: staticSecret('token-2') } });
    await expect(transport.send('{}', key)).resolves.toBe('{"ok":true}');
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer token-2']);
  });

  it('a 401 refreshes the token once and tries again', async () => {
    const { provider, refreshes } = rotatingProvider();
    const transport = httpsTransport({ url: server.url, auth: { kind: 'bearer', token: provider } });
    await expect(transport.send('{}', key)).resolves.toBe('{"ok":true}');
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
    expect(refreshes()).toBe(1);
  });

  it('a second 401 after the refresh is a non-retryable auth fault (no loop)', async () => {
    validToken = 'never';
    const { provider, refreshes } = rotatingProvider();
    const transport = httpsTransport({ url: server.url, auth: { kind: 'bearer', token: provider } });
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error).toMatchObject({ reason: 'auth', retryable: false, details: { status: 401 } });
    expect(server.requests).toHaveLength(2);
    expect(refreshes()).toBe(1);
  });

  it('a static token that is refused is not sent again', async () => {
    const transport = httpsTransport({ url: server.url, auth: { kind: 'bearer', token: staticSecret('wrong') } });
    await expect(transport.send('{}', key)).rejects.toMatchObject({ reason: 'auth', retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it('a token provider that fails is a retryable auth fault, and nothing is sent', async () => {
    const transport = httpsTransport({
      url: server.url,
      auth: {
        kind: 'bearer',
        token: {
          get: () => Promise.reject(new Error('Secrets Manager unavailable')),
          refresh: () => Promise.reject(new Error('Secrets Manager unavailable')),
        },
      },
    });
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error).toMatchObject({ reason: 'auth', retryable: true });
    expect(server.requests).toHaveLength(0);
  });

  it('a token rotated in Secrets Manager is picked up after the 401, without a restart', async () => {
    const sm = await startFakeSecretsManager();
    try {
      const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:exec-token-AbCdEf';
      sm.setSecret(arn, '{"token":"token-2"}');
      // What the factory builds for EXECUTION_BEARER_SECRET_ARN.
      const transport = httpsTransport({ url: server.url, auth: { kind: 'bearer', token: secretsManagerSecret(arn, { jsonField: 'token' }) } });
      await expect(transport.send('{}', key)).resolves.toBe('{"ok":true}');

      sm.setSecret(arn, '{"token":"token-3"}');
      validToken = 'token-3';
      await expect(transport.send('{}', key)).resolves.toBe('{"ok":true}');

      expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer token-2', 'Bearer token-2', 'Bearer token-3']);
      expect(sm.requests).toHaveLength(2);
    } finally {
      await sm.close();
    }
  });
});

async function sha256Hex(text: string): Promise<string> {
  const hash = new Hash('sha256');
  hash.update(text);
  return Buffer.from(await hash.digest()).toString('hex');
}
