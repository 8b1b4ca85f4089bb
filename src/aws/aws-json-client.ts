import type http from 'node:http';
import type https from 'node:https';
import { systemClock } from '../clock';
import { QUICK_CALL, type ClientBounds } from './bounded-client';
import type { EndpointRules, EndpointVariant } from './endpoints';
import { signRequest, type AwsCredentials } from './sigv4';

/**
 * One small client for the AWS services the verification zone calls — DynamoDB, SQS and Secrets
 * Manager all speak the AWS JSON protocol: a signed POST of the operation's input as JSON, named
 * by `X-Amz-Target`, answered with the output as JSON or an error whose `__type` names it. It
 * replaces three SDK clients, whose loading was most of slack-events' cold start (bench part 1,
 * README "Dependencies"); inputs and outputs keep the SDK's shapes, so its types still describe them.
 *
 * The security-critical pieces are the SDK's own: SigV4 is `@smithy/signature-v4`
 * (src/aws/sigv4.ts), the endpoint of a region comes from the SDK's partition table and each
 * service's endpoint rules, FIPS and dual-stack included (src/aws/endpoints.ts), and the signing
 * clock is corrected from the server's `Date` as the SDK corrects it (below). What this file does
 * by hand is the rest of what the SDK's clients gave: the `AWS_ENDPOINT_URL_<SERVICE>` /
 * `AWS_ENDPOINT_URL` overrides, keep-alive connections, a connection and a request timeout on every
 * attempt and a bounded number of attempts (src/aws/bounded-client.ts), retries with jittered
 * backoff on throttling, 5xx and broken connections — never past the caller's signal — and
 * DynamoDB's CRC32 check of each answer. Credentials are the environment's (Lambda sets them from
 * the function's role).
 */
export type AwsJsonService = {
  /** SigV4 signing name. */
  signingName: string;
  /** `https://<prefix>.<region>.<the partition's DNS suffix>` */
  endpointPrefix: string;
  /** Where its endpoint ruleset departs from the common rule (src/aws/endpoints.ts). */
  endpointRules: EndpointRules;
  /** Its `AWS_ENDPOINT_URL_<SERVICE>` override, as the SDKs read it. */
  endpointOverride(env: NodeJS.ProcessEnv): string | undefined;
  targetPrefix: string;
  jsonVersion: '1.0' | '1.1';
};

/** A service whose signing name is also its endpoint prefix, as for each one below. */
function jsonService(signingName: string, targetPrefix: string, jsonVersion: AwsJsonService['jsonVersion'], endpointRules: EndpointRules, endpointOverride: AwsJsonService['endpointOverride']): AwsJsonService {
  return { signingName, endpointPrefix: signingName, endpointRules, endpointOverride, targetPrefix, jsonVersion };
}

// The exceptions are those of each client's endpoint ruleset (@aws-sdk/client-dynamodb, -sqs, -secrets-manager).
export const DYNAMODB = jsonService('dynamodb', 'DynamoDB_20120810', '1.0', { fipsIsStandardIn: ['aws-us-gov'] }, (env) => env.AWS_ENDPOINT_URL_DYNAMODB);
export const SQS = jsonService('sqs', 'AmazonSQS', '1.0', { fipsIsStandardIn: ['aws-us-gov'] }, (env) => env.AWS_ENDPOINT_URL_SQS);
export const SECRETS_MANAGER = jsonService(
  'secretsmanager',
  'secretsmanager',
  '1.1',
  { dualStackIsStandardIn: ['aws', 'aws-cn', 'aws-us-gov'], fipsDualStackIsFipsIn: ['aws', 'aws-us-gov'] },
  (env) => env.AWS_ENDPOINT_URL_SECRETS_MANAGER,
);

export type AwsJsonClientOptions = {
  service: AwsJsonService;
  /** @default AWS_REGION, else AWS_DEFAULT_REGION */
  region?: string;
  /** @default AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL, else the service's regional endpoint */
  endpoint?: string;
  /** The regional endpoint's FIPS variant. @default AWS_USE_FIPS_ENDPOINT (`true` or `false`), else false */
  useFipsEndpoint?: boolean;
  /** The regional endpoint's dual-stack (IPv6) variant. @default AWS_USE_DUALSTACK_ENDPOINT (`true` or `false`), else false */
  useDualstackEndpoint?: boolean;
  /** @default AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, read at each call */
  credentials?: AwsCredentials;
  bounds?: ClientBounds;
  /** Where the defaults above are read; injected by tests. */
  env?: NodeJS.ProcessEnv;
};

