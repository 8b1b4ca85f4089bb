import { httpsTransport } from '../support/transports';
import { ConfigError } from '../../src/config/env';
import { staticSecret } from '../../src/secrets/secret-source';
import { HttpsTransport, type HttpsTransportOptions } from '../../src/transport/https';
import { TransportError } from '../../src/transport/transport';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { caught, closedPortUrl, executeTask, json, recordingSleep, startTestServer, type TestServer } from './fixtures';
import { echoSuccess } from '../support/echo-usage';

const key = { sessionKey: 'a1b2c3d4-0000-4000-8000-000000000001' };

describe('HttpsTransport → a real execution runtime on loopback', () => {
  let runtime: RunningRuntime;
  beforeAll(async () => {
    runtime = await startExecutionRuntime();
  });
  afterAll(() => runtime.close());

  it('brings back the runtime JSON-RPC answer as the body', async () => {
    // Prepare
    const transport = httpsTransport({ url: runtime.invocationsUrl });
    // Act
    const body = await transport.send(executeTask('hello', 'req-1'), key);
    // Assess
    expect(JSON.parse(body!)).toEqual({ jsonrpc: '2.0', id: 'req-1', result: echoSuccess('hello') });
  });

  it('answers undefined for a notification (HTTP 204)', async () => {
    const transport = httpsTransport({ url: runtime.invocationsUrl });
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'no reply wanted' } });
    await expect(transport.send(notification, key)).resolves.toBeUndefined();
  });

  it('uses no auth by default for a loopback URL', () => {
    expect(httpsTransport({ url: runtime.invocationsUrl }).authKind).toBe('none');
  });
});

describe('HttpsTransport: what goes on the wire', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer((_req, res) => json(res, 200, { ok: true }));
  });
  afterAll(() => server.close());

  it('POSTs JSON with Accept, X-Correlation-ID and the protocol headers, and no Authorization', async () => {
    const transport = httpsTransport({ url: `${server.url}/invocations` });
    await transport.send('{"x":1}', { ...key, correlationId: 'corr-42', headers: { 'A2A-Version': '1.0' } });
    const seen = server.requests.at(-1)!;
    expect(seen).toMatchObject({ method: 'POST', path: '/invocations', body: '{"x":1}' });
    expect(seen.headers).toMatchObject({ 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': 'corr-42', 'a2a-version': '1.0' });
    expect(seen.headers.authorization).toBeUndefined();
  });

  it('does not let a protocol header replace the framing or the auth', async () => {
    const transport = httpsTransport({ url: server.url, auth: { kind: 'bearer', token: staticSecret('real-token') } });
    await transport.send('{}', { ...key, headers: { 'Content-Type': 'text/plain', Authorization: 'Bearer forged' } });
    const seen = server.requests.at(-1)!;
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers.authorization).toBe('Bearer real-token');
  });
});

describe('HttpsTransport: refused configurations', () => {
  it.each(['http://example.com/invocations', 'http://10.0.0.5:8080/invocations', 'http://128.0.0.1/'])('refuses plain http:// to %s at construction', (url) => {
    expect(() => httpsTransport({ url })).toThrow(ConfigError);
    expect(() => httpsTransport({ url })).toThrow(/plain http:\/\/ to a host that is not loopback/);
  });

  it.each(['http://127.0.0.1:8080/invocations', 'http://127.9.9.9/', 'http://localhost:3000/x', 'http://[::1]:8080/'])('accepts plain http:// to loopback %s', (url) => {
    expect(httpsTransport({ url }).url.href).toBe(new URL(url).href);
  });

  it('refuses other schemes, URLs with credentials and unparsable URLs', () => {
    expect(() => httpsTransport({ url: 'ftp://example.com/' })).toThrow(/must be an https:\/\/ URL/);
    expect(() => httpsTransport({ url: 'https://user:pw@example.com/' })).toThrow(/must not carry credentials/);
    expect(() => httpsTransport({ url: 'not a url' })).toThrow(ConfigError);
  });

  it('needs a SigV4 service it cannot infer from a custom host', () => {
    expect(() => httpsTransport({ url: 'https://agent.example.com/', auth: { kind: 'sigv4', defaultRegion: 'us-east-1' } })).toThrow(/EXECUTION_SIGV4_SERVICE/);
  });
});

