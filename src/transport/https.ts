import { ASKER_HEADER } from '../contract/asker';
import { systemClock, type Clock } from '../clock';
import { ConfigError } from '../config/env';
import { redactString, type Log } from '../observability/logger';
import { isLoopbackUrl } from '../net/loopback';
import type { SecretSource } from '../secrets/secret-source';
import { errnoCode, faultMaker } from './faults';
import { eventData, idleTimer, isEventStream, STREAM_ACCEPT } from './event-stream';
import { readBodyLimited, BodyTooLargeError } from './response-body';
import { backoffDelay, parseRetryAfter, sleep as realSleep, type Sleep } from './retry';
import type { AwsCredentials } from '../aws/sigv4';
import type { TransportConfigOf } from './config';
import { SigV4Signer, sigv4TargetOfHost, type SigV4Credentials } from './sigv4-signer';
import { TransportError, type GetDocumentOptions, type SendOptions, type Transport, type TransportFaultReason, type TransportResponse } from './transport';

/**
 * The `https` transport (docs/architecture.md §4.2): one `fetch` POST per call to an execution endpoint,
 * a Lambda function URL, an API Gateway route or any host that serves the zone contract; and
 * `getDocument`, a GET of a document on the same origin (an A2A agent card) with the same auth.
 *
 * Retried here, with capped exponential backoff and full jitter: connection failures, 429 and
 * 502/503/504, the faults of a proxy or a cold fleet that an immediate second try often gets
 * past. Not retried here: a 500 (our runtime answers every JSON-RPC error with 200, so a 500
 * means the host itself failed, and hammering it helps nobody; it is still reported retryable
 * so the caller's queue tries again later), and our own per-attempt timeout (the endpoint may
 * still be working on it; the caller's queue decides). Retrying a request that may have reached
 * the runtime is safe because the execution zone treats a repeated request id as the same task.
 */
export type HttpsAuth =
  | { kind: 'none' }
  | {
      kind: 'sigv4';
      /** Default: the AWS SDK's default credential chain. */
      credentials?: SigV4Credentials;
      /** Overrides the service the host implies (`lambda`, `execute-api`). */
      service?: string;
      /** Overrides the region the host implies. */
      region?: string;
      /** Used when neither an override nor the host names a region (AWS_REGION). */
      defaultRegion?: string;
    }
  | {
      kind: 'bearer';
      /** Refreshed once after a 401, which is what a rotated secret looks like from here. */
      token: SecretSource;
    };

/**
 * The https transport's settings, as the transport configuration parsed them (src/transport/config.ts
 * declares, defaults and checks each once): taken whole, never copied field by field.
 */
export type HttpsSettings = Pick<TransportConfigOf<'https'>, 'url' | 'timeoutMs' | 'maxAttempts' | 'baseDelayMs' | 'maxDelayMs' | 'maxRetryAfterMs' | 'maxResponseBytes'>;

export type HttpsTransportOptions = {
  settings: HttpsSettings;
  /** Default: `none` for a loopback URL, `sigv4` otherwise. */
  auth?: HttpsAuth;
  fetch?: typeof fetch;
  /** Waits between retries; injected by tests to run fast and record the delays. */
  sleep?: Sleep;
  random?: () => number;
  log?: Pick<Log, 'warn'>;
  /** What SigV4 signs with and an HTTP-date `Retry-After` counts from. @default systemClock */
  clock?: Clock;
};



/** One HTTP exchange: a POST of a request body to the endpoint, or a GET of a document on its origin. */
type HttpCall = {
  method: 'POST' | 'GET';
  url: URL;
  /** Empty for a GET; signed as such. */
  body: string;
  /** What the fault messages call the other side. */
  target: string;
};

/** One attempt's result: its value, or a fault and whether this transport may try again. */
type Attempt<T> = { ok: true; value: T } | Failed;
type Failed = { ok: false; error: TransportError; retry: boolean; retryAfterMs?: number; tokenRejected?: boolean };