export type CallOptions = {
  /** Ends the call (and any retry wait) when it aborts. */
  signal?: AbortSignal;
  /**
   * The operation's own host (SQS: the queue URL's), used instead of the regional endpoint unless
   * an endpoint is configured (option or environment), as the SDK does — or a FIPS or dual-stack
   * endpoint is asked for: then the regional one is used, where the SDK would go to the queue
   * URL's (standard) host and only log a warning.
   */
  endpoint?: string;
};

/** An error AWS answered with: `name` is its code (`ConditionalCheckFailedException`), `body` the whole answer. */
export class AwsServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly statusCode: number,
    readonly body: Record<string, unknown>,
    readonly requestId: string | undefined,
  ) {
    super(message);
    this.name = code;
  }
}

/** The call could not get an answer in time (a stalled connection or endpoint). */
export class AwsTimeoutError extends Error {
  override name = 'TimeoutError';
}

export function isAwsError(error: unknown, code: string): error is AwsServiceError {
  return error instanceof AwsServiceError && error.code === code;
}

const THROTTLING = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'TransactionInProgressException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'LimitExceededException',
  'SlowDown',
]);
const TRANSIENT_NETWORK = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN']);
const BASE_DELAY_MS = 100;
const THROTTLED_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;

/**
 * Clock skew, corrected as the SDK corrects it (@aws-sdk/core's AwsSdkSigV4Signer and its
 * getUpdatedSystemClockOffset / isClockSkewed, @smithy/core's isClockSkewError): every answer's
 * `Date` is compared with the client's clock as corrected so far; 4 minutes or more apart, the
 * client's offset becomes the server's time minus the local time, and every later signature uses
 * it. An error of these codes whose answer corrected the offset is retried, signed with the
 * server's time — once, since the next answer agrees.
 */
const CLOCK_SKEW_ERRORS = new Set(['AccessDeniedException', 'AuthFailure', 'InvalidSignatureException', 'RequestExpired', 'RequestInTheFuture', 'RequestTimeTooSkewed', 'SignatureDoesNotMatch']);
const CLOCK_SKEW_THRESHOLD_MS = 240_000;
/** An answer that took longer than this says too little about the server's time now. */
const CLOCK_SAMPLE_MAX_AGE_MS = 900_000;

/**
 * node:http, node:https and node:zlib are loaded at the first call that needs them, not with the
 * module: a cold start that answers Slack without calling AWS (url_verification, an ignored
 * event) does not pay for them (several ms each, bench part 1). The keep-alive agents are shared
 * by every client of the process, so a warm function reuses its connections.
 */
type Transport = { module: typeof http | typeof https; agent: http.Agent };
const transports: { 'http:'?: Transport; 'https:'?: Transport } = {};
function transportFor(protocol: string): Transport {
  const secure = protocol === 'https:';
  const key = secure ? 'https:' : 'http:';
  let transport = transports[key];
  if (!transport) {
    const module = secure ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
    transport = transports[key] = { module, agent: new module.Agent({ keepAlive: true, maxSockets: 50 }) };
  }
  return transport;
}
const crc32 = (bytes: Buffer) => process.getBuiltinModule('node:zlib').crc32(bytes);

type Where = { region: string; configured: string | undefined; variant: EndpointVariant };

/** The SDK's partition table and endpoint rules, loaded at the first call that needs a regional endpoint (none is configured). */
let endpointsModule: Promise<typeof import('./endpoints')> | undefined;
function endpoints(): Promise<typeof import('./endpoints')> {
  endpointsModule ??= import('./endpoints').catch((error: unknown) => {
    endpointsModule = undefined;
    throw error;
  });
  return endpointsModule;
}

export class AwsJsonClient {
  private readonly service: AwsJsonService;
  private readonly bounds: ClientBounds;
  private readonly env: NodeJS.ProcessEnv;
  private resolved?: Where;
  private regional?: string;
  /** Server time minus local time, ms, once an answer showed the local clock 4 minutes or more off (see CLOCK_SKEW_ERRORS). */
  private clockOffsetMs = 0;

