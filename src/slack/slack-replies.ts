import { setTimeout as sleep } from 'node:timers/promises';
import { SlackApiError, STREAM_REFUSED_ERRORS } from './slack-api-error';
import { ErrorCode, LogLevel, WebClient, type Logger as SlackSdkLogger, type RetryOptions } from '@slack/web-api';
import { ConfigError } from '../config/env';
import { redactString, type Log } from '../observability/logger';
import type { SecretSource } from '../secrets/secret-source';
import { isLoopbackUrl } from '../net/loopback';
import { REPLY_METADATA_TYPE } from './reply-metadata';
import { downloadSlackFile, type SlackConversations, type SlackThreadMessage, type ThreadRead } from './slack-conversations';
import { STREAM_MARKDOWN_LIMIT, type LiveMessage, type LiveTask, type LiveThread, type SlackLive } from './slack-live';

/**
 * Posting replies and reactions, and live replies (a thread status, a streamed or edited message),
 * over the Slack Web API (`@slack/web-api`). The pipeline sees only the `SlackReplies`,
 * `SlackConversations` and `SlackLive` ports; this file is the one adapter that holds a `WebClient`.
 */

export type ReactionTarget = {
  channel: string;
  /** The `ts` of the message to react to. */
  timestamp: string;
  /** Emoji name without colons, e.g. `eyes`. */
  name: string;
};

export { SlackApiError, STREAM_REFUSED_ERRORS };
export type { LiveMessage, LiveTask, LiveThread, SlackLive };

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

/** SlackReplies, SlackConversations and SlackLive over a `WebClient` (build one with `createSlackWebClient`). */
export class WebApiSlackReplies implements SlackReplies, SlackConversations, SlackLive {
  constructor(
    private readonly client: WebClient,
    private readonly options: { log?: SlackRepliesLog; /** SLACK_API_URL, when not Slack's: files on its origin may be fetched too (a local fake). */ apiUrl?: string } = {},
  ) {}

