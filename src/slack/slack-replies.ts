import { setTimeout as sleep } from 'node:timers/promises';
import { SlackApiError } from './slack-api-error';
import { ErrorCode, LogLevel, WebClient, type Logger as SlackSdkLogger, type RetryOptions } from '@slack/web-api';
import { ConfigError } from '../config/env';
import { redactString, type Log } from '../observability/logger';
import type { SecretSource } from '../secrets/secret-source';
import { isLoopbackUrl } from '../net/loopback';
import { REPLY_METADATA_TYPE } from './reply-metadata';
import { downloadSlackFile, type SlackConversations, type SlackThreadMessage, type ThreadRead } from './slack-conversations';

/**
 * Posting replies and reactions over the Slack Web API (`@slack/web-api`). The pipeline sees only
 * the `SlackReplies` port; this file is the one adapter that holds a `WebClient`.
 */

export type ReactionTarget = {
  channel: string;
  /** The `ts` of the message to react to. */
  timestamp: string;
  /** Emoji name without colons, e.g. `eyes`. */
  name: string;
};

export { SlackApiError };

/** Bounds on one Slack call: it never outlives the caller's time. */
export type SlackCallOptions = {
  /** Aborts the wait for Slack's answer (the Lambda is about to stop). */
  signal?: AbortSignal;
  /** Epoch ms by which the call must be over: a longer `Retry-After` ends the call at once. */
  deadline?: number;
};

/** Which reply chunk a message is: sent as the message's metadata, so it can be found again. */
export type ReplyMarker = { requestId: string; chunk: number };

export interface SlackReplies {
  /**
   * Posts `text` in the thread whose parent is `threadTs`; resolves with the new message's `ts`.
   * A SlackApiError with `outcome: 'unknown'` means Slack may have posted it anyway.
   */
  post(message: { channel: string; threadTs: string; text: string; marker?: ReplyMarker }, options?: SlackCallOptions): Promise<{ ts: string }>;
  /**
   * The `ts` of a message posted with `marker` in the thread, if there is one — how a poster that
   * takes over a chunk learns that the post it could not confirm did land. Needs the
   * `*:history` scopes; optional for sinks that cannot read a thread back.
   */
  findPosted?(thread: { channel: string; threadTs: string }, marker: ReplyMarker, options?: SlackCallOptions): Promise<string | undefined>;
  /** Adding a reaction that is already there, or to a deleted message, is not an error. */
  addReaction(reaction: ReactionTarget): Promise<void>;
  /** Removing a reaction that is not there, or from a deleted message, is not an error. */
  removeReaction(reaction: ReactionTarget): Promise<void>;
}

/** Slack errors that describe a passing state of Slack, not of the request. */
const TRANSIENT_PLATFORM_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** Reactions are decoration: these mean "already as asked" or "nothing left to decorate". */
const IGNORED_REACTION_ERRORS = new Set(['already_reacted', 'no_reaction', 'message_not_found']);

