import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { signRequest, type AwsCredentials, type SigV4Options, type SigV4Request } from '../../src/aws/sigv4';

/**
 * src/aws/sigv4.ts held to AWS's published example and to the SDK's own signer
 * (@smithy/signature-v4, the reference implementation): for every request both must produce the
 * same headers, authorization included.
 */

/** The reference: the SDK's signer, given the request the way src/transport/sigv4-signer.ts gives it. Header names lower-cased. */
async function smithySign(request: SigV4Request, options: SigV4Options): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: options.service,
    region: options.region,
    credentials: options.credentials,
    sha256: Hash.bind(null, 'sha256'),
    // The SDK adds x-amz-content-sha256 unless told not to; ours only when asked.
    applyChecksum: options.contentSha256Header === true,
  });
  const { url } = request;
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const previous = query[key];
    query[key] = previous === undefined ? value : ([] as string[]).concat(previous, value);
  }
  const unsigned = new HttpRequest({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query,
    headers: { ...request.headers, host: url.host },
    body: request.body,
  });
  const signed = await signer.sign(unsigned, { signingDate: options.now ?? new Date() });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value;
  return headers;
}

const signatureOf = (authorization: string | undefined) => /Signature=([0-9a-f]{64})$/.exec(authorization ?? '')?.[1];
const signedHeadersOf = (authorization: string | undefined) => /SignedHeaders=([^,]+),/.exec(authorization ?? '')?.[1];