  async readThread(thread: { channel: string; threadTs: string; before: string }, limits: { maxPages: number; keepNewest: number }, options: SlackCallOptions = {}): Promise<ThreadRead> {
    let first: SlackThreadMessage | undefined;
    const newest: SlackThreadMessage[] = [];
    let read = 0;
    let cursor: string | undefined;
    for (let page = 0; page < limits.maxPages; page += 1) {
      let result;
      try {
        result = await boundedCall(
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
      } catch (error) {
        // The first page refused: no context. A later one: what was read still helps.
        if (page === 0) throw error;
        this.options.log?.warn('a later page of the thread could not be read; going on with what was read', { code: toSlackApiError(error, 'conversations.replies').code, pages: page });
        return { messages: first ? [first, ...newest] : newest, read, complete: false };
      }
      for (const raw of result.messages ?? []) {
        if (typeof raw.ts !== 'string' || compareTs(raw.ts, thread.before) >= 0) continue;
        const message = threadMessageOf(raw as Record<string, unknown> & { ts: string });
        read += 1;
        // Slack gives pages oldest first: keep the first message, and the newest in a rolling window.
        if (!first) first = message;
        else {
          newest.push(message);
          if (newest.length > limits.keepNewest) newest.shift();
        }
      }
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!cursor) return { messages: first ? [first, ...newest] : newest, read, complete: true };
    }
    return { messages: first ? [first, ...newest] : newest, read, complete: false };
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
          ...(marker ? { metadata: replyMetadata(marker) } : {}),
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

  async setStatus(thread: LiveThread, status: string, options: SlackCallOptions & { loadingMessages?: readonly string[] } = {}): Promise<void> {
    const { loadingMessages, ...callOptions } = options;
    await boundedCall(
      'assistant.threads.setStatus',
      () =>
        this.client.assistant.threads.setStatus({
          channel_id: thread.channel,
          thread_ts: thread.threadTs,
          status,
          // Slack refuses more than 10; the status is decoration, so the rest are dropped.
          ...(loadingMessages?.length ? { loading_messages: loadingMessages.slice(0, MAX_LOADING_MESSAGES) } : {}),
        }),
      callOptions,
      this.options.log,
      // The same status twice is the same status: safe to try again after no answer.
      { afterNoAnswer: true },
    );
  }

  async startStream(
    { channel, threadTs, recipientUserId, recipientTeamId, markdownText, task }: LiveThread & { recipientUserId?: string; recipientTeamId?: string; markdownText?: string; task?: LiveTask },
    options: SlackCallOptions = {},
  ): Promise<{ ts: string }> {
    // Refused here as Slack would: a stream whose start failed half-way would leave the caller without its ts.
    if (markdownText !== undefined && markdownText.length > STREAM_MARKDOWN_LIMIT) {
      throw new SlackApiError(`chat.startStream refused: more than ${STREAM_MARKDOWN_LIMIT} characters of markdown; start with less and append the rest`, 'msg_too_long', false);
    }
    const result = await boundedCall(
      'chat.startStream',
      () =>
        this.client.chat.startStream({
          channel,
          thread_ts: threadTs,
          ...(recipientUserId ? { recipient_user_id: recipientUserId } : {}),
          ...(recipientTeamId ? { recipient_team_id: recipientTeamId } : {}),
          ...streamContent(markdownText, task),
        }),
      options,
      this.options.log,
    );
    return { ts: result.ts ?? '' };
  }

  async appendStream(message: LiveMessage, markdownText: string, options: SlackCallOptions = {}): Promise<void> {
    await this.appendPieces(message, splitMarkdown(markdownText, STREAM_MARKDOWN_LIMIT), options);
  }

  async stopStream(message: LiveMessage, options: SlackCallOptions & { markdownText?: string; marker?: ReplyMarker; task?: LiveTask } = {}): Promise<void> {
    const { markdownText, marker, task, ...callOptions } = options;
    const pieces = markdownText ? splitMarkdown(markdownText, STREAM_MARKDOWN_LIMIT) : [];
    const last = pieces.pop();
    // What does not fit the stop goes first, as appends.
    await this.appendPieces(message, pieces, callOptions);
    try {
      await boundedCall(
        'chat.stopStream',
        () =>
          this.client.chat.stopStream({
            channel: message.channel,
            ts: message.ts,
            ...streamContent(last, task),
            ...(marker ? { metadata: replyMetadata(marker) } : {}),
          }),
        callOptions,
        this.options.log,
        // A stop cannot land twice: a repeat of one that landed is refused, never doubled. That
        // refusal then says nothing about the first stop, so its outcome is unknown.
        { afterNoAnswer: true, ambiguousAfterRetry: STREAM_STATE_ERRORS },
      );
    } catch (error) {
      throw pieces.length > 0 ? partlyLanded(error, 'chat.stopStream', pieces.length) : error;
    }
  }

  async update(message: LiveMessage, text: string, options: SlackCallOptions & { marker?: ReplyMarker } = {}): Promise<void> {
    const { marker, ...callOptions } = options;
    await boundedCall(
      'chat.update',
      () => this.client.chat.update({ channel: message.channel, ts: message.ts, text, ...(marker ? { metadata: replyMetadata(marker) } : {}) }),
      callOptions,
      this.options.log,
      // The same text twice is the same message: safe to try again after no answer.
      { afterNoAnswer: true },
    );
  }

  /** `chat.appendStream` once per piece, in order; never again after no answer (the text would show twice). */
  private async appendPieces(message: LiveMessage, pieces: readonly string[], options: SlackCallOptions): Promise<void> {
    for (const [index, piece] of pieces.entries()) {
      try {
        await boundedCall('chat.appendStream', () => this.client.chat.appendStream({ channel: message.channel, ts: message.ts, markdown_text: piece }), options, this.options.log);
      } catch (error) {
        throw index > 0 ? partlyLanded(error, 'chat.appendStream', index) : error;
      }
    }
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

/** The metadata that marks a reply chunk (`findPosted` looks for it). */
function replyMetadata(marker: ReplyMarker): { event_type: string; event_payload: { request_id: string; chunk: number } } {
  return { event_type: REPLY_METADATA_TYPE, event_payload: { request_id: marker.requestId, chunk: marker.chunk } };
}

/** Slack refuses more `loading_messages` than this. */
const MAX_LOADING_MESSAGES = 10;

/** Refusals of a stream call that describe the stream's state (stopped, expired). */
const STREAM_STATE_ERRORS: ReadonlySet<string> = new Set(['message_not_in_streaming_state']);

/**
 * A stream call's content: plain `markdown_text`, or — with a task step — `chunks` (Slack takes
 * one or the other), the task first.
 */
function streamContent(markdownText: string | undefined, task: LiveTask | undefined) {
  if (!task) return markdownText ? { markdown_text: markdownText } : {};
  const taskChunk = { type: 'task_update' as const, id: task.id, title: task.title, status: task.status, ...(task.details ? { details: task.details } : {}) };
  return { chunks: markdownText ? [taskChunk, { type: 'markdown_text' as const, text: markdownText }] : [taskChunk] };
}

/**
 * Cuts markdown into pieces of at most `limit` UTF-16 units (at most `limit` characters however
 * Slack counts them), never inside a surrogate pair, at a line end when one is near the limit.
 * The pieces are appended one after the other, so where they are cut changes only what shows
 * between two calls. Empty text gives no pieces.
 */
export function splitMarkdown(text: string, limit: number = STREAM_MARKDOWN_LIMIT): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = limit;
    const newline = rest.lastIndexOf('\n', limit - 1);
    if (newline >= limit - Math.ceil(limit / 10)) cut = newline + 1;
    else if (isHighSurrogate(rest.charCodeAt(cut - 1)) && cut > 1) cut -= 1;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) pieces.push(rest);
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** A failure of a call made of several, after `landed` of them did: what shows in Slack is no longer what it was. */
function partlyLanded(error: unknown, method: string, landed: number): SlackApiError {
  const failure = toSlackApiError(error, method);
  return new SlackApiError(`${failure.message} (after ${landed} earlier part(s) of the text landed)`, failure.code, failure.retryable, { cause: failure, outcome: 'unknown' });
}

/** Only what the thread context reads of a message: a page holds up to 200, with all their blocks. */
function threadMessageOf(raw: Record<string, unknown> & { ts: string }): SlackThreadMessage {
  const text = (key: string) => (typeof raw[key] === 'string' ? (raw[key] as string) : undefined);
  const files = Array.isArray(raw.files) ? (raw.files as Array<{ name?: unknown; title?: unknown }>).map((file) => ({ ...(typeof file.name === 'string' ? { name: file.name } : {}), ...(typeof file.title === 'string' ? { title: file.title } : {}) })) : undefined;
  const metadata = raw.metadata as { event_type?: unknown } | undefined;
  const optional = { text: text('text'), user: text('user'), bot_id: text('bot_id'), subtype: text('subtype') };
  return {
    ts: raw.ts,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
    ...(files?.length ? { files } : {}),
    ...(typeof metadata?.event_type === 'string' ? { metadata: { event_type: metadata.event_type } } : {}),
  };
}

/** Slack timestamps ("seconds.micro") compared as numbers, whatever their lengths. */
export function compareTs(a: string, b: string): number {
  const [as = '0', am = ''] = a.split('.');
  const [bs = '0', bm = ''] = b.split('.');
  return Number(as) - Number(bs) || Number(am.padEnd(6, '0')) - Number(bm.padEnd(6, '0'));
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
 * with no answer (timeout, reset) is not, since it may have landed — unless `retry.afterNoAnswer`
 * says the call is safe to repeat (a status, an edit, a stop). The caller's signal also ends the
 * wait for Slack's answer, with the outcome unknown, and is never followed by a retry.
 */
async function boundedCall<T>(method: string, call: () => Promise<T>, options: SlackCallOptions, log: SlackRepliesLog | undefined, retry: CallRetry = {}): Promise<T> {
  let rateLimitWaits = 0;
  let serverRetries = 0;
  /** An earlier attempt got no answer, or a 5xx: it may have taken effect. */
  let mayHaveLanded = false;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      return await abortable(call(), options.signal, method);
    } catch (error) {
      const retryAfterMs = rateLimitWaitMs(error);
      if (retryAfterMs === undefined) {
        const failure = toSlackApiError(error, method);
        if (mayHaveLanded && retry.ambiguousAfterRetry?.has(failure.code)) {
          throw new SlackApiError(`${failure.message} (an earlier attempt may have landed)`, failure.code, failure.retryable, { cause: failure, outcome: 'unknown' });
        }
        // Slack answered that it failed (5xx, internal_error, …): try again soon, within the time
        // left. Never after no answer at all (a timeout, a reset): that post may have landed —
        // unless the call is safe to repeat, and the caller is still waiting.
        const backoffMs = SERVER_RETRY_BACKOFF_MS * 2 ** serverRetries;
        const answeredFailure = failure.retryable && failure.code !== 'request_error' && failure.code !== 'ratelimited';
        const unanswered = failure.code === 'request_error' && retry.afterNoAnswer === true && !options.signal?.aborted;
        if (!(answeredFailure || unanswered) || serverRetries >= MAX_SERVER_ERROR_RETRIES || !fitsBefore(options.deadline, backoffMs)) throw failure;
        serverRetries += 1;
        if (failure.outcome === 'unknown') mayHaveLanded = true;
        log?.warn(unanswered ? 'Slack did not answer a call that is safe to repeat; trying again' : 'Slack answered with a server error; trying again', { method, code: failure.code, attempt: serverRetries + 1 });
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

/** How a call may be repeated beyond what every call gets (429 waits, retries of answered server errors). */
type CallRetry = {
  /** Safe to repeat after no answer (a timeout, a reset): it cannot take effect twice. */
  afterNoAnswer?: boolean;
  /** Codes that, answered to a repeat of an attempt that may have landed, leave the outcome unknown. */
  ambiguousAfterRetry?: ReadonlySet<string>;
};

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
 * SlackReplies (and SlackConversations, SlackLive) whose bot token comes from a secret that may
 * rotate while the process lives (a warm Lambda). The WebClient is rebuilt whenever the secret's
 * value changes; a call Slack refuses for its token (TOKEN_REFUSED_ERRORS) re-reads the secret
 * once and, if that gives a new token, is made once more with it — unless part of it had landed
 * (a split append: the error's outcome is then `unknown`). No Slack call is made before the
 * token is read.
 */
export function slackRepliesFromSecret(botToken: SecretSource, options: RotatingSlackRepliesOptions = {}): SlackReplies & SlackConversations & SlackLive {
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
      // A refusal that came after part of the call landed (a split append) is not made again.
      if (!(error instanceof SlackApiError) || !TOKEN_REFUSED_ERRORS.has(error.code) || error.outcome !== 'refused') throw error;
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
    setStatus: (thread, status, callOptions) => call('assistant.threads.setStatus', (replies) => replies.setStatus(thread, status, callOptions)),
    startStream: (stream, callOptions) => call('chat.startStream', (replies) => replies.startStream(stream, callOptions)),
    appendStream: (message, markdownText, callOptions) => call('chat.appendStream', (replies) => replies.appendStream(message, markdownText, callOptions)),
    stopStream: (message, callOptions) => call('chat.stopStream', (replies) => replies.stopStream(message, callOptions)),
    update: (message, text, callOptions) => call('chat.update', (replies) => replies.update(message, text, callOptions)),
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