/** Turns whatever `@slack/web-api` threw into a SlackApiError (the SDK's own messages carry no token). */
export function toSlackApiError(error: unknown, method: string): SlackApiError {
  if (error instanceof SlackApiError) return error;
  const sdk = error as { code?: unknown; data?: { error?: unknown }; statusCode?: unknown; original?: unknown } | undefined;
  switch (sdk?.code) {
    case ErrorCode.PlatformError: {
      const code = typeof sdk.data?.error === 'string' ? sdk.data.error : 'unknown_error';
      return new SlackApiError(`${method} failed: ${code}`, code, TRANSIENT_PLATFORM_ERRORS.has(code), { cause: error });
    }
    case ErrorCode.HTTPError: {
      const status = Number(sdk.statusCode);
      return new SlackApiError(`${method} failed with HTTP ${status}`, `http_${status}`, status >= 500 || status === 408 || status === 429, { cause: error, outcome: status >= 500 || status === 408 ? 'unknown' : 'refused' });
    }
    case ErrorCode.RequestError:
      // WebClient.makeRequest wraps its own "A rate limit was exceeded …" (a 429 that outlasted the retries) in this.
      if (isRateLimitMessage(sdk.original)) return new SlackApiError(`${method} failed: rate limited`, 'ratelimited', true, { cause: error });
      return new SlackApiError(`${method} failed: the request did not complete`, 'request_error', true, { cause: error, outcome: 'unknown' });
    case ErrorCode.RateLimitedError:
      return new SlackApiError(`${method} failed: rate limited`, 'ratelimited', true, { cause: error });
  }
  // A 429 whose Retry-After is unreadable surfaces as a plain Error ("Retry header did not contain …").
  if (isRateLimitMessage(error)) {
    return new SlackApiError(`${method} failed: rate limited`, 'ratelimited', true, { cause: error });
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new SlackApiError(`${method} failed: ${redactString(detail)}`, 'unknown_error', false, { cause: error });
}

function isRateLimitMessage(error: unknown): boolean {
  return error instanceof Error && /rate limit was exceeded|Retry header did not contain/i.test(error.message);
}

export type SlackRepliesLog = Pick<Log, 'info' | 'warn'>;

/** SlackReplies and SlackConversations over a `WebClient` (build one with `createSlackWebClient`). */
export class WebApiSlackReplies implements SlackReplies, SlackConversations {
  constructor(
    private readonly client: WebClient,
    private readonly options: { log?: SlackRepliesLog; /** SLACK_API_URL, when not Slack's: files on its origin may be fetched too (a local fake). */ apiUrl?: string } = {},
  ) {}

  async readThread(thread: { channel: string; threadTs: string; before: string }, limits: { maxPages: number }, options: SlackCallOptions = {}): Promise<ThreadRead> {
    const messages: SlackThreadMessage[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < limits.maxPages; page += 1) {
      const result = await boundedCall(
        'conversations.replies',
        () =>
          this.client.conversations.replies({
            channel: thread.channel,
            ts: thread.threadTs,
            // Only what came before the message being answered: never the message itself or later ones.
            latest: thread.before,
            inclusive: false,
            include_all_metadata: true,
            limit: THREAD_PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
          }),
        options,
        this.options.log,
      );
      for (const message of result.messages ?? []) {
        if (typeof message.ts === 'string' && message.ts < thread.before) messages.push(message as SlackThreadMessage);
      }
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!cursor) return { messages, complete: true };
    }
    return { messages, complete: false };
  }

  async downloadFile(url: string, limits: { maxBytes: number; expectsHtml?: boolean }, options: SlackCallOptions = {}): Promise<Buffer> {
    return downloadSlackFile(url, this.client.token ?? '', { ...limits, ...(this.options.apiUrl ? { apiUrl: this.options.apiUrl } : {}) }, options);
  }

  async post({ channel, threadTs, text, marker }: { channel: string; threadTs: string; text: string; marker?: ReplyMarker }, options: SlackCallOptions = {}): Promise<{ ts: string }> {
    const result = await boundedCall(
      'chat.postMessage',
      () =>
        this.client.chat.postMessage({
          channel,
          thread_ts: threadTs,
          text,
          // An answer full of links would otherwise be followed by previews the user did not ask for.
          unfurl_links: false,
          unfurl_media: false,
          mrkdwn: true,
          ...(marker ? { metadata: { event_type: REPLY_METADATA_TYPE, event_payload: { request_id: marker.requestId, chunk: marker.chunk } } } : {}),
        }),
      options,
      this.options.log,
    );
    return { ts: result.ts ?? '' };
  }

  async findPosted(thread: { channel: string; threadTs: string }, marker: ReplyMarker, options: SlackCallOptions = {}): Promise<string | undefined> {
    let cursor: string | undefined;
    // A bounded look: a reply's chunks are among the thread's latest messages.
    for (let page = 0; page < FIND_POSTED_MAX_PAGES; page += 1) {
      const result = await boundedCall(
        'conversations.replies',
        () => this.client.conversations.replies({ channel: thread.channel, ts: thread.threadTs, include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) }),
        options,
        this.options.log,
      );
      for (const message of result.messages ?? []) {
        const metadata = (message as { metadata?: { event_type?: string; event_payload?: Record<string, unknown> } }).metadata;
        if (metadata?.event_type === REPLY_METADATA_TYPE && metadata.event_payload?.request_id === marker.requestId && Number(metadata.event_payload.chunk) === marker.chunk) {
          return message.ts;
        }
      }
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!cursor) return undefined;
    }
    return undefined;
  }

  async addReaction(reaction: ReactionTarget): Promise<void> {
    await this.react('reactions.add', reaction, () => this.client.reactions.add(reaction));
  }

  async removeReaction(reaction: ReactionTarget): Promise<void> {
    await this.react('reactions.remove', reaction, () => this.client.reactions.remove(reaction));
  }

  private async react(method: string, reaction: ReactionTarget, call: () => Promise<unknown>): Promise<void> {
    try {
      await boundedCall(method, call, {}, this.options.log);
    } catch (error) {
      const failure = toSlackApiError(error, method);
      if (!IGNORED_REACTION_ERRORS.has(failure.code)) throw failure;
      this.options.log?.info('reaction left as it is', { method, reaction: reaction.name, code: failure.code });
    }
  }
}

/** Slack's recommended page size for `conversations.replies`. */
const THREAD_PAGE_SIZE = 200;

export { REPLY_METADATA_TYPE };
const FIND_POSTED_MAX_PAGES = 5;

