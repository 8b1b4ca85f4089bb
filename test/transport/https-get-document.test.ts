import { httpsTransport } from '../support/transports';
import { createHash } from 'node:crypto';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { AGENT_CARD_PATH } from '../../src/contract';
import type { SecretSource } from '../../src/secrets/secret-source';
import { HttpsTransport, type HttpsTransportOptions } from '../../src/transport/https';
import { TransportError } from '../../src/transport/transport';
import { manualClock } from '../support/manual-clock';
import { caught, json, recordingSleep, startTestServer, type TestServer } from './fixtures';

/**
 * `getDocument`: a GET on the execution endpoint's origin (the A2A agent card) that carries the
 * same auth, and keeps the same timeout, retries and size limit, as the transport's POSTs.
 */
const CARD = { name: 'card', protocolVersion: '0.3.0' };
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const signingDate = new Date('2026-11-21T12:34:56Z');

describe('HttpsTransport.getDocument', () => {
  let server: TestServer;
  let answer: (path: string, index: number) => { status: number; body: unknown; headers?: Record<string, string> };
  beforeAll(async () => {
    server = await startTestServer((req, res, index) => {
      const { status, body, headers } = answer(req.path, index);
      json(res, status, body, headers);
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    answer = () => ({ status: 200, body: CARD });
  });

  const transport = (options: Partial<Parameters<typeof httpsTransport>[0]> = {}) => httpsTransport({ url: `${server.url}/a2a/invocations?tenant=t1`, maxAttempts: 1, ...options });

  it('GETs the path on the endpoint’s origin, asking for JSON, and brings back the body', async () => {
    const body = await transport().getDocument(AGENT_CARD_PATH, { headers: { 'A2A-Version': '1.0', Authorization: 'Bearer smuggled' }, correlationId: 'corr-9' });

    expect(JSON.parse(body!)).toEqual(CARD);
    const [seen] = server.requests;
    expect(seen).toMatchObject({ method: 'GET', path: AGENT_CARD_PATH, body: '' });
    expect(seen!.headers).toMatchObject({ accept: 'application/json', 'a2a-version': '1.0', 'x-correlation-id': 'corr-9' });
    // A GET has no body to describe, and a protocol header never replaces the transport's auth.
    expect(seen!.headers['content-type']).toBeUndefined();
    expect(seen!.headers.authorization).toBeUndefined();
  });

  it.each([['https://elsewhere.example/.well-known/agent-card.json'], ['//elsewhere.example/x'], ['relative/path']])('refuses %j: credentials never follow a document to another host', async (path) => {
    await expect(transport().getDocument(path)).rejects.toThrow(TypeError);
    expect(server.requests).toHaveLength(0);
  });

  it('signs the GET with SigV4 over an empty body, and the signature verifies', async () => {
    await transport({ auth: { kind: 'sigv4', credentials, service: 'lambda', region: 'us-east-1' }, clock: manualClock(signingDate.getTime()) }).getDocument(AGENT_CARD_PATH);

    const seen = server.requests[0]!;
    const authorization = String(seen.headers.authorization);
    expect(authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261121\/us-east-1\/lambda\/aws4_request, /);
    expect(seen.headers['x-amz-content-sha256']).toBe(createHash('sha256').update('').digest('hex'));
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)![1]!.split(';');
    const url = new URL(server.url);
    const resigned = await new SignatureV4({ service: 'lambda', region: 'us-east-1', credentials, sha256: Hash.bind(null, 'sha256') }).sign(
      new HttpRequest({
        method: 'GET',
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: AGENT_CARD_PATH,
        headers: Object.fromEntries(signedHeaders.map((name) => [name, String(seen.headers[name])])),
        body: '',
      }),
      { signingDate },
    );
    expect(resigned.headers.authorization).toBe(authorization);
  });

  it('sends the bearer token, and after a 401 reads the secret again once', async () => {
    let current = 'old-token';
    const token: SecretSource = { get: async () => current, refresh: async () => (current = 'new-token') };
    answer = (_path, index) => (index === 0 ? { status: 401, body: { error: 'Unauthorized' } } : { status: 200, body: CARD });

    await expect(transport({ auth: { kind: 'bearer', token } }).getDocument(AGENT_CARD_PATH)).resolves.toBe(JSON.stringify(CARD));

    expect(server.requests.map((request) => request.headers.authorization)).toEqual(['Bearer old-token', 'Bearer new-token']);
  });

  it('retries what a POST would retry (a 503), with the same backoff', async () => {
    const { sleep, delays } = recordingSleep();
    answer = (_path, index) => (index === 0 ? { status: 503, body: {}, headers: { 'retry-after': '1' } } : { status: 200, body: CARD });

    await expect(transport({ maxAttempts: 2, sleep }).getDocument(AGENT_CARD_PATH)).resolves.toBe(JSON.stringify(CARD));

    expect(delays).toEqual([1000]);
  });

  it('keeps the size limit', async () => {
    const error = await caught<TransportError>(() => transport({ maxResponseBytes: 8 }).getDocument(AGENT_CARD_PATH));

    expect(error).toMatchObject({ reason: 'too-large', retryable: false });
  });

  it('names the document in its faults, with the same classification as a POST', async () => {
    answer = () => ({ status: 404, body: { error: 'Not Found' } });

    const error = await caught<TransportError>(() => transport().getDocument('/nothing-here'));

    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ reason: 'rejected', retryable: false, details: { status: 404, transport: 'https' } });
    expect(error.message).toBe(`${server.url}/nothing-here answered HTTP 404: {"error":"Not Found"}`);
  });

  it('keeps the per-attempt timeout', async () => {
    const hanging = await startTestServer(() => undefined);
    try {
      const error = await caught<TransportError>(() => httpsTransport({ url: hanging.url, timeoutMs: 50, maxAttempts: 1 }).getDocument(AGENT_CARD_PATH));
      expect(error).toMatchObject({ reason: 'timeout', retryable: true });
      expect(error.message).toBe(`no answer from ${hanging.url}${AGENT_CARD_PATH} within 50 ms`);
    } finally {
      await hanging.close();
    }
  });
});