/** An attempt's timing and cancel: its timer (whole, or per chunk for a stream) and the caller's signal. */
type AttemptTiming = {
  signal: AbortSignal;
  /** A stream's chunk arrived: the idle timer starts again. */
  touch(): void;
  /** Stops the timer (the body is read, or the stream waits on its reader). */
  clear(): void;
  /** Ends the request: an early close, or a fault mid-stream. */
  abort(): void;
  /** The fault an abort means — the caller's cancel or our timeout — or undefined for any other error. */
  aborted(error: unknown): TransportError | undefined;
};

/** A 2xx answer, its body not read yet, its attempt's timer still running. */
type Opened = { response: Response; timing: AttemptTiming };

const SNIPPET_BYTES = 200;

export class HttpsTransport implements Transport {
  readonly kind = 'https' as const;
  private readonly fault = faultMaker(this.kind);
  readonly url: URL;
  readonly authKind: HttpsAuth['kind'];
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly settings: HttpsSettings;
  private readonly signer?: SigV4Signer;
  private readonly bearer?: SecretSource;
  private readonly log?: Pick<Log, 'warn'>;
  private readonly clock: Clock;

  constructor(options: HttpsTransportOptions) {
    this.url = parseExecutionUrl(options.settings.url);
    const auth = options.auth ?? (isLoopbackUrl(this.url) ? { kind: 'none' } : { kind: 'sigv4' });
    this.authKind = auth.kind;
    this.clock = options.clock ?? systemClock;
    if (auth.kind === 'sigv4') this.signer = createSigner(this.url, auth, this.clock);
    if (auth.kind === 'bearer') this.bearer = auth.token;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    this.log = options.log;
    this.settings = options.settings;
  }

  async send(body: string, options: SendOptions): Promise<TransportResponse> {
    const call: HttpCall = { method: 'POST', url: this.url, body, target: 'the execution endpoint' };
    return this.retrying(call, options, 'application/json', (headers) => this.attemptOnce(call, headers, options.signal));
  }

  /**
   * A POST whose answer may be streamed: `Accept: text/event-stream, application/json`; an SSE
   * answer yields each event's data as it completes, any other answer its one body. Retried like
   * `send` until the answer starts; from then on `timeoutMs` is the longest wait for the next
   * chunk (keep-alive comments count) and `maxResponseBytes` the most one event may hold.
   */
  async *stream(body: string, options: SendOptions): AsyncGenerator<string, void, undefined> {
    const call: HttpCall = { method: 'POST', url: this.url, body, target: 'the execution endpoint' };
    const { response, timing } = await this.retrying(call, options, STREAM_ACCEPT, (headers) => this.open(call, headers, options.signal, 'stream'));
    const { status } = response;
    let complete = false;
    try {
      if (status === 204 || status === 205 || !response.body) {
        complete = true;
        return;
      }
      const source = response.body as unknown as AsyncIterable<Uint8Array>;
      if (isEventStream(response.headers.get('content-type'))) {
        for await (const data of eventData(source, { maxEventSize: this.settings.maxResponseBytes, onChunk: timing.touch })) {
          // The caller's time with an event is not the endpoint's silence.
          timing.clear();
          yield data;
          timing.touch();
        }
      } else {
        const declared = Number(response.headers.get('content-length'));
        if (Number.isFinite(declared) && declared > this.settings.maxResponseBytes) throw new BodyTooLargeError(this.settings.maxResponseBytes);
        const text = await readBodyLimited(source, this.settings.maxResponseBytes);
        timing.clear();
        if (text !== '') yield text;
      }
      complete = true;
    } catch (error) {
      if (error instanceof BodyTooLargeError) throw this.tooLarge(call, status);
      throw timing.aborted(error) ?? this.fault(`the response from ${call.target} broke off (${connectionCode(error)})`, 'connection', true, { status }, error);
    } finally {
      timing.clear();
      if (!complete) timing.abort();
    }
  }