/** Waits for a 429's `Retry-After` at most this many times in one call; then SQS redelivers. */
const MAX_RATE_LIMIT_WAITS = 2;
/** Retries of a call Slack answered with a server error (250 ms, 500 ms, 1 s apart). */
const MAX_SERVER_ERROR_RETRIES = 3;
const SERVER_RETRY_BACKOFF_MS = 250;

/**
 * One Slack call within the caller's time. The client rejects rate-limited calls (it would wait
 * out any `Retry-After`, however long, deaf to the caller's signal); here a wait that ends before
 * the deadline is waited out, abortably, and a longer one ends the call as retryable, for SQS to
 * deliver again later. A server error Slack answered is tried again a few times, quickly; a call
 * with no answer (timeout, reset) is not, since it may have landed. The caller's signal also ends
 * the wait for Slack's answer, with the outcome unknown.
 */
async function boundedCall<T>(method: string, call: () => Promise<T>, options: SlackCallOptions, log: SlackRepliesLog | undefined): Promise<T> {
  let rateLimitWaits = 0;
  let serverRetries = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      return await abortable(call(), options.signal, method);
    } catch (error) {
      const retryAfterMs = rateLimitWaitMs(error);
      if (retryAfterMs === undefined) {
        const failure = toSlackApiError(error, method);
        // Slack answered that it failed (5xx, internal_error, …): try again soon, within the time
        // left. Never after no answer at all (a timeout, a reset): that post may have landed.
        const backoffMs = SERVER_RETRY_BACKOFF_MS * 2 ** serverRetries;
        const answeredFailure = failure.retryable && failure.code !== 'request_error' && failure.code !== 'ratelimited';
        if (!answeredFailure || serverRetries >= MAX_SERVER_ERROR_RETRIES || !fitsBefore(options.deadline, backoffMs)) throw failure;
        serverRetries += 1;
        log?.warn('Slack answered with a server error; trying again', { method, code: failure.code, attempt: serverRetries + 1 });
        await sleep(backoffMs, undefined, options.signal ? { signal: options.signal } : {});
        continue;
      }
      if (!fitsBefore(options.deadline, retryAfterMs) || rateLimitWaits >= MAX_RATE_LIMIT_WAITS) {
        throw new SlackApiError(`${method} failed: rate limited for ${Math.ceil(retryAfterMs / 1000)} s`, 'ratelimited', true, { cause: error });
      }
      rateLimitWaits += 1;
      log?.warn('Slack rate-limited a call; waiting for Retry-After before retrying', { method, retry_after_seconds: retryAfterMs / 1000 });
      await sleep(retryAfterMs, undefined, options.signal ? { signal: options.signal } : {});
    }
  }
}

function fitsBefore(deadline: number | undefined, waitMs: number): boolean {
  return deadline === undefined || Date.now() + waitMs < deadline;
}

function rateLimitWaitMs(error: unknown): number | undefined {
  const sdk = error as { code?: unknown; retryAfter?: unknown } | undefined;
  if (sdk?.code !== ErrorCode.RateLimitedError) return undefined;
  return Math.max(0, Number(sdk.retryAfter) || 0) * 1000;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, method: string): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new SlackApiError(`${method}: no answer before the caller ran out of time`, 'request_error', true, { outcome: 'unknown', cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Slack errors that refuse the token itself; after a rotation, what the old token gets. */
export const TOKEN_REFUSED_ERRORS: ReadonlySet<string> = new Set(['invalid_auth', 'token_revoked', 'token_expired', 'not_authed', 'account_inactive']);

export type RotatingSlackRepliesOptions = Omit<SlackWebClientOptions, 'token' | 'log'> & { log?: Pick<Log, 'info' | 'warn' | 'error'> };

/**
 * SlackReplies whose bot token comes from a secret that may rotate while the process lives (a
 * warm Lambda). The WebClient is rebuilt whenever the secret's value changes; a call Slack
 * refuses for its token (TOKEN_REFUSED_ERRORS) re-reads the secret once and, if that gives a
 * new token, is made once more with it. No Slack call is made before the token is read.
 */
export function slackRepliesFromSecret(botToken: SecretSource, options: RotatingSlackRepliesOptions = {}): SlackReplies & SlackConversations {
  let current: { token: string; replies: WebApiSlackReplies } | undefined;
  const repliesWith = (token: string): WebApiSlackReplies => {
    if (current?.token !== token) current = { token, replies: new WebApiSlackReplies(createSlackWebClient({ ...options, token }), { log: options.log, ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}) }) };
    return current.replies;
  };

  const call = async <T>(method: string, run: (replies: WebApiSlackReplies) => Promise<T>): Promise<T> => {
    const token = await botToken.get();
    try {
      return await run(repliesWith(token));
    } catch (error) {
      if (!(error instanceof SlackApiError) || !TOKEN_REFUSED_ERRORS.has(error.code)) throw error;
      const fresh = await botToken.refresh().catch((refreshError: unknown) => {
        options.log?.warn('Slack refused the bot token and re-reading its secret failed', { method, code: error.code, error: refreshError as Error });
        return token;
      });
      // The same token again would be refused again: report Slack's answer instead.
      if (fresh === token) throw error;
      options.log?.info('Slack refused the bot token; retrying once with the token re-read from its secret', { method, code: error.code });
      return run(repliesWith(fresh));
    }
  };

  return {
    post: (message, callOptions) => call('chat.postMessage', (replies) => replies.post(message, callOptions)),
    findPosted: (thread, marker, callOptions) => call('conversations.replies', (replies) => replies.findPosted(thread, marker, callOptions)),
    readThread: (thread, limits, callOptions) => call('conversations.replies', (replies) => replies.readThread(thread, limits, callOptions)),
    // A refused download is Slack's sign-in page, not an API error: it never triggers a re-read.
    downloadFile: (url, limits, callOptions) => call('files', (replies) => replies.downloadFile(url, limits, callOptions)),
    addReaction: (reaction) => call('reactions.add', (replies) => replies.addReaction(reaction)),
    removeReaction: (reaction) => call('reactions.remove', (replies) => replies.removeReaction(reaction)),
  };
}