  constructor(private readonly options: AwsJsonClientOptions) {
    this.service = options.service;
    this.bounds = options.bounds ?? QUICK_CALL;
    this.env = options.env ?? process.env;
  }

  /** Calls `operation` (e.g. `UpdateItem`) with `input`; resolves with its output, or rejects with AwsServiceError. */
  async call<O = Record<string, unknown>>(operation: string, input: object, options: CallOptions = {}): Promise<O> {
    const where = this.where();
    const { region, configured, variant } = where;
    const callEndpoint = variant.fips || variant.dualStack ? undefined : options.endpoint;
    const url = new URL('/', configured ?? callEndpoint ?? (await this.regionalEndpoint(where)));
    const body = JSON.stringify(input);
    for (let attempt = 1; ; attempt += 1) {
      options.signal?.throwIfAborted();
      const offsetUsed = this.clockOffsetMs;
      try {
        const sentAt = systemClock.now();
        const headers = await signRequest(
          {
            method: 'POST',
            url,
            headers: { 'content-type': `application/x-amz-json-${this.service.jsonVersion}`, 'x-amz-target': `${this.service.targetPrefix}.${operation}` },
            body,
          },
          { service: this.service.signingName, region, credentials: this.credentials(), now: new Date(sentAt + offsetUsed) },
        );
        headers['content-length'] = String(Buffer.byteLength(body));
        headers['user-agent'] = 'slack-zone-bridge';
        options.signal?.throwIfAborted();
        return (await this.send(url, headers, body, sentAt, options.signal)) as O;
      } catch (error) {
        // Cut short by the caller: its reason (e.g. AbortSignal.timeout's TimeoutError), not Node's AbortError.
        if (options.signal?.aborted) throw options.signal.reason;
        const skewCorrected = error instanceof AwsServiceError && CLOCK_SKEW_ERRORS.has(error.code) && this.clockOffsetMs !== offsetUsed;
        if (attempt >= this.bounds.maxAttempts || !(skewCorrected || isRetryable(error))) throw error;
        await sleep(backoffMs(attempt, error), options.signal);
      }
    }
  }

  private where(): Where {
    if (this.resolved) return this.resolved;
    // An empty variable counts as unset, as the SDKs read it.
    const region = this.options.region || this.env.AWS_REGION || this.env.AWS_DEFAULT_REGION;
    if (!region) throw new Error(`no AWS region for ${this.service.signingName}: AWS_REGION is not set (Lambda sets it)`);
    const configured = this.options.endpoint || this.service.endpointOverride(this.env) || this.env.AWS_ENDPOINT_URL;
    const variant: EndpointVariant = {
      fips: this.options.useFipsEndpoint ?? flag('AWS_USE_FIPS_ENDPOINT', this.env.AWS_USE_FIPS_ENDPOINT || 'false'),
      dualStack: this.options.useDualstackEndpoint ?? flag('AWS_USE_DUALSTACK_ENDPOINT', this.env.AWS_USE_DUALSTACK_ENDPOINT || 'false'),
    };
    return (this.resolved = { region, configured: configured || undefined, variant });
  }

  private async regionalEndpoint({ region, variant }: Where): Promise<string> {
    this.regional ??= (await endpoints()).regionalEndpoint(this.service.endpointPrefix, region, variant, this.service.endpointRules);
    return this.regional;
  }