  /** A GET on the endpoint's origin: the same auth (SigV4 signs the empty body), timeout, retries and size limit. */
  async getDocument(path: string, options: GetDocumentOptions = {}): Promise<TransportResponse> {
    const url = new URL(path, this.url.origin);
    // Only a path: credentials must never follow a document to another host.
    if (!path.startsWith('/') || url.origin !== this.url.origin) throw new TypeError(`getDocument takes a path on ${this.url.origin}, not ${JSON.stringify(path)}`);
    const call: HttpCall = { method: 'GET', url, body: '', target: url.href };
    return this.retrying(call, options, 'application/json', (headers) => this.attemptOnce(call, headers, options.signal));
  }

  /** Attempts `once` until it succeeds, or fails in a way this transport does not retry, or runs out of attempts. */
  private async retrying<T>(call: HttpCall, options: GetDocumentOptions, accept: string, once: (headers: Record<string, string>) => Promise<Attempt<T>>): Promise<T> {
    const baseHeaders = this.baseHeaders(call, options, accept);
    let tokenRefreshed = false;
    for (let attempt = 1; ; attempt++) {
      if (options.signal?.aborted) throw this.cancelled(call);
      const result = await once(baseHeaders);
      if (result.ok) return result.value;

      // A 401 with a cached bearer token is what rotation looks like: read the secret again and
      // try once more, without spending one of the attempts meant for transient faults.
      if (result.tokenRejected && !tokenRefreshed && this.bearer) {
        tokenRefreshed = true;
        if (await this.refreshToken()) {
          attempt--;
          continue;
        }
      }
      if (!result.retry) throw result.error;
      if (attempt >= this.settings.maxAttempts) throw withAttempts(result.error, attempt);
      if (result.retryAfterMs !== undefined && result.retryAfterMs > this.settings.maxRetryAfterMs) {
        throw new TransportError(
          `${result.error.message}; the endpoint asked to wait ${Math.ceil(result.retryAfterMs / 1000)} s, longer than this transport waits`,
          result.error.reason,
          true,
          result.error.details,
        );
      }
      const delayMs = result.retryAfterMs ?? backoffDelay(attempt, this.settings, this.random);
      this.log?.warn('execution endpoint call failed; retrying', { attempt, delay_ms: delayMs, reason: result.error.reason, status: result.error.details.status });
      try {
        await this.sleep(delayMs, options.signal);
      } catch {
        throw this.cancelled(call);
      }
    }
  }