describe('HttpsTransport: faults from misbehaving servers', () => {
  const servers: TestServer[] = [];
  const serve = async (handler: Parameters<typeof startTestServer>[0]) => {
    const server = await startTestServer(handler);
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const transportFor = (url: string, options: Partial<Parameters<typeof httpsTransport>[0]> = {}) => {
    const recorder = recordingSleep();
    const transport = httpsTransport({ url, sleep: recorder.sleep, random: () => 0.5, ...options });
    return { transport, delays: recorder.delays };
  };

  it('connection refused: retried, then a retryable connection fault', async () => {
    // Prepare
    let calls = 0;
    const { transport, delays } = transportFor(await closedPortUrl(), {
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    // Act
    const error = await caught<TransportError>(() => transport.send('{}', key));
    // Assess
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'connection', retryable: true, details: { transport: 'https' } });
    expect(error.message).toMatch(/ECONNREFUSED.*gave up after 3 attempts/);
    expect(calls).toBe(3);
    expect(delays).toHaveLength(2);
  });

  it('a server that never answers: a retryable timeout after one attempt', async () => {
    const server = await serve(() => undefined);
    const { transport, delays } = transportFor(server.url, { timeoutMs: 150 });
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    expect(error.message).toMatch(/within 150 ms/);
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("the caller's signal cancels the call in flight", async () => {
    const server = await serve(() => undefined);
    const { transport } = transportFor(server.url);
    const error = await caught<TransportError>(() => transport.send('{}', { ...key, signal: AbortSignal.timeout(100) }));
    expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    expect(error.message).toMatch(/cancelled/);
    expect(server.requests).toHaveLength(1);
  });

  it('a body that stops arriving is cut off by the same per-attempt timeout', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"result":');
    });
    const { transport } = transportFor(server.url, { timeoutMs: 150 });
    await expect(transport.send('{}', key)).rejects.toMatchObject({ reason: 'timeout', retryable: true });
    expect(server.requests).toHaveLength(1);
  });

  it("the caller's signal also ends a backoff wait (real sleep)", async () => {
    const server = await serve((_req, res) => json(res, 503, {}));
    // An hour's backoff: only the signal can end it within the test's bound.
    const transport = httpsTransport({ url: server.url, baseDelayMs: 3_600_000, maxDelayMs: 3_600_000, random: () => 0.5 });
    const error = await caught<TransportError>(() => transport.send('{}', { ...key, signal: AbortSignal.timeout(100) }));
    expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    expect(server.requests).toHaveLength(1);
  });

  it('429 with Retry-After in seconds: waits what the server asked, then succeeds', async () => {
    const server = await serve((_req, res, index) => (index === 0 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '2' }) : json(res, 200, { ok: 1 })));
    const { transport, delays } = transportFor(server.url);
    await expect(transport.send('{}', key)).resolves.toBe('{"ok":1}');
    expect(delays).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
  });

  it('429 with Retry-After as an HTTP date: waits until that date', async () => {
    const server = await serve((_req, res, index) =>
      index === 0 ? json(res, 429, {}, { 'retry-after': new Date(Date.now() + 5000).toUTCString() }) : json(res, 200, { ok: 1 }),
    );
    const { transport, delays } = transportFor(server.url);
    await transport.send('{}', key);
    expect(delays).toHaveLength(1);
    // HTTP dates have whole-second precision.
    expect(delays[0]).toBeGreaterThan(3000);
    expect(delays[0]).toBeLessThanOrEqual(5000);
  });

  it('429 every time: a retryable throttled fault after maxAttempts requests', async () => {
    const server = await serve((_req, res) => json(res, 429, {}));
    const { transport, delays } = transportFor(server.url, { maxAttempts: 4, baseDelayMs: 100 });
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error).toMatchObject({ reason: 'throttled', retryable: true, details: { status: 429 } });
    expect(server.requests).toHaveLength(4);
    // Full jitter at random() = 0.5: half of 100, 200, 400.
    expect(delays).toEqual([50, 100, 200]);
  });

  it('a Retry-After beyond the cap ends the retries at once, still retryable', async () => {
    const server = await serve((_req, res) => json(res, 429, {}, { 'retry-after': '3600' }));
    const { transport, delays } = transportFor(server.url, { maxRetryAfterMs: 10_000 });
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error).toMatchObject({ reason: 'throttled', retryable: true });
    expect(error.message).toMatch(/asked to wait 3600 s/);
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('backoff is capped by maxDelayMs', async () => {
    const server = await serve((_req, res) => json(res, 503, {}));
    const { transport, delays } = transportFor(server.url, { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 150, random: () => 0.999 });
    await expect(transport.send('{}', key)).rejects.toMatchObject({ reason: 'server', retryable: true });
    expect(delays).toEqual([99, 149, 149]);
  });

  it.each([502, 503, 504])('%i then 200: retried and succeeds', async (status) => {
    const server = await serve((_req, res, index) => (index === 0 ? json(res, status, {}) : json(res, 200, { ok: status })));
    const { transport } = transportFor(server.url);
    await expect(transport.send('{}', key)).resolves.toBe(`{"ok":${status}}`);
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    [500, 'server', true],
    [501, 'server', false],
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'rejected', false],
    [400, 'rejected', false],
    [413, 'too-large', false],
    [302, 'rejected', false],
  ] as const)('HTTP %i: %s, retryable %s, not retried', async (status, reason, retryable) => {
    const server = await serve((_req, res) => json(res, status, { message: `status ${status}` }, status === 302 ? { location: 'http://127.0.0.1:1/elsewhere' } : {}));
    const { transport, delays } = transportFor(server.url);
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error).toMatchObject({ reason, retryable, details: { status, transport: 'https' } });
    expect(error.message).toContain(`HTTP ${status}`);
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('an oversized streamed response: too-large, read no further than the limit', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const total = 64 * 1024 * 1024;
    let written = 0;
    let ended!: Promise<{ written: number; whole: boolean }>;
    const server = await serve((_req, res) => {
      ended = new Promise((resolve) => res.once('close', () => resolve({ written, whole: res.writableFinished })));
      // Chunked, so no Content-Length warns the client: the limit must hold while reading.
      res.writeHead(200, { 'content-type': 'application/json' });
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const { transport } = transportFor(server.url, { maxResponseBytes: 256 * 1024 });
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error).toMatchObject({ reason: 'too-large', retryable: false, details: { status: 200 } });
    expect(server.requests).toHaveLength(1);
    // The client let go of the response once past the limit: the server could not write it all.
    // What it did write is the limit plus what socket buffers hold, far from the 64 MB offered.
    const stillOpen = new Promise<{ written: number; whole: string }>((resolve) => setTimeout(() => resolve({ written, whole: 'still open after 5 s' }), 5000).unref());
    const { written: sent, whole } = await Promise.race([ended, stillOpen]);
    expect(whole).toBe(false);
    expect(sent).toBeLessThan(total / 4);
  });

  it('an oversized response announced by Content-Length: too-large without reading it', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 5_000_000 });
      res.write('{"partial":');
    });
    const { transport } = transportFor(server.url, { maxResponseBytes: 1_000_000 });
    await expect(transport.send('{}', key)).rejects.toMatchObject({ reason: 'too-large', retryable: false });
  });

  it('a 200 with an empty body is "no content"', async () => {
    const server = await serve((_req, res) => res.writeHead(200, { 'content-length': 0 }).end());
    const { transport } = transportFor(server.url);
    await expect(transport.send('{}', key)).resolves.toBeUndefined();
  });

  it('never puts the bearer token in an error, even when the server echoes it back', async () => {
    const server = await serve((req, res) => json(res, 403, { seen: req.headers.authorization }));
    const { transport } = transportFor(server.url, { auth: { kind: 'bearer', token: staticSecret('sk-very-secret-token') } });
    const error = await caught<TransportError>(() => transport.send('{}', key));
    expect(error.reason).toBe('auth');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-very-secret-token');
    expect(error.message).not.toContain('sk-very-secret-token');
    expect(JSON.stringify(error)).not.toContain('sk-very-secret-token');
  });
});
