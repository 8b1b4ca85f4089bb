import { createHash, createHmac } from 'node:crypto';
import { systemClock } from '../clock';

/**
 * AWS Signature Version 4 (header form), on node:crypto alone: what every AWS call made here
 * without an SDK client is signed with — DynamoDB, SQS and Secrets Manager from the verification
 * zone (src/aws/aws-json-client.ts) and the https transport to a function URL or API Gateway with
 * IAM auth (src/transport/https.ts). Written here rather than taken from @smithy/signature-v4
 * because that package (with its hashing and HTTP-request pieces) costs ~10 ms of a cold start on
 * the Slack ack path and this costs well under one; bench part 1 measures both. The emulator
 * (src/local/agentcore-emulator.ts) checks signatures with the SDK's signer, and
 * test/aws/sigv4.test.ts holds this one to that signer and to AWS's published example.
 *
 * The canonical request, string to sign and key derivation follow AWS's specification
 * (docs/architecture.md §10.5): lower-cased, trimmed, sorted headers; RFC 3986 query encoding,
 * sorted by name then value; the path normalised and encoded twice (every service but S3).
 */
export type AwsCredentials = {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (Lambda's role, STS): sent and signed as `x-amz-security-token`. */
  sessionToken?: string;
};

export type SigV4Request = {
  method: string;
  url: URL;
  /** Header names in any case; every one given is signed, so none may change after signing. */
  headers: Record<string, string>;
  body: string | Uint8Array;
};

export type SigV4Options = {
  service: string;
  region: string;
  credentials: AwsCredentials;
  /** Adds `x-amz-content-sha256` (Lambda function URLs behind CloudFront ask for it). */
  contentSha256Header?: boolean;
  /** The signing time. @default now, on the system clock */
  now?: Date;
};

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** Sent but never signed: hop-by-hop headers and ones a proxy or browser may rewrite (as AWS's SDKs do; also proxy-* and sec-*). */
const UNSIGNED_HEADERS = new Set(['authorization', 'cache-control', 'connection', 'expect', 'from', 'keep-alive', 'max-forwards', 'pragma', 'referer', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'x-amzn-trace-id']);

/** Signing keys change once a day per secret, region and service; a warm function reuses its one. */
const signingKeys = new Map<string, Buffer>();
const MAX_SIGNING_KEYS = 32;

/**
 * The headers to send: the given ones (names lower-cased) plus host, x-amz-date, the token and
 * authorization. Sign right before sending: AWS refuses a signature more than 5 minutes old.
 */
export function signRequest(request: SigV4Request, options: SigV4Options): Record<string, string> {
  const amzDate = amzDateOf(options.now ?? new Date(systemClock.now()));
  const day = amzDate.slice(0, 8);
  const payloadHash = sha256Hex(request.body);

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.host = request.url.host;
  headers['x-amz-date'] = amzDate;
  if (options.credentials.sessionToken) headers['x-amz-security-token'] = options.credentials.sessionToken;
  if (options.contentSha256Header) headers['x-amz-content-sha256'] = payloadHash;

  const names = Object.keys(headers)
    .filter((name) => !UNSIGNED_HEADERS.has(name) && !name.startsWith('proxy-') && !name.startsWith('sec-'))
    .sort();
  let canonicalHeaders = '';
  for (const name of names) canonicalHeaders += `${name}:${headers[name]!.trim().replace(/\s+/g, ' ')}\n`;
  const signedHeaders = names.join(';');

  const canonicalRequest = [request.method.toUpperCase(), canonicalPath(request.url.pathname), canonicalQuery(request.url.searchParams), canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${day}/${options.region}/${options.service}/aws4_request`;
  const stringToSign = `${ALGORITHM}\n${amzDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  const signature = createHmac('sha256', signingKey(options.credentials.secretAccessKey, day, options.region, options.service)).update(stringToSign).digest('hex');

  headers.authorization = `${ALGORITHM} Credential=${options.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  const cacheKey = `${day}\n${region}\n${service}\n${sha256Hex(secret)}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
    if (signingKeys.size >= MAX_SIGNING_KEYS) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}

const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** 20150830T123600Z */
function amzDateOf(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** RFC 3986: encodeURIComponent leaves !'()* alone; SigV4 wants them encoded. */
function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Empty, `.` and `..` segments resolved, then the (already encoded) path encoded again, slashes kept. */
function canonicalPath(pathname: string): string {
  const segments: string[] = [];
  for (const segment of pathname.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const path = `/${segments.join('/')}${segments.length > 0 && pathname.endsWith('/') ? '/' : ''}`;
  return rfc3986(path).replace(/%2F/g, '/');
}

function canonicalQuery(params: URLSearchParams): string {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of params) pairs.push([rfc3986(name), rfc3986(value)]);
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}
