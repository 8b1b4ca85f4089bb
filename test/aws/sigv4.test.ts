import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { signRequest, type AwsCredentials, type SigV4Options, type SigV4Request } from '../../src/aws/sigv4';

/**
 * src/aws/sigv4.ts signs with the SDK's own signer (@smithy/signature-v4); what is ours is the
 * request handed to it (a URL's host, path and query, the headers) and the headers handed back.
 * Held here to AWS's published Signature Version 4 test suite — signatures worked out by AWS, not
 * by any signer under test — and to the SDK's signer called directly, for any request.
 */

/** The reference: the SDK's signer, given the request as the SDK's clients build one. Header names lower-cased. */
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

describe('signRequest: AWS’s published Signature Version 4 test suite', () => {
  // aws-sig-v4-test-suite (docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html): every
  // case is signed with these credentials, scope and time. The cases are those a request given as a
  // URL can express: a path as it goes on the wire is encoded once more, as for every service but S3.
  const options: SigV4Options = {
    service: 'service',
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    now: new Date('2015-08-30T12:36:00Z'),
  };
  const STS_TOKEN =
    'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';
  const UNRESERVED = '-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const host = 'https://example.amazonaws.com';
  const request = (method: string, url: string, headers: Record<string, string> = {}, body = ''): SigV4Request => ({ method, url: new URL(url), headers, body });

  const cases: Array<[string, SigV4Request, string, string, Partial<SigV4Options>?]> = [
    ['get-vanilla', request('GET', `${host}/`), 'host;x-amz-date', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'],
    ['get-unreserved', request('GET', `${host}/${UNRESERVED}`), 'host;x-amz-date', '07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f'],
    ['get-vanilla-query-order-key-case', request('GET', `${host}/?Param2=value2&Param1=value1`), 'host;x-amz-date', 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500'],
    ['get-vanilla-query-unreserved', request('GET', `${host}/?${UNRESERVED}=${UNRESERVED}`), 'host;x-amz-date', '9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197'],
    ['get-vanilla-utf8-query', request('GET', `${host}/?ሴ=bar`), 'host;x-amz-date', '2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04'],
    ['get-header-key-duplicate', request('GET', `${host}/`, { 'My-Header1': 'value2,value2,value1' }), 'host;my-header1;x-amz-date', 'c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea'],
    ['get-header-value-order', request('GET', `${host}/`, { 'My-Header1': 'value4,value1,value3,value2' }), 'host;my-header1;x-amz-date', '08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01'],
    ['get-header-value-trim', request('GET', `${host}/`, { 'My-Header1': ' value1', 'My-Header2': ' "a   b   c"' }), 'host;my-header1;my-header2;x-amz-date', 'acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736'],
    ['post-vanilla', request('POST', `${host}/`), 'host;x-amz-date', '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b'],
    ['post-vanilla-query', request('POST', `${host}/?Param1=value1`), 'host;x-amz-date', '28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11'],
    [
      'post-vanilla-query-nonunreserved',
      request('POST', `${host}/?${new URLSearchParams([['@#$%^', ''], ['+', '/,?><`";:\\|][{}']]).toString()}`),
      'host;x-amz-date',
      '66c82657c86e26fb25238d0e69f011edc4c6df5ae71119d7cb98ed9b87393c1e',
    ],
    ['post-header-key-sort', request('POST', `${host}/`, { 'My-Header1': 'value1' }), 'host;my-header1;x-amz-date', 'c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c'],
    ['post-header-value-case', request('POST', `${host}/`, { 'My-Header1': 'VALUE1' }), 'host;my-header1;x-amz-date', 'cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d'],
    ['post-x-www-form-urlencoded', request('POST', `${host}/`, { 'Content-Type': 'application/x-www-form-urlencoded' }, 'Param1=value1'), 'content-type;host;x-amz-date', 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a'],
    [
      'post-x-www-form-urlencoded-parameters',
      request('POST', `${host}/`, { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf8' }, 'Param1=value1'),
      'content-type;host;x-amz-date',
      '1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe',
    ],
    // The session token of temporary credentials is signed (x-amz-security-token) before the signature is made.
    ['post-sts-header-before', request('POST', `${host}/`), 'host;x-amz-date;x-amz-security-token', '85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead', { credentials: { ...options.credentials, sessionToken: STS_TOKEN } }],
  ];

  it.each(cases)('%s', async (_name, given, signedHeaders, signature, overrides = {}) => {
    const headers = await signRequest(given, { ...options, ...overrides });
    expect(headers.authorization).toBe(`AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${signedHeaders}, Signature=${signature}`);
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers.host).toBe('example.amazonaws.com');
  });

  it('get-vanilla: the published authorization, host and x-amz-date, and nothing else', async () => {
    expect(await signRequest(request('GET', `${host}/`), options)).toEqual({
      host: 'example.amazonaws.com',
      'x-amz-date': '20150830T123600Z',
      authorization: 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    });
  });

  it('signs the payload hash as x-amz-content-sha256 only when asked, and sends the token', async () => {
    const withToken: SigV4Options = { ...options, credentials: { ...options.credentials, sessionToken: 'session/token+=' }, contentSha256Header: true };
    const headers = await signRequest(request('GET', `${host}/`), withToken);
    expect(headers['x-amz-security-token']).toBe('session/token+=');
    expect(headers['x-amz-content-sha256']).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(signedHeadersOf(headers.authorization)).toBe('host;x-amz-content-sha256;x-amz-date;x-amz-security-token');
    expect((await signRequest(request('GET', `${host}/`), options))['x-amz-content-sha256']).toBeUndefined();
  });
});

describe('signRequest: the request handed to the signer, and the headers handed back', () => {
  const credentials: AwsCredentials = { accessKeyId: 'AKIDCASES', secretAccessKey: 'cases/secret+key' };
  const base = { service: 'dynamodb', region: 'eu-west-1', credentials, now: new Date('2024-02-29T23:59:59.999Z') } satisfies SigV4Options;
  const cases: Array<[string, SigV4Request]> = [
    ['a DynamoDB JSON call', { method: 'POST', url: new URL('https://dynamodb.eu-west-1.amazonaws.com/'), headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.GetItem' }, body: '{"TableName":"t"}' }],
    ['a port in the host', { method: 'POST', url: new URL('http://127.0.0.1:8000/'), headers: {}, body: '{}' }],
    ['a path with spaces, unicode and encoded characters', { method: 'GET', url: new URL('https://h.example.com/a b/ü/日本/%41%2F%25/x+y/~._-'), headers: {}, body: '' }],
    ['double slashes and a trailing slash', { method: 'GET', url: new URL('https://h.example.com//a//b///'), headers: {}, body: '' }],
    ['repeated keys, empty values, reserved characters', { method: 'GET', url: new URL("https://h.example.com/?b=2&a=&a=1&a=0&c&!'()*=!'()*&sp=a+b%20c&e=%E2%82%AC&k%3D=v%26"), headers: {}, body: '' }],
    ['headers in mixed case with inner and outer whitespace', { method: 'PUT', url: new URL('https://h.example.com/x'), headers: { 'X-Mixed-Case': '  a   b \t c  ', 'x-empty': '', 'X-AMZ-META-thing': 'v' }, body: 'body' }],
    ['a binary body', { method: 'POST', url: new URL('https://h.example.com/'), headers: {}, body: new Uint8Array([0, 255, 1, 128, 10, 13]) }],
  ];

  it.each(cases)('%s: as the SDK signer signs it', async (_name, request) => {
    for (const options of [base, { ...base, contentSha256Header: true }, { ...base, credentials: { ...credentials, sessionToken: 'tok' } }] satisfies SigV4Options[]) {
      expect(await signRequest(request, options)).toEqual(await smithySign(request, options));
    }
  });

  it('sends but never signs user-agent, the hop-by-hop headers, proxy-* and sec-* (as the SDK signs)', async () => {
    const headers = await signRequest(
      {
        method: 'POST',
        url: new URL('https://h.example.com/'),
        headers: { 'User-Agent': 'ua', Connection: 'keep-alive', 'X-Amzn-Trace-Id': 't', 'Proxy-Authorization': 'Basic eA==', 'sec-fetch-mode': 'cors', 'X-Kept': 'k' },
        body: '',
      },
      base,
    );
    expect(signedHeadersOf(headers.authorization)).toBe('host;x-amz-date;x-kept');
    expect(headers).toMatchObject({ 'user-agent': 'ua', connection: 'keep-alive', 'x-amzn-trace-id': 't', 'proxy-authorization': 'Basic eA==', 'sec-fetch-mode': 'cors', 'x-kept': 'k' });
  });

  it('signs the host of the URL, whatever host header was given, and one value per header name whatever its case', async () => {
    const headers = await signRequest({ method: 'POST', url: new URL('https://right.example.com:8443/'), headers: { Host: 'wrong.example.com', 'X-A': 'first', 'x-a': 'second' }, body: '' }, base);
    expect(headers.host).toBe('right.example.com:8443');
    expect(headers['x-a']).toBe('second');
    expect(Object.keys(headers).filter((name) => name.toLowerCase() === 'host' || name.toLowerCase() === 'x-a')).toEqual(['host', 'x-a']);
    expect(headers).toEqual(await smithySign({ method: 'POST', url: new URL('https://right.example.com:8443/'), headers: { 'x-a': 'second' }, body: '' }, base));
  });

  it('signs a query parameter named __proto__ (an own key of the query the signer is given, not its prototype)', async () => {
    const ours = await signRequest({ method: 'GET', url: new URL('https://h.example.com/?__proto__=x&a=1'), headers: {}, body: '' }, base);
    const without = await signRequest({ method: 'GET', url: new URL('https://h.example.com/?a=1'), headers: {}, body: '' }, base);
    expect(signatureOf(ours.authorization)).not.toBe(signatureOf(without.authorization));
    const query = JSON.parse('{"__proto__":"x","a":"1"}') as Record<string, string>; // an own key, as JSON.parse makes it
    const direct = await new SignatureV4({ service: base.service, region: base.region, credentials, sha256: Hash.bind(null, 'sha256'), applyChecksum: false }).sign(
      new HttpRequest({ method: 'GET', protocol: 'https:', hostname: 'h.example.com', path: '/', query, headers: { host: 'h.example.com' }, body: '' }),
      { signingDate: base.now },
    );
    expect(ours.authorization).toBe(direct.headers.authorization);
  });

  it('signs the method upper-cased, as it goes on the wire', async () => {
    const request = (method: string): SigV4Request => ({ method, url: new URL('https://h.example.com/'), headers: {}, body: '' });
    expect((await signRequest(request('post'), base)).authorization).toBe((await signRequest(request('POST'), base)).authorization);
  });

  it('a different body, header, query, path, host, method, time, region or service changes the signature', async () => {
    const request: SigV4Request = { method: 'POST', url: new URL('https://h.example.com/p?q=1'), headers: { 'x-h': 'v' }, body: 'b' };
    const signature = signatureOf((await signRequest(request, base)).authorization);
    const variants: Array<[SigV4Request, SigV4Options]> = [
      [{ ...request, body: 'c' }, base],
      [{ ...request, headers: { 'x-h': 'w' } }, base],
      [{ ...request, url: new URL('https://h.example.com/p?q=2') }, base],
      [{ ...request, url: new URL('https://h.example.com/P?q=1') }, base],
      [{ ...request, url: new URL('https://other.example.com/p?q=1') }, base],
      [{ ...request, method: 'PUT' }, base],
      [request, { ...base, now: new Date('2024-03-01T00:00:00Z') }],
      [request, { ...base, region: 'eu-west-2' }],
      [request, { ...base, service: 'sqs' }],
    ];
    for (const [variant, options] of variants) expect(signatureOf((await signRequest(variant, options)).authorization)).not.toBe(signature);
  });

  it('does not mix credentials: two secrets on the same day, region and service, interleaved, each sign as the SDK does', async () => {
    const first: AwsCredentials = { accessKeyId: 'AKIDSAME', secretAccessKey: 'first-secret' };
    const second: AwsCredentials = { accessKeyId: 'AKIDSAME', secretAccessKey: 'second-secret' };
    const request: SigV4Request = { method: 'POST', url: new URL('https://sqs.eu-west-1.amazonaws.com/'), headers: { 'x-amz-target': 'AmazonSQS.SendMessage' }, body: '{}' };
    const options = (c: AwsCredentials): SigV4Options => ({ ...base, service: 'sqs', credentials: c });
    const signatures = await Promise.all([first, second, first, second].map(async (c) => signatureOf((await signRequest(request, options(c))).authorization)));
    expect(signatures[0]).not.toBe(signatures[1]);
    expect(signatures[2]).toBe(signatures[0]);
    expect(signatures[3]).toBe(signatures[1]);
    expect(signatures[0]).toBe(signatureOf((await smithySign(request, options(first))).authorization));
    expect(signatures[1]).toBe(signatureOf((await smithySign(request, options(second))).authorization));
  });
});

describe('signRequest: the SDK signer is loaded at the first signature, not with the module', () => {
  it('requiring src/aws/sigv4.ts loads no @smithy package; the first signature loads them, once', async () => {
    const loaded: string[] = [];
    let signRequestOf: typeof signRequest | undefined;
    jest.isolateModules(() => {
      for (const name of ['@smithy/signature-v4', '@smithy/hash-node']) {
        jest.doMock(name, () => {
          loaded.push(name);
          return jest.requireActual(name);
        });
      }
      signRequestOf = (require('../../src/aws/sigv4') as typeof import('../../src/aws/sigv4')).signRequest;
    });
    expect(loaded).toEqual([]);
    const request: SigV4Request = { method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, body: '' };
    const options: SigV4Options = { service: 'service', region: 'us-east-1', credentials: { accessKeyId: 'AKIDLAZY', secretAccessKey: 'lazy' }, now: new Date('2015-08-30T12:36:00Z') };
    await Promise.all([signRequestOf!(request, options), signRequestOf!(request, options)]);
    await signRequestOf!(request, options);
    expect(loaded.sort()).toEqual(['@smithy/hash-node', '@smithy/signature-v4']);
  });
});

describe('signRequest agrees with @smithy/signature-v4 called directly', () => {
  const segment = fc.oneof(
    fc.constantFrom('', '.', '..', 'a b', 'ü', '日本語', '😀', '%20', '%2F', '%41', '%25', '%zz', 'a+b', "!'()*", '~-_.', '@:$,;=&', '?#', '\\'),
    fc.string({ unit: 'grapheme', maxLength: 8 }),
    fc.string({ unit: 'binary', maxLength: 4 }),
  );
  // Set through URL#pathname, which encodes what a path may not hold and resolves `.` and `..`, as
  // every URL the signer is given has.
  const path = fc.array(segment, { maxLength: 6 }).map((segments) => `/${segments.join('/')}`);

  const queryKey = fc
    .oneof(fc.constantFrom('a', 'A', 'b', 'key', "!'()*", 'sp ace', 'ü', '%41', '+', '=', '&', ''), fc.string({ unit: 'grapheme', maxLength: 6 }))
    // The SDK drops a query parameter named X-Amz-Signature (presigned URLs); `__proto__` is no key for the reference's plain-object query.
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
  // Headers the SDK never signs: sent, not signed.
  const unsignedHeader = fc.tuple(fc.constantFrom('User-Agent', 'user-agent', 'X-Amzn-Trace-Id', 'Cache-Control', 'Connection', 'Expect', 'Referer', 'Pragma', 'Proxy-Authorization', 'Sec-Fetch-Site'), headerValue);
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
    region: fc.constantFrom('us-east-1', 'eu-west-1', 'cn-north-1', 'us-gov-west-1', 'eusc-de-east-1'),
    credentials,
    contentSha256Header: fc.boolean(),
    now: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }),
  });

  it('produces the same headers — authorization, x-amz-date, x-amz-security-token, x-amz-content-sha256 and every header sent — for any request', async () => {
    await fc.assert(
      fc.asyncProperty(signing, async ({ method, host, path, search, headers, body, ...options }) => {
        const url = new URL(`https://${host}`);
        url.pathname = path;
        url.search = search;
        const request: SigV4Request = { method, url, headers, body };
        expect(await signRequest(request, options)).toEqual(await smithySign(request, options));
      }),
      { numRuns: 200, seed: 20150830 },
    );
  });
});