  private baseHeaders(call: HttpCall, options: GetDocumentOptions, accept: string): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      const key = name.toLowerCase();
      // These belong to the transport: a protocol header must not replace our auth or framing.
      if (key === 'authorization' || key === 'host' || key === 'content-length' || key === 'accept' || key.startsWith('x-amz-')) continue;
      headers[key] = value;
    }
    if (call.method === 'POST') headers['content-type'] = 'application/json';
    headers.accept = accept;
    if (options.correlationId) headers['x-correlation-id'] = options.correlationId;
    if ('askerId' in options && options.askerId) headers[ASKER_HEADER.toLowerCase()] = options.askerId;
    return headers;
  }

  /** One attempt of a call whose whole answer is read: the body (undefined when empty), within `timeoutMs`. */
  private async attemptOnce(call: HttpCall, baseHeaders: Record<string, string>, callerSignal: AbortSignal | undefined): Promise<Attempt<TransportResponse>> {
    const opened = await this.open(call, baseHeaders, callerSignal, 'whole');
    if (!opened.ok) return opened;
    const { response, timing } = opened.value;
    const { status } = response;
    try {
      if (status === 204 || status === 205) {
        await discard(response);
        return { ok: true, value: undefined };
      }
      const declared = Number(response.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > this.settings.maxResponseBytes) {
        await discard(response);
        return { ok: false, retry: false, error: this.tooLarge(call, status) };
      }
      try {
        const text = response.body ? await readBodyLimited(response.body as unknown as AsyncIterable<Uint8Array>, this.settings.maxResponseBytes) : '';
        return { ok: true, value: text === '' ? undefined : text };
      } catch (error) {
        if (error instanceof BodyTooLargeError) return { ok: false, retry: false, error: this.tooLarge(call, status) };
        const fault = timing.aborted(error);
        if (fault) return { ok: false, retry: false, error: fault };
        return { ok: false, retry: true, error: this.fault(`the response body broke off (${connectionCode(error)})`, 'connection', true, { status }, error) };
      }
    } finally {
      timing.clear();
    }
  }

  /**
   * Sends one attempt and reads its status. A 2xx comes back with its body unread and the timer
   * running — for `whole`, one timeout for the attempt; for `stream`, reset by each chunk — and
   * anything else as the fault it is, the timer stopped.
   */
  private async open(call: HttpCall, baseHeaders: Record<string, string>, callerSignal: AbortSignal | undefined, read: 'whole' | 'stream'): Promise<Attempt<Opened>> {
    let headers: Record<string, string>;
    try {
      headers = await this.authorize(baseHeaders, call);
    } catch (error) {
      return { ok: false, retry: false, error: this.fault(`could not obtain ${this.authKind} credentials: ${describe(error)}`, 'auth', this.authKind === 'bearer', {}, error) };
    }

    const timing = this.timingFor(call, callerSignal, read);
    let response: Response;
    try {
      // Redirects are not followed: a signed request would not survive one, and a bearer
      // token must not be carried to another host.
      response = await this.fetchImpl(call.url, { method: call.method, headers, ...(call.method === 'POST' ? { body: call.body } : {}), signal: timing.signal, redirect: 'manual' });
    } catch (error) {
      timing.clear();
      const fault = timing.aborted(error);
      if (fault) return { ok: false, retry: false, error: fault };
      return { ok: false, retry: true, error: this.fault(`could not reach ${call.target} (${connectionCode(error)})`, 'connection', true, {}, error) };
    }

    const { status } = response;
    if (status >= 200 && status < 300) return { ok: true, value: { response, timing } };
    try {
      const snippet = await readSnippet(response);
      const answered = `${call.target} answered HTTP ${status}${snippet ? `: ${snippet}` : ''}`;
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), this.clock.now());
      const refusal = (reason: TransportFaultReason, retryable: boolean, retry = false): Failed => ({
        ok: false,
        retry,
        retryAfterMs: retry ? retryAfterMs : undefined,
        error: this.fault(answered, reason, retryable, { status }),
      });
      if (status === 401) return { ...refusal('auth', false), tokenRejected: true };
      if (status === 403) return refusal('auth', false);
      if (status === 408) return refusal('timeout', true);
      if (status === 413) return refusal('too-large', false);
      if (status === 429) return refusal('throttled', true, true);
      if (status === 502 || status === 503 || status === 504) return refusal('server', true, true);
      // 501/505: this endpoint will never handle the request, however often it is sent.
      if (status >= 500) return refusal('server', status !== 501 && status !== 505);
      // Other 4xx, and 3xx: redirects are not followed (see the fetch call).
      return refusal('rejected', false);
    } finally {
      timing.clear();
    }
  }

  private timingFor(call: HttpCall, callerSignal: AbortSignal | undefined, read: 'whole' | 'stream'): AttemptTiming {
    const { timeoutMs } = this.settings;
    const timeout = new AbortController();
    const timer = idleTimer(timeoutMs, () => timeout.abort(new Error(read === 'stream' ? 'the stream went quiet' : 'attempt timed out')));
    const ended = new AbortController();
    const signal = AbortSignal.any([timeout.signal, ended.signal, ...(callerSignal ? [callerSignal] : [])]);
    return {
      signal,
      touch: () => timer.touch(),
      clear: () => timer.clear(),
      abort: () => ended.abort(new Error('the caller stopped reading')),
      aborted: (error) => {
        if (callerSignal?.aborted) return this.cancelled(call, error);
        if (timer.fired) {
          const what = read === 'stream' ? `nothing more from ${call.target} for ${timeoutMs} ms` : `no answer from ${call.target} within ${timeoutMs} ms`;
          return this.fault(what, 'timeout', true, {}, error);
        }
        return undefined;
      },
    };
  }

  private async authorize(headers: Record<string, string>, call: HttpCall): Promise<Record<string, string>> {
    if (this.signer) {
      const signed = await this.signer.sign({ url: call.url, method: call.method, headers, body: call.body });
      // fetch derives Host from the URL; it is the same value the signature covers.
      const { host: _host, ...rest } = signed;
      return rest;
    }
    if (this.bearer) return { ...headers, authorization: `Bearer ${await this.bearer.get()}` };
    return headers;
  }

  /** True when the secret now holds a token different from the one the endpoint refused. */
  private async refreshToken(): Promise<boolean> {
    if (!this.bearer) return false;
    try {
      const before = await this.bearer.get();
      const after = await this.bearer.refresh();
      return after !== before;
    } catch {
      return false;
    }
  }

  private tooLarge(call: HttpCall, status: number): TransportError {
    return this.fault(`the response from ${call.target} is larger than ${this.settings.maxResponseBytes} bytes`, 'too-large', false, { status });
  }

  private cancelled(call: HttpCall, cause?: unknown): TransportError {
    return this.fault(`the call was cancelled before ${call.target} answered`, 'timeout', true, {}, cause);
  }
}