export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

export type SlackWebClientOptions = {
  token: string;
  /** SLACK_API_URL: Slack's, or a local fake's. Method names are appended to it. */
  apiUrl?: string;
  /**
   * Retries of Slack 5xx and network faults within one call. @default 0: a post whose answer was
   * lost (a timeout, a reset) may have landed, and the client would post it again at once; the
   * chunk's claim and SQS redelivery decide instead (docs/architecture.md §6). 429s are never
   * retried here: `boundedCall` waits them out when the wait fits.
   */
  retries?: number;
  /** Per-attempt HTTP timeout. @default 10000 */
  timeoutMs?: number;
  /** Where the SDK's own warnings and errors go; without it they are dropped. */
  log?: Pick<Log, 'warn' | 'error'>;
};

/**
 * A WebClient set up for a Lambda function. Verified against @slack/web-api 8.2.0
 * (`WebClient.makeRequest`): with `rejectRateLimitedCalls: false` (its default) a 429 pauses the
 * client for the whole `Retry-After`, however long and whatever time the Lambda has left — so here
 * a 429 is rejected and `boundedCall` decides whether the wait fits. `ok:false` answers are not
 * retried; non-200 answers and network faults are only if `retries` says so (by default not: a
 * retried post that had landed is a duplicate). The SDK's default policy (10 retries over about
 * 30 minutes) would outlive any Lambda; SQS redelivery covers outages.
 */
export function createSlackWebClient(options: SlackWebClientOptions): WebClient {
  const apiUrl = slackApiUrl(options.apiUrl ?? DEFAULT_SLACK_API_URL);
  const client = new WebClient(options.token, {
    slackApiUrl: apiUrl,
    logger: sdkLogger(options.log),
    retryConfig: lambdaRetryPolicy(options.retries ?? 0),
    timeout: options.timeoutMs ?? 10_000,
    // A 429 comes back to us (boundedCall): the client's own wait knows no deadline.
    rejectRateLimitedCalls: true,
    // The token goes with every call; never to a URL other than the configured API.
    allowAbsoluteUrls: false,
  });
  return client;
}

export function lambdaRetryPolicy(retries: number): RetryOptions {
  return { retries, factor: 2, minTimeout: 250, maxTimeout: 2_000, randomize: true };
}

/**
 * Refuses plain http:// except to loopback (the bot token travels with every call), and ends the
 * URL with '/' because the SDK appends method names to it.
 */
export function slackApiUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLACK_API_URL is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    throw new ConfigError('SLACK_API_URL must use https:// (plain http:// is allowed only to a loopback host)');
  }
  if (url.search || url.hash) throw new ConfigError('SLACK_API_URL must not have a query or fragment');
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

/**
 * The SDK's logger interface over ours, at WARN: its debug and info lines (request bodies, "http
 * request url …") are dropped, and what is left goes through our redacting logger.
 */
function sdkLogger(log: Pick<Log, 'warn' | 'error'> | undefined): SlackSdkLogger {
  const text = (parts: unknown[]) => redactString(parts.map((part) => (typeof part === 'string' ? part : safeJson(part))).join(' '));
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...parts: unknown[]) => log?.warn(`@slack/web-api: ${text(parts)}`),
    error: (...parts: unknown[]) => log?.error(`@slack/web-api: ${text(parts)}`),
    setLevel: () => undefined,
    getLevel: () => LogLevel.WARN,
    setName: () => undefined,
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