describe('signRequest: AWS SigV4 test suite, get-vanilla', () => {
  // aws-sig-v4-test-suite/get-vanilla: "GET / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:20150830T123600Z"
  const request: SigV4Request = { method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, body: '' };
  const options: SigV4Options = {
    service: 'service',
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    now: new Date('2015-08-30T12:36:00Z'),
  };
  const PUBLISHED =
    'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31';

  it('the published authorization is also what the SDK signer computes (the expectation itself checked)', async () => {
    const reference = await smithySign(request, options);
    expect(reference.authorization).toBe(PUBLISHED);
    expect(reference['x-amz-date']).toBe('20150830T123600Z');
  });

  it('produces the published authorization, host and x-amz-date, and nothing else', () => {
    const headers = signRequest(request, options);
    expect(headers).toEqual({ host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z', authorization: PUBLISHED });
  });

  it('signs a session token as x-amz-security-token, and the payload hash when asked, as the SDK does', async () => {
    const withToken: SigV4Options = { ...options, credentials: { ...options.credentials, sessionToken: 'session/token+=' }, contentSha256Header: true };
    const headers = signRequest(request, withToken);
    expect(headers['x-amz-security-token']).toBe('session/token+=');
    expect(headers['x-amz-content-sha256']).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(signedHeadersOf(headers.authorization)).toBe('host;x-amz-content-sha256;x-amz-date;x-amz-security-token');
    expect(headers).toEqual(await smithySign(request, withToken));
  });
});

describe('signRequest: deterministic cases against the SDK signer', () => {
  const credentials: AwsCredentials = { accessKeyId: 'AKIDCASES', secretAccessKey: 'cases/secret+key' };
  const base = { service: 'dynamodb', region: 'eu-west-1', credentials, now: new Date('2024-02-29T23:59:59.999Z') } satisfies SigV4Options;
  const cases: Array<[string, SigV4Request]> = [
    ['a DynamoDB JSON call', { method: 'POST', url: new URL('https://dynamodb.eu-west-1.amazonaws.com/'), headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.GetItem' }, body: '{"TableName":"t"}' }],
    ['a port in the host', { method: 'POST', url: new URL('http://127.0.0.1:8000/'), headers: {}, body: '{}' }],
    ['a path with spaces, unicode and encoded characters', { method: 'GET', url: new URL('https://h.example.com/a b/ü/日本/%41%2F%25/x+y/~._-'), headers: {}, body: '' }],
    ['double slashes and a trailing slash', { method: 'GET', url: new URL('https://h.example.com//a//b///'), headers: {}, body: '' }],
    ['dot segments left after URL parsing', { method: 'GET', url: new URL('https://h.example.com/a/%2e%2e/b/./c/..'), headers: {}, body: '' }],
    ['repeated keys, empty values, reserved characters', { method: 'GET', url: new URL("https://h.example.com/?b=2&a=&a=1&a=0&c&!'()*=!'()*&sp=a+b%20c&e=%E2%82%AC&k%3D=v%26"), headers: {}, body: '' }],
    ['headers in mixed case with inner and outer whitespace', { method: 'PUT', url: new URL('https://h.example.com/x'), headers: { 'X-Mixed-Case': '  a   b \t c  ', 'x-empty': '', 'X-AMZ-META-thing': 'v' }, body: 'body' }],
    ['headers the SDK never signs', { method: 'POST', url: new URL('https://h.example.com/'), headers: { 'User-Agent': 'ua/1.0', 'X-Amzn-Trace-Id': 'Root=1-2-3', 'Cache-Control': 'no-cache', Expect: '100-continue', 'x-signed': 'yes' }, body: 'x' }],
    ['a binary body', { method: 'POST', url: new URL('https://h.example.com/'), headers: {}, body: new Uint8Array([0, 255, 1, 128, 10, 13]) }],
  ];

  it.each(cases)('%s', async (_name, request) => {
    for (const options of [base, { ...base, contentSha256Header: true }, { ...base, credentials: { ...credentials, sessionToken: 'tok' } }] satisfies SigV4Options[]) {
      expect(signRequest(request, options)).toEqual(await smithySign(request, options));
    }
  });

  it('does not sign user-agent and the other hop-by-hop headers, but sends them', () => {
    const headers = signRequest({ method: 'POST', url: new URL('https://h.example.com/'), headers: { 'User-Agent': 'ua', Connection: 'keep-alive', 'X-Amzn-Trace-Id': 't', 'X-Kept': 'k' }, body: '' }, base);
    expect(signedHeadersOf(headers.authorization)).toBe('host;x-amz-date;x-kept');
    expect(headers['user-agent']).toBe('ua');
    expect(headers.connection).toBe('keep-alive');
  });

  // KNOWN DIVERGENCE (fails today): the SDK also never signs headers matching /^proxy-/ or /^sec-/
  // (PROXY_HEADER_PATTERN, SEC_HEADER_PATTERN in @smithy/signature-v4) — ones a proxy or a browser
  // sets or strips — while src/aws/sigv4.ts only skips its fixed UNSIGNED_HEADERS list, so it signs
  // them and its signature differs from the SDK's. No caller passes such a header today.
  it('skips proxy-* and sec-* headers as the SDK does', async () => {
    const request: SigV4Request = { method: 'GET', url: new URL('https://h.example.com/'), headers: { 'Proxy-Authorization': 'Basic eA==', 'sec-fetch-mode': 'cors' }, body: '' };
    const headers = signRequest(request, base);
    expect(signedHeadersOf(headers.authorization)).toBe('host;x-amz-date');
    expect(headers).toEqual(await smithySign(request, base));
  });

  it('signs the method upper-cased, as it goes on the wire', () => {
    const request = (method: string): SigV4Request => ({ method, url: new URL('https://h.example.com/'), headers: {}, body: '' });
    expect(signRequest(request('post'), base).authorization).toBe(signRequest(request('POST'), base).authorization);
  });

  it('a different body, header, query or path changes the signature', () => {
    const request: SigV4Request = { method: 'POST', url: new URL('https://h.example.com/p?q=1'), headers: { 'x-h': 'v' }, body: 'b' };
    const signature = signatureOf(signRequest(request, base).authorization);
    const variants: SigV4Request[] = [
      { ...request, body: 'c' },
      { ...request, headers: { 'x-h': 'w' } },
      { ...request, url: new URL('https://h.example.com/p?q=2') },
      { ...request, url: new URL('https://h.example.com/P?q=1') },
      { ...request, url: new URL('https://other.example.com/p?q=1') },
      { ...request, method: 'PUT' },
    ];
    for (const variant of variants) expect(signatureOf(signRequest(variant, base).authorization)).not.toBe(signature);
  });
});

describe('signRequest agrees with @smithy/signature-v4', () => {
  const segment = fc.oneof(
    fc.constantFrom('', '.', '..', 'a b', 'ü', '日本語', '😀', '%20', '%2F', '%41', '%25', '%zz', 'a+b', "!'()*", '~-_.', '@:$,;=&', '?#', '\\'),
    fc.string({ unit: 'grapheme', maxLength: 8 }),
    fc.string({ unit: 'binary', maxLength: 4 }),
  );
  // Set through URL#pathname, which encodes what a path may not hold and resolves `.` and `..`
  // (also `%2e%2e`) itself, as every URL the signer is given has; the signer's own dot-segment
  // handling is therefore never reached with a URL, and both signers see the same pathname.
  const path = fc.array(segment, { maxLength: 6 }).map((segments) => `/${segments.join('/')}`);

  const queryKey = fc
    .oneof(fc.constantFrom('a', 'A', 'b', 'key', "!'()*", 'sp ace', 'ü', '%41', '+', '=', '&', ''), fc.string({ unit: 'grapheme', maxLength: 6 }))
    // The SDK drops a query parameter named X-Amz-Signature (presigned URLs); `__proto__` is no key for its plain-object query.
    .filter((key) => key.toLowerCase() !== 'x-amz-signature' && key !== '__proto__');
  const queryValue = fc.oneof(fc.constantFrom('', '1', 'a b', "!'()*", '%', '%2B', '+', '/', '=', '€'), fc.string({ unit: 'grapheme', maxLength: 6 }));
  const search = fc.oneof(
    // Built from pairs: repeated keys, empty values, anything encoded by URLSearchParams.
    fc.array(fc.tuple(queryKey, queryValue), { maxLength: 6 }).map((pairs) => new URLSearchParams(pairs).toString()),
    // Written by hand: already percent-encoded, `+`, bare keys, stray `%`, reserved characters left raw.
    fc.array(fc.constantFrom('a', 'B', '=', '&', '%20', '%2b', '%E2%82%AC', '%', '+', "!'()*", '~', 'x=1', '&&', '==', 'é'), { maxLength: 10 }).map((parts) => parts.join('')),
  );

  const headerName = fc
    .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,11}$/), fc.boolean())
    .map(([name, upper]) => `x-${name}`.replace(/(^|-)([a-z])/g, (_match, dash: string, char: string) => dash + (upper ? char.toUpperCase() : char)))
    .filter((name) => !['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256', 'x-amzn-trace-id'].includes(name.toLowerCase()));
  const headerValue = fc.array(fc.constantFrom('a', 'Z', '0', ' ', '  ', '\t', '/', ';', '=', ',', '"', 'value'), { maxLength: 10 }).map((parts) => parts.join(''));
  // Headers the SDK never signs: ours must skip them too, and still send them.
  const unsignedHeader = fc.tuple(fc.constantFrom('User-Agent', 'user-agent', 'X-Amzn-Trace-Id', 'Cache-Control', 'Connection', 'Expect', 'Referer', 'Pragma'), headerValue);
  const headers = fc
    .tuple(fc.uniqueArray(fc.tuple(headerName, headerValue), { maxLength: 5, selector: ([name]) => name.toLowerCase() }), fc.option(unsignedHeader, { nil: undefined }))
    .map(([signed, unsigned]) => Object.fromEntries(unsigned ? [...signed, unsigned] : signed));

  const body = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 10 }), fc.uint8Array({ maxLength: 40 }));

  const credentials = fc.record(
    {
      accessKeyId: fc.stringMatching(/^[A-Z0-9]{16,20}$/),
      secretAccessKey: fc.string({ minLength: 1, maxLength: 40 }),
      sessionToken: fc.string({ minLength: 1, maxLength: 40 }),
    },
    { requiredKeys: ['accessKeyId', 'secretAccessKey'] },
  );

  const signing = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
    host: fc.constantFrom('example.amazonaws.com', 'dynamodb.eu-west-1.amazonaws.com', '127.0.0.1:4566', 'abc.lambda-url.us-east-1.on.aws', 'xn--bcher-kva.example:8443'),
    path,
    search,
    headers,
    body,
    service: fc.constantFrom('service', 'dynamodb', 'sqs', 'secretsmanager', 'lambda', 'execute-api'),
    region: fc.constantFrom('us-east-1', 'eu-west-1', 'cn-north-1', 'ap-southeast-2'),
    credentials,
    contentSha256Header: fc.boolean(),
    now: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }),
  });

  it('produces the same headers — authorization, x-amz-date, x-amz-security-token, x-amz-content-sha256 — for any request', async () => {
    await fc.assert(
      fc.asyncProperty(signing, async ({ method, host, path, search, headers, body, ...options }) => {
        const url = new URL(`https://${host}`);
        url.pathname = path;
        url.search = search;
        const request: SigV4Request = { method, url, headers, body };

        const ours = signRequest(request, options);
        const reference = await smithySign(request, options);

        expect(ours.authorization).toBe(reference.authorization);
        expect(ours['x-amz-date']).toBe(reference['x-amz-date']);
        expect(ours['x-amz-security-token']).toBe(reference['x-amz-security-token']);
        expect(ours['x-amz-content-sha256']).toBe(reference['x-amz-content-sha256']);
        // Every other header is sent as given (names lower-cased), the SDK's way too.
        expect(ours).toEqual(reference);
      }),
      { numRuns: 200, seed: 20150830 },
    );
  });
});