  private credentials(): AwsCredentials {
    if (this.options.credentials) return this.options.credentials;
    const accessKeyId = this.env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = this.env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) throw new Error('no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (Lambda sets them from the function role)');
    const sessionToken = this.env.AWS_SESSION_TOKEN;
    return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
  }

  /**
   * The server's time from an answer's `Date` (not a cached answer's: no `Age`), kept as the
   * client's clock offset when the clock as corrected so far is 4 minutes or more off it.
   */
  private noteServerTime(response: http.IncomingMessage, sentAt: number): void {
    const date = header(response, 'date');
    if (!date || response.headers.age !== undefined) return;
    const serverTime = Date.parse(date);
    const receivedAt = systemClock.now();
    if (Number.isNaN(serverTime) || receivedAt - sentAt > CLOCK_SAMPLE_MAX_AGE_MS) return;
    if (Math.abs(serverTime - (receivedAt + this.clockOffsetMs)) >= CLOCK_SKEW_THRESHOLD_MS) this.clockOffsetMs = serverTime - receivedAt;
  }

  /** One attempt: a connection within connectionTimeoutMs, the whole answer within requestTimeoutMs. */
  private send(url: URL, headers: Record<string, string>, body: string, sentAt: number, signal: AbortSignal | undefined): Promise<unknown> {
    const { connectionTimeoutMs, requestTimeoutMs } = this.bounds;
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      let connectTimer: NodeJS.Timeout | undefined;
      const settle = (error: Error | undefined, value?: unknown) => {
        clearTimeout(connectTimer);
        clearTimeout(requestTimer);
        if (error) reject(error);
        else resolve(value);
      };
      const transport = transportFor(url.protocol);
      const request = transport.module.request(url, { method: 'POST', headers, agent: transport.agent, ...(signal ? { signal } : {}) });
      const requestTimer = setTimeout(() => request.destroy(new AwsTimeoutError(`${this.service.signingName} did not answer within ${requestTimeoutMs} ms`)), requestTimeoutMs);
      request.once('socket', (socket) => {
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => request.destroy(new AwsTimeoutError(`no connection to ${url.host} within ${connectionTimeoutMs} ms`)), connectionTimeoutMs);
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      request.once('error', (error) => settle(error));
      request.once('response', (response) => {
        this.noteServerTime(response, sentAt);
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', (error) => settle(error));
        response.once('end', () => {
          try {
            settle(undefined, this.answer(response, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
          } catch (error) {
            settle(error as Error);
          }
        });
      });
      request.end(body);
    });
  }

  private answer(response: http.IncomingMessage, bytes: Buffer): unknown {
    const status = response.statusCode ?? 0;
    const expectedCrc = response.headers['x-amz-crc32'];
    if (typeof expectedCrc === 'string' && crc32(bytes) !== Number(expectedCrc)) {
      throw new AwsServiceError('CorruptedAnswer', `${this.service.signingName}: the answer's CRC32 does not match (damaged in transit)`, status, {}, undefined);
    }
    const text = bytes.toString('utf8');
    let parsed: Record<string, unknown> = {};
    try {
      if (text) parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      if (status < 300) throw new AwsServiceError('UnreadableAnswer', `${this.service.signingName} answered HTTP ${status} with a body that is not JSON`, status, {}, undefined);
    }
    if (status >= 200 && status < 300) return parsed;
    const requestId = header(response, 'x-amzn-requestid') ?? header(response, 'x-amz-request-id');
    const type = header(response, 'x-amzn-errortype') ?? (typeof parsed.__type === 'string' ? parsed.__type : undefined) ?? (typeof parsed.code === 'string' ? parsed.code : undefined);
    // `com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException`, `Code:http://…` → the code alone.
    const code = type ? type.slice(type.lastIndexOf('#') + 1).split(':')[0]! : `Http${status}`;
    const message = typeof parsed.message === 'string' ? parsed.message : typeof parsed.Message === 'string' ? parsed.Message : `HTTP ${status}`;
    throw new AwsServiceError(code, message, status, parsed, requestId);
  }
}

/** A boolean variable as AWS's SDKs read it: `true` or `false`, anything else refused (a FIPS setting is never guessed). */
function flag(name: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`${name} must be true or false, not ${JSON.stringify(value)}`);
}

function header(response: http.IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return typeof value === 'string' && value ? value : undefined;
}

function isRetryable(error: unknown): boolean {
  if (error instanceof AwsTimeoutError) return true;
  if (error instanceof AwsServiceError) return error.statusCode >= 500 || error.statusCode === 429 || THROTTLING.has(error.code) || error.code === 'CorruptedAnswer';
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && (TRANSIENT_NETWORK.has(code) || code === 'ECONNABORTED' || (error as Error).message === 'socket hang up');
}

/** Full jitter over an exponential ceiling, as AWS's SDKs back off (longer for throttling). */
function backoffMs(attempt: number, error: unknown): number {
  const base = error instanceof AwsServiceError && (THROTTLING.has(error.code) || error.statusCode === 429) ? THROTTLED_BASE_DELAY_MS : BASE_DELAY_MS;
  return Math.random() * Math.min(MAX_DELAY_MS, base * 2 ** (attempt - 1));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