/** Plain http:// reaches only this machine; anything else must be TLS (docs/architecture.md §4.2). */
function parseExecutionUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`EXECUTION_URL is not a valid URL: ${JSON.stringify(raw)}`);
  }
  if (url.username || url.password) throw new ConfigError('EXECUTION_URL must not carry credentials; use EXECUTION_AUTH');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackUrl(url)) return url;
  if (url.protocol === 'http:') {
    throw new ConfigError(`EXECUTION_URL ${url.origin} uses plain http:// to a host that is not loopback; use https:// (http:// is allowed only for 127.0.0.0/8, ::1 and localhost)`);
  }
  throw new ConfigError(`EXECUTION_URL must be an https:// URL, not ${url.protocol}//`);
}

function createSigner(url: URL, auth: Extract<HttpsAuth, { kind: 'sigv4' }>, clock: Clock): SigV4Signer {
  const fromHost = sigv4TargetOfHost(url.hostname);
  const service = auth.service ?? fromHost.service;
  const region = auth.region ?? fromHost.region ?? auth.defaultRegion;
  if (!service) {
    throw new ConfigError(`cannot tell the SigV4 service from the host ${url.hostname}: set EXECUTION_SIGV4_SERVICE (lambda for a function URL, execute-api for API Gateway)`);
  }
  if (!region) throw new ConfigError(`cannot tell the SigV4 region from the host ${url.hostname}: set AWS_REGION`);
  return new SigV4Signer({ service, region }, auth.credentials ?? defaultCredentials(), clock);
}

/**
 * The SDK's default chain (environment, SSO, profiles, container and instance roles), loaded on
 * first use so transports that never sign do not load it, and created once so its cache of
 * temporary credentials survives between calls.
 */
function defaultCredentials(): SigV4Credentials {
  let provider: Promise<() => Promise<AwsCredentials>> | undefined;
  return async () => {
    provider ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => defaultProvider());
    return (await provider)();
  };
}


function withAttempts(error: TransportError, attempts: number): TransportError {
  return new TransportError(`${error.message} (gave up after ${attempts} attempts)`, error.reason, error.retryable, error.details, { cause: error.cause });
}

/** What a fetch failure was, for the message: its errno-style code, else its own words. */
function connectionCode(error: unknown): string {
  return errnoCode(error) ?? (error instanceof Error ? error.message : 'unknown error');
}

function describe(error: unknown): string {
  return redactString(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}

/** The start of an error body, for the operator; tokens and signatures are masked. */
async function readSnippet(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      chunks.push(Buffer.from(chunk));
      size += chunk.byteLength;
      if (size >= SNIPPET_BYTES) break;
    }
  } catch {
    // The status is what matters; a body that breaks off adds nothing.
  }
  const text = Buffer.concat(chunks).toString('utf8').slice(0, SNIPPET_BYTES).replace(/\s+/g, ' ').trim();
  return redactString(text);
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}