describe('signRequest: the signing key cache', () => {
  const day = new Date('2024-06-01T10:00:00Z');
  const request: SigV4Request = { method: 'POST', url: new URL('https://sqs.eu-west-1.amazonaws.com/'), headers: { 'x-amz-target': 'AmazonSQS.SendMessage' }, body: '{}' };
  const options = (credentials: AwsCredentials, now = day): SigV4Options => ({ service: 'sqs', region: 'eu-west-1', credentials, now });

  it('does not mix credentials: two secrets on the same day, region and service sign differently, each as the SDK does', async () => {
    const first: AwsCredentials = { accessKeyId: 'AKIDSAME', secretAccessKey: 'first-secret' };
    const second: AwsCredentials = { accessKeyId: 'AKIDSAME', secretAccessKey: 'second-secret' };
    // Interleaved, so each secret's key is looked up while the other's is cached.
    const signatures = [first, second, first, second].map((credentials) => signatureOf(signRequest(request, options(credentials)).authorization));
    expect(signatures[0]).not.toBe(signatures[1]);
    expect(signatures[2]).toBe(signatures[0]);
    expect(signatures[3]).toBe(signatures[1]);
    expect(signatures[0]).toBe(signatureOf((await smithySign(request, options(first))).authorization));
    expect(signatures[1]).toBe(signatureOf((await smithySign(request, options(second))).authorization));
  });

  it('keys by day, region and service too', async () => {
    const credentials: AwsCredentials = { accessKeyId: 'AKIDKEYED', secretAccessKey: 'keyed-secret' };
    const variants: SigV4Options[] = [
      options(credentials),
      options(credentials, new Date('2024-06-02T10:00:00Z')),
      { ...options(credentials), region: 'eu-west-2' },
      { ...options(credentials), service: 'dynamodb' },
    ];
    for (const variant of [...variants, ...variants]) {
      expect(signRequest(request, variant).authorization).toBe((await smithySign(request, variant)).authorization);
    }
  });

  it('stays right when more keys are made than it holds', async () => {
    for (let index = 0; index < 80; index += 1) {
      const credentials: AwsCredentials = { accessKeyId: 'AKIDMANY', secretAccessKey: `secret-${index % 40}` };
      expect(signRequest(request, options(credentials)).authorization).toBe((await smithySign(request, options(credentials))).authorization);
    }
  });
});
