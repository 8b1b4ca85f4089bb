import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './http';
import { UPLOAD_URL_METHOD, createFakeUploads, type FakeSlackFileShare, type FakeSlackUpload, type FakeUploadPolicy } from './fake-slack-uploads';

/**
 * A loopback fake of the Slack Web API, for the real `@slack/web-api` client (point
 * `slackApiUrl` at `apiUrl`). It answers `chat.postMessage`, `conversations.replies` (threads of
 * people's messages and the bot's posts and streamed messages, paged, bounded by `latest`),
 * `reactions.add`, `reactions.remove`, `auth.test`, the live-reply methods
 * `assistant.threads.setStatus`, `chat.startStream`, `chat.appendStream`, `chat.stopStream` and
 * `chat.update`, the agent surface's `agents.sessions.setStatus`, `agents.sessions.rename`,
 * `assistant.threads.setSuggestedPrompts`, `chat.postEphemeral` and `views.open`, Slack's three-call
 * file upload (`files.getUploadURLExternal`, the POST to its `upload_url`, `files.completeUploadExternal`:
 * fake-slack-uploads.ts), and serves hosted
 * files with the bot token, the way Slack does — `{ok:false,error}` with HTTP 200 for API errors,
 * 429 with `Retry-After` when rate limiting — and records what it was sent. Injected failures
 * (`failNext`, `failWhen`) are answered before the call does anything, or — `afterEffect` — after
 * it took effect, as a real 5xx or `internal_error` may be: a post that landed with an error answer.
 *
 * The app is an agent app (`features.agent_view`): each thread may have an agent session, created
 * by its first `agents.sessions.setStatus` (title and initiator are used only then), with its
 * status history; `chat.stopStream`'s `session_status` moves it too. While a session is
 * `processing` Slack shows its Stop button: `pressStop` is the user pressing it (Slack stops the
 * app's streams in the thread and sends `agent_session_stopped`). Suggested prompts sent with a
 * `thread_ts` are answered ok and dropped, as Slack does for agent apps. A modal needs a trigger
 * Slack issued (`mintTrigger`) at most 3 s before. Messages keep the `blocks` they were given.
 *
 * Streamed messages are not `posts` (those are `chat.postMessage` calls, as sent): they are
 * `streams`. `chat.update` leaves `posts` as they were sent too and records `updates`; the text a
 * message shows now — posted, streamed or edited — is `messageText(ts)`, and is what
 * `conversations.replies` returns.
 *
 * Bodies: @slack/web-api 8 sends `application/x-www-form-urlencoded` (objects as JSON strings
 * inside the form) with the token in `Authorization: Bearer`; other clients send JSON. Both are
 * read, and so are query parameters. Like Slack, a form body may carry the token as `token`.
 * The token is checked but never stored outside the recorded request headers.
 */

/** A Block Kit block, as the fake was sent it. */
export type FakeSlackBlock = Record<string, unknown>;
export type FakeSlackPost = { channel: string; thread_ts?: string; text: string; ts: string; blocks?: FakeSlackBlock[] };
/** A message someone (not the bot) wrote, as `conversations.replies` returns it. */
export type FakeSlackMessage = { channel: string; ts: string; thread_ts?: string; user: string; text: string; subtype?: string; files?: FakeSlackFile[]; /** Another app's post. */ bot_id?: string; metadata?: { event_type: string; event_payload: Record<string, unknown> } };
/** A file Slack hosts, as message events list it. */
export type FakeSlackFile = { id: string; name: string; title: string; mimetype: string; filetype: string; size: number; url_private: string; url_private_download: string };
export type FakeFileFailure = { status?: number; stallMs?: number; times?: number };
export type FakeSlackReaction = { op: 'add' | 'remove'; channel: string; timestamp: string; name: string };
/**
 * A request that reached the fake. `at`: when it had arrived whole; `answer`: how and when the fake
 * answered it (absent while a stall holds it). Times are epoch milliseconds with sub-millisecond
 * precision (`performance.timeOrigin + performance.now()`), comparable with `fakeSlackNow()`.
 */
export type FakeSlackRequest = {
  method: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  at: number;
  answer?: {
    at: number;
    status: number;
    ok: boolean;
    error?: string;
    /** An `afterEffect` failure: what the call did before the error was answered instead. */
    applied?: { ok: boolean; error?: string };
  };
};

/** The fake's clock: epoch milliseconds with sub-millisecond precision (what `FakeSlackRequest.at` is read from). */
export function fakeSlackNow(): number {
  return performance.timeOrigin + performance.now();
}

/** An accepted `assistant.threads.setStatus` (`status: ''` clears the status). */
export type FakeSlackStatus = { channel: string; thread_ts: string; status: string; loading_messages?: string[] };
/**
 * A message streamed with `chat.startStream`: `text` is all its markdown so far (the start's, each
 * append's, the stop's), `appends` the markdown of each `chat.appendStream` call, `tasks` every
 * `task_update` chunk it was sent, in order. `expired`: Slack ended it (`expireStream`).
 */
export type FakeSlackStream = {
  channel: string;
  thread_ts: string;
  ts: string;
  state: 'streaming' | 'stopped' | 'expired';
  recipient_user_id?: string;
  recipient_team_id?: string;
  text: string;
  appends: string[];
  tasks: Array<Record<string, unknown>>;
  /**
   * The task cards the message shows, as Slack draws them: one per `task_update` id, in the order
   * first sent, each at its latest state (a later chunk with the same id changes the card).
   */
  cards: FakeSlackCard[];
  /** The plan's title (the last `plan_update`), and how tasks are shown (`task_display_mode`, timeline by default). */
  plan_title?: string;
  task_display_mode: 'timeline' | 'plan';
  /** The blocks `chat.stopStream` put under it. */
  blocks?: FakeSlackBlock[];
};
/** A task card on a streamed message. */
export type FakeSlackCard = { id: string; title: string; status: 'pending' | 'in_progress' | 'complete' | 'error'; details?: string; output?: string; sources?: Array<{ type: 'url'; url: string; text: string }> };
/** An accepted `chat.update`. */
export type FakeSlackUpdate = { channel: string; ts: string; text: string; blocks?: FakeSlackBlock[] };

export const AGENT_SESSION_STATUSES = ['processing', 'active', 'suspended', 'closed'] as const;
export type FakeSlackSessionStatus = (typeof AGENT_SESSION_STATUSES)[number];
/**
 * A thread's agent session: `status` now, `history` every status it was set to (by
 * `agents.sessions.setStatus` or `chat.stopStream`'s `session_status`), in order; `title` and
 * `initiator_user_id` as the call that created it gave them (a rename changes the title).
 */
export type FakeSlackSession = { channel: string; thread_ts: string; status: FakeSlackSessionStatus; history: FakeSlackSessionStatus[]; title?: string; initiator_user_id?: string };
/** An accepted `assistant.threads.setSuggestedPrompts`; `dropped`: sent with a `thread_ts`, which an agent app's DM ignores. */
export type FakeSlackPrompts = { channel: string; thread_ts?: string; title?: string; prompts: Array<{ title: string; message: string }>; dropped: boolean };
/** An accepted `chat.postEphemeral`: seen by `user` alone. */
export type FakeSlackEphemeral = { channel: string; user: string; text: string; thread_ts?: string; blocks?: FakeSlackBlock[]; message_ts: string };
/** A modal opened with `views.open`. */
export type FakeSlackView = { id: string; trigger_id: string; view: Record<string, unknown> };
/** What Slack sends when the user presses Stop: the `agent_session_stopped` event (for an envelope). */
export type FakeStopEvent = { type: 'agent_session_stopped'; channel: string; thread_ts: string; user: string; event_ts: string; streaming_message_ts: string[] };

export type FakeSlackFailure = {
  /** HTTP status; 429 when `retryAfterSeconds` is set, else 200 (an API error). */
  status?: number;
  /** Slack's `error` string: `ratelimited` for 429s, `internal_error` otherwise. */
  error?: string;
  /** Sent as `Retry-After`. */
  retryAfterSeconds?: number;
  /** How many calls in a row fail. @default 1 */
  times?: number;
  /**
   * Holds the answer this long, then answers normally (the call succeeds, late): a Slack that is
   * slow, or a response lost to a caller that stopped waiting.
   */
  stallMs?: number;
  /**
   * The call takes effect first (a post lands, a stream grows), then the error is answered: a 5xx
   * from a proxy or load balancer after it forwarded the call, an `internal_error` Slack gave up
   * with after it wrote the message. Without it every injected error is answered before the call
   * does anything. (With `stallMs` the call takes effect as soon as it arrives, and is answered late.)
   */
  afterEffect?: boolean;
};

export type FakeSlackApi = {
  /** Ends with '/', as the SDK's `slackApiUrl` must. */
  apiUrl: string;
  /** The bot token the fake accepts now. */
  readonly token: string;
  /**
   * A token rotation: from now on only `next` is accepted, and the token accepted until now is
   * answered `{ok:false,error:refusedWith}` — `invalid_auth` by default; `token_revoked`,
   * `token_expired` and `account_inactive` are Slack's other answers to a token it no longer takes.
   */
  rotateToken(next: string, refusedWith?: string): void;
  botUserId: string;
  /** Successful posts, in the order Slack accepted them. */
  posts: FakeSlackPost[];
  /** Successful reaction changes, in order. */
  reactions: FakeSlackReaction[];
  /** Accepted `assistant.threads.setStatus` calls, in order (refused ones are only in `requests`). */
  statuses: FakeSlackStatus[];
  /**
   * The status a thread shows now: the last one set, unless cleared (`''`), or the bot wrote in
   * the thread since (a post, a stream), or 2 minutes passed — as on Slack.
   */
  statusOf(channel: string, threadTs: string): string | undefined;
  /** Streams started with `chat.startStream`, in order; each record changes as the stream does. */
  streams: FakeSlackStream[];
  /** Accepted `chat.update` calls, in order. */
  updates: FakeSlackUpdate[];
  /** The text a message shows now: a post as edited since, a stream's markdown so far, a person's message. */
  messageText(ts: string): string | undefined;
  /** Slack ends a stream (it timed out): from now on `chat.appendStream` and `chat.stopStream` refuse with `message_not_in_streaming_state`. */
  expireStream(ts: string): void;
  /** Resolves with the streams once at least `count` exist (with `stopped`, at least `count` are stopped). */
  waitForStreams(count: number, options?: { stopped?: boolean; timeoutMs?: number }): Promise<FakeSlackStream[]>;
  /**
   * Adds a message by a person (a thread's parent, or a reply with `thread_ts`), so that
   * `conversations.replies` returns it with the bot's posts; resolves with its `ts`.
   */
  addMessage(message: Omit<FakeSlackMessage, 'ts'> & { ts?: string }): string;
  /** Deletes a message as Slack does: a thread's parent becomes a tombstone, a reply disappears. */
  deleteMessage(channel: string, ts: string): void;
  /** Hosts a file for download at its `url_private_download` (with the bot token, as Slack serves it). */
  addFile(file: { name: string; mimetype: string; bytes: Buffer; filetype?: string; size?: number }): FakeSlackFile;
  /** Makes the next download(s) of a file fail with an HTTP status, or stall. */
  failFile(id: string, failure: FakeFileFailure): void;
  /** Every file download that reached the fake: which file, and whether the bot token came with it. */
  downloads: Array<{ id: string; authorized: boolean }>;
  /** Every request that reached the fake, failed ones included. */
  requests: FakeSlackRequest[];
  /**
   * Makes the next call(s) of `method` fail; failures queue in the order given. By default the
   * error is answered before the call takes effect; `afterEffect` applies the call first.
   */
  failNext(method: string, failure?: FakeSlackFailure): void;
  /**
   * Like failNext, but only for calls of `method` whose recorded body `match` accepts (e.g. the
   * posts of one thread), so that concurrent callers each meet their own faults. Checked before
   * the failNext queue; several rules for the same calls apply in the order given.
   */
  failWhen(method: string, match: (body: Record<string, unknown>) => boolean, failure?: FakeSlackFailure): void;
  /**
   * Calls answered with an injected failure or stall so far, by kind: `429`, `http_<status>`,
   * `api_error`, `stall`; a failure answered after the call took effect adds ` after effect`
   * (`http_500 after effect`, `api_error after effect`).
   */
  readonly injected: Readonly<Record<string, number>>;
  /** Resolves with the posts once there are at least `count`. */
  waitForPosts(count: number, timeoutMs?: number): Promise<FakeSlackPost[]>;
  /** The blocks a bot message shows now: a post's (as updated since), a stream's stop blocks (as updated since). */
  messageBlocks(ts: string): FakeSlackBlock[] | undefined;
  /** Agent sessions, in the order they were created; each record changes as the session does. */
  sessions: FakeSlackSession[];
  /** The session of a thread, if one was created. */
  sessionOf(channel: string, threadTs: string): FakeSlackSession | undefined;
  /**
   * The user presses the Stop button of a thread's session (shown only while it is `processing`;
   * throws otherwise): Slack stops the app's streams in the thread and resolves with the
   * `agent_session_stopped` event naming them. The session stays `processing`: the app moves it.
   */
  pressStop(channel: string, threadTs: string, user: string): FakeStopEvent;
  /** Accepted suggested prompts, dropped ones included (`dropped`). */
  prompts: FakeSlackPrompts[];
  /** Accepted ephemeral messages. */
  ephemerals: FakeSlackEphemeral[];
  /** Modals opened. */
  views: FakeSlackView[];
  /**
   * A `trigger_id` as Slack puts in an interaction payload, issued at `issuedAt` (epoch ms, now by
   * default): `views.open` takes it once, within 3 s of that (`expired_trigger_id` after,
   * `exchanged_trigger_id` the second time, `invalid_trigger_id` for one Slack never issued).
   */
  mintTrigger(options?: { issuedAt?: number }): string;
  /** Uploads begun with files.getUploadURLExternal, by file id (fake-slack-uploads.ts). */
  uploads: ReadonlyMap<string, FakeSlackUpload>;
  /** Files shared by files.completeUploadExternal, in order: each is a message in its thread. */
  fileShares: FakeSlackFileShare[];
  /** The workspace's file policy: uploads disabled, images only, a size limit, refused types. */
  setUploadPolicy(policy: FakeUploadPolicy): void;
  /** Resolves with the shared files once there are at least `count`. */
  waitForFileShares(count: number, timeoutMs?: number): Promise<FakeSlackFileShare[]>;
  /** Forgets posts, streams, statuses, updates, reactions, sessions, prompts, ephemerals, views, triggers, requests and pending failures. */
  reset(): void;
  close(): Promise<void>;
};

// Not shaped like a Slack token: the logger masks xox… tokens, which would hide a leak in tests.
export const FAKE_BOT_TOKEN = 'fake-slack-bot-token-for-tests';
export const FAKE_BOT_USER_ID = 'U0FAKEBOT';
const FAKE_BOT_ID = 'B0FAKEBOT';
const FAKE_TEAM_ID = 'T0FAKE';
/** Slack's limit on the markdown of one stream call, and on a message's `text`. */
const STREAM_MARKDOWN_LIMIT = 12_000;
const MESSAGE_TEXT_LIMIT = 40_000;
/** A thread's status clears after this long without a message. */
const STATUS_LIFETIME_MS = 2 * 60 * 1000;
/** A `trigger_id` opens a modal for this long after Slack issued it. */
const TRIGGER_LIFETIME_MS = 3000;
/** Slack's limits on a session title, and on suggested prompts. */
const SESSION_TITLE_LIMIT = 200;
const MAX_PROMPTS = 4;

type Answer = { status: number; body: Record<string, unknown>; headers?: Record<string, string> };

export async function startFakeSlackApi(options: { botToken?: string } = {}): Promise<FakeSlackApi> {
  let token = options.botToken ?? FAKE_BOT_TOKEN;
  /** Tokens rotated away, and what Slack answers each of them. */
  const retired = new Map<string, string>();
  const posts: FakeSlackPost[] = [];
  const people: FakeSlackMessage[] = [];
  const files = new Map<string, { file: FakeSlackFile; bytes: Buffer }>();
  const fileFailures = new Map<string, FakeFileFailure & { times: number }>();
  const downloads: Array<{ id: string; authorized: boolean }> = [];
  const stalls = new Set<NodeJS.Timeout>();
  let fileCounter = 0;
  const reactions: FakeSlackReaction[] = [];
  const requests: FakeSlackRequest[] = [];
  const failures = new Map<string, Array<Required<Pick<FakeSlackFailure, 'times'>> & FakeSlackFailure>>();
  /** Reactions currently on messages, so a repeat add or a stray remove errors as on Slack. */
  const present = new Set<string>();
  const waiters = new Set<{ count: number; resolve: (posts: FakeSlackPost[]) => void; timer: NodeJS.Timeout }>();
  const statuses: FakeSlackStatus[] = [];
  /** Each thread's status now, by `channel/thread_ts`, with when it was set. */
  const currentStatus = new Map<string, { status: string; at: number }>();
  const streams: FakeSlackStream[] = [];
  const updates: FakeSlackUpdate[] = [];
  /** The text of posts edited with chat.update, by ts. */
  const edited = new Map<string, string>();
  const streamWaiters = new Set<{ check: () => boolean; resolve: () => void; timer: NodeJS.Timeout }>();
  const sessions: FakeSlackSession[] = [];
  const prompts: FakeSlackPrompts[] = [];
  const ephemerals: FakeSlackEphemeral[] = [];
  const views: FakeSlackView[] = [];
  /** Triggers Slack issued: when, and whether a modal took it already. */
  const triggers = new Map<string, { issuedAt: number; used: boolean }>();
  /** Blocks of bot messages as they show now (posts, stopped streams, updates), by ts. */
  const blocksByTs = new Map<string, FakeSlackBlock[]>();
  let idCounter = 0;
  const tsSeconds = Math.floor(Date.now() / 1000);
  let tsCounter = 0;

  const nextTs = () => `${tsSeconds}.${String((tsCounter += 1)).padStart(6, '0')}`;

  const notifyWaiters = () => {
    for (const waiter of waiters) {
      if (posts.length >= waiter.count) {
        clearTimeout(waiter.timer);
        waiters.delete(waiter);
        waiter.resolve(posts.slice());
      }
    }
  };

  const notifyStreamWaiters = () => {
    for (const waiter of streamWaiters) {
      if (waiter.check()) {
        clearTimeout(waiter.timer);
        streamWaiters.delete(waiter);
        waiter.resolve();
      }
    }
  };

  /** The bot wrote in the thread: Slack clears the thread's status. */
  const botWroteIn = (channel: string, threadTs: string | undefined) => {
    if (threadTs) currentStatus.delete(`${channel}/${threadTs}`);
  };

  const findStream = (ts: string) => streams.find((stream) => stream.ts === ts);
  let origin = '';
  const uploads = createFakeUploads({ origin: () => origin, nextTs, botWroteIn });

  const conditional: Array<{ method: string; match: (body: Record<string, unknown>) => boolean; failure: Required<Pick<FakeSlackFailure, 'times'>> & FakeSlackFailure }> = [];
  const injected: Record<string, number> = {};

  const takeConditionalFailure = (method: string, body: Record<string, unknown>): FakeSlackFailure | undefined => {
    const index = conditional.findIndex((rule) => rule.method === method && rule.match(body));
    const rule = conditional[index];
    if (!rule) return undefined;
    rule.failure.times -= 1;
    if (rule.failure.times <= 0) conditional.splice(index, 1);
    return rule.failure;
  };

  const countInjected = (failure: FakeSlackFailure): void => {
    const answered = failure.retryAfterSeconds !== undefined ? String(failure.status ?? 429) : failure.status !== undefined && failure.status !== 200 ? `http_${failure.status}` : 'api_error';
    const kind = failure.stallMs !== undefined ? 'stall' : failure.afterEffect ? `${answered} after effect` : answered;
    injected[kind] = (injected[kind] ?? 0) + 1;
  };

  const takeFailure = (method: string): FakeSlackFailure | undefined => {
    const queue = failures.get(method);
    const failure = queue?.[0];
    if (!queue || !failure) return undefined;
    failure.times -= 1;
    if (failure.times <= 0) queue.shift();
    return failure;
  };

  const authorized = (headers: IncomingHttpHeaders, body: Record<string, unknown>, isForm: boolean): string | undefined => {
    const header = headers.authorization;
    const presented = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : isForm && typeof body.token === 'string' ? body.token : undefined;
    if (presented === undefined) return 'not_authed';
    if (presented === token) return undefined;
    return retired.get(presented) ?? 'invalid_auth';
  };

  // Message metadata by ts, as `conversations.replies` returns it with include_all_metadata.
  const metadataByTs = new Map<string, unknown>();

  const handlers: Record<string, (body: Record<string, unknown>) => Answer> = {
    ...uploads.handlers,
    'auth.test': () => ok({ url: 'https://fake-workspace.slack.com/', team: 'Fake Workspace', user: 'fake-bot', team_id: FAKE_TEAM_ID, user_id: FAKE_BOT_USER_ID, bot_id: FAKE_BOT_ID, is_enterprise_install: false }),
    'chat.postMessage': (body) => {
      const channel = stringArg(body.channel);
      if (!channel) return apiError('channel_not_found');
      const text = stringArg(body.text);
      if (!text && body.blocks === undefined && body.attachments === undefined) return apiError('no_text');
      const blocks = blocksArg(body.blocks);
      if (blocks === INVALID) return apiError('invalid_blocks');
      const threadTs = stringArg(body.thread_ts);
      const ts = nextTs();
      posts.push({ channel, ...(threadTs ? { thread_ts: threadTs } : {}), text: text ?? '', ts, ...(blocks ? { blocks } : {}) });
      if (blocks) blocksByTs.set(ts, blocks);
      storeMetadata(ts, body.metadata);
      botWroteIn(channel, threadTs);
      notifyWaiters();
      return ok({
        channel,
        ts,
        message: { type: 'message', user: FAKE_BOT_USER_ID, bot_id: FAKE_BOT_ID, team: FAKE_TEAM_ID, text: text ?? '', ts, ...(threadTs ? { thread_ts: threadTs } : {}) },
      });
    },
    'conversations.replies': (body) => {
      const channel = stringArg(body.channel);
      const ts = stringArg(body.ts);
      if (!channel) return apiError('channel_not_found');
      if (!ts) return apiError('thread_not_found');
      const withMetadata = body.include_all_metadata === true || body.include_all_metadata === 'true';
      const inThread = (messageTs: string, threadTs: string | undefined) => messageTs === ts || threadTs === ts;
      const botMessages: Array<{ channel: string; ts: string; thread_ts?: string }> = [...posts, ...streams];
      const fromBot = botMessages
        .filter((post) => post.channel === channel && (post.thread_ts === ts || post.ts === ts))
        .map((post) => ({
          type: 'message',
          user: FAKE_BOT_USER_ID,
          bot_id: FAKE_BOT_ID,
          text: botText(post.ts) ?? '',
          ts: post.ts,
          thread_ts: post.thread_ts ?? post.ts,
          ...(withMetadata && metadataByTs.has(post.ts) ? { metadata: metadataByTs.get(post.ts) } : {}),
        }));
      const fromPeople = people
        .filter((message) => message.channel === channel && inThread(message.ts, message.thread_ts))
        .map((message) => ({ type: 'message', user: message.user, text: message.text, ts: message.ts, thread_ts: message.thread_ts ?? message.ts, ...(message.subtype ? { subtype: message.subtype } : {}), ...(message.files ? { files: message.files } : {}), ...(message.bot_id ? { bot_id: message.bot_id } : {}), ...(withMetadata && message.metadata ? { metadata: message.metadata } : {}) }));
      const thread = [...fromPeople, ...fromBot].sort((a, b) => compareTs(a.ts, b.ts));
      if (thread.length === 0) return apiError('thread_not_found');
      // Slack's bounds: `latest` (exclusive unless `inclusive`) and `oldest`; the parent always first.
      const latest = stringArg(body.latest);
      const inclusive = body.inclusive === true || body.inclusive === 'true' || body.inclusive === '1';
      const bounded = thread.filter((message) => !latest || compareTs(message.ts, latest) < 0 || (inclusive && message.ts === latest));
      const limit = Math.max(1, Math.min(1000, Number(body.limit ?? 1000) || 1000));
      const offset = typeof body.cursor === 'string' && body.cursor ? Number(Buffer.from(body.cursor, 'base64').toString('utf8').replace('offset:', '')) : 0;
      const page = bounded.slice(offset, offset + limit);
      const more = offset + limit < bounded.length;
      return ok({ messages: page, has_more: more, ...(more ? { response_metadata: { next_cursor: Buffer.from(`offset:${offset + limit}`).toString('base64') } } : {}) });
    },
    'reactions.add': (body) => react('add', body),
    'reactions.remove': (body) => react('remove', body),
    'assistant.threads.setStatus': (body) => {
      const channel = stringArg(body.channel_id);
      const threadTs = stringArg(body.thread_ts);
      if (!channel) return apiError('channel_not_found');
      if (!threadTs) return apiError('invalid_thread_ts');
      if (typeof body.status !== 'string') return apiError('invalid_arguments');
      const loading = jsonArg(body.loading_messages);
      if (loading === INVALID || (loading !== undefined && (!Array.isArray(loading) || loading.length > 10 || loading.some((m) => typeof m !== 'string')))) return apiError('invalid_arguments');
      const loadingMessages = loading as string[] | undefined;
      statuses.push({ channel, thread_ts: threadTs, status: body.status, ...(loadingMessages ? { loading_messages: loadingMessages } : {}) });
      if (body.status === '') currentStatus.delete(`${channel}/${threadTs}`);
      else currentStatus.set(`${channel}/${threadTs}`, { status: body.status, at: Date.now() });
      return ok({});
    },
    'chat.startStream': (body) => {
      const channel = stringArg(body.channel);
      const threadTs = stringArg(body.thread_ts);
      if (!channel) return apiError('channel_not_found');
      if (!threadTs) return apiError('invalid_arguments');
      const recipientUser = stringArg(body.recipient_user_id);
      const recipientTeam = stringArg(body.recipient_team_id);
      // Outside a DM Slack must know whom the stream is for.
      if (!channel.startsWith('D')) {
        if (!recipientTeam) return apiError('missing_recipient_team_id');
        if (!recipientUser) return apiError('missing_recipient_user_id');
      }
      const content = streamContent(body);
      if ('error' in content) return content.error;
      const displayMode = body.task_display_mode === undefined ? 'timeline' : body.task_display_mode;
      if (displayMode !== 'timeline' && displayMode !== 'plan') return apiError('invalid_arguments');
      const ts = nextTs();
      streams.push({
        channel,
        thread_ts: threadTs,
        ts,
        state: 'streaming',
        ...(recipientUser ? { recipient_user_id: recipientUser } : {}),
        ...(recipientTeam ? { recipient_team_id: recipientTeam } : {}),
        text: content.text,
        appends: [],
        tasks: content.tasks,
        cards: [],
        task_display_mode: displayMode,
      });
      drawCards(streams.at(-1)!, content);
      botWroteIn(channel, threadTs);
      notifyStreamWaiters();
      return ok({ channel, ts });
    },
    'chat.appendStream': (body) => {
      const found = streamFor(body);
      if ('error' in found) return found.error;
      const content = streamContent(body);
      if ('error' in content) return content.error;
      if (!content.given) return apiError('invalid_arguments');
      found.stream.text += content.text;
      found.stream.appends.push(content.text);
      found.stream.tasks.push(...content.tasks);
      drawCards(found.stream, content);
      notifyStreamWaiters();
      return ok({ channel: found.stream.channel, ts: found.stream.ts });
    },
    'chat.stopStream': (body) => {
      const found = streamFor(body);
      if ('error' in found) return found.error;
      const content = streamContent(body);
      if ('error' in content) return content.error;
      const metadata = metadataArg(body.metadata);
      if (metadata === INVALID) return apiError('invalid_metadata_format');
      const blocks = blocksArg(body.blocks);
      if (blocks === INVALID) return apiError('invalid_blocks');
      const sessionStatus = body.session_status === undefined || body.session_status === '' ? undefined : sessionStatusArg(body.session_status);
      if (sessionStatus === INVALID) return apiError('invalid_arguments');
      found.stream.text += content.text;
      found.stream.tasks.push(...content.tasks);
      drawCards(found.stream, content);
      found.stream.state = 'stopped';
      if (blocks) {
        found.stream.blocks = blocks;
        blocksByTs.set(found.stream.ts, blocks);
      }
      // The thread's session leaves `processing` with the stream, when the app says so.
      if (sessionStatus) setSession(found.stream.channel, found.stream.thread_ts, sessionStatus);
      storeMetadata(found.stream.ts, body.metadata);
      notifyStreamWaiters();
      return ok({ channel: found.stream.channel, ts: found.stream.ts, message: { type: 'message', user: FAKE_BOT_USER_ID, bot_id: FAKE_BOT_ID, text: found.stream.text, ts: found.stream.ts, thread_ts: found.stream.thread_ts } });
    },
    'chat.update': (body) => {
      const channel = stringArg(body.channel);
      const ts = stringArg(body.ts);
      if (!channel) return apiError('channel_not_found');
      if (!ts) return apiError('message_not_found');
      const text = stringArg(body.text);
      if (!text && body.blocks === undefined && body.attachments === undefined) return apiError('no_text');
      if (text && text.length > MESSAGE_TEXT_LIMIT) return apiError('msg_too_long');
      const post = posts.find((candidate) => candidate.channel === channel && candidate.ts === ts);
      const stream = streams.find((candidate) => candidate.channel === channel && candidate.ts === ts);
      if (!post && !stream) return apiError(people.some((message) => message.channel === channel && message.ts === ts) ? 'cant_update_message' : 'message_not_found');
      if (metadataArg(body.metadata) === INVALID) return apiError('invalid_metadata_format');
      const blocks = blocksArg(body.blocks);
      if (blocks === INVALID) return apiError('invalid_blocks');
      if (stream) stream.text = text ?? '';
      else edited.set(ts, text ?? '');
      // As on Slack, an update without `blocks` keeps the message's; an empty array removes them.
      if (blocks?.length) blocksByTs.set(ts, blocks);
      else if (blocks) blocksByTs.delete(ts);
      // Without `metadata` Slack keeps the message's; an empty object removes it.
      if (body.metadata !== undefined) {
        const metadata = metadataArg(body.metadata);
        if (metadata && Object.keys(metadata).length > 0) metadataByTs.set(ts, metadata);
        else metadataByTs.delete(ts);
      }
      updates.push({ channel, ts, text: text ?? '', ...(blocks ? { blocks } : {}) });
      notifyStreamWaiters();
      const threadTs = post?.thread_ts ?? stream?.thread_ts;
      return ok({ channel, ts, text: text ?? '', message: { type: 'message', user: FAKE_BOT_USER_ID, bot_id: FAKE_BOT_ID, text: text ?? '', ...(threadTs ? { thread_ts: threadTs } : {}) } });
    },
    'agents.sessions.setStatus': (body) => {
      const channel = stringArg(body.channel_id);
      const threadTs = stringArg(body.thread_ts);
      if (!channel) return apiError('channel_not_found');
      // Thread sessions (channels and DMs) need the thread's root; this app has no session channels.
      if (!threadTs) return apiError('invalid_arguments');
      const status = sessionStatusArg(body.status);
      if (status === INVALID) return apiError('invalid_arguments');
      const title = stringArg(body.title);
      if (title && title.length > SESSION_TITLE_LIMIT) return apiError('invalid_arguments');
      const initiator = stringArg(body.initiator_user_id);
      const session = setSession(channel, threadTs, status, { ...(title ? { title } : {}), ...(initiator ? { initiator_user_id: initiator } : {}) });
      return ok({ status: session.status, ...(session.title ? { title: session.title } : {}) });
    },
    'agents.sessions.rename': (body) => {
      const channel = stringArg(body.channel_id);
      const threadTs = stringArg(body.thread_ts);
      const title = stringArg(body.title);
      if (!channel) return apiError('channel_not_found');
      if (!threadTs || !title || title.length > SESSION_TITLE_LIMIT) return apiError('invalid_arguments');
      const session = findSession(channel, threadTs);
      // The fake's name for renaming a session never created.
      if (!session) return apiError('session_not_found');
      session.title = title;
      return ok({ title });
    },
    'assistant.threads.setSuggestedPrompts': (body) => {
      const channel = stringArg(body.channel_id);
      if (!channel) return apiError('channel_not_found');
      const list = jsonArg(body.prompts);
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_PROMPTS) return apiError('invalid_arguments');
      const given: Array<{ title: string; message: string }> = [];
      for (const item of list as unknown[]) {
        const prompt = item as { title?: unknown; message?: unknown } | null;
        if (typeof prompt?.title !== 'string' || !prompt.title || typeof prompt.message !== 'string' || !prompt.message) return apiError('invalid_arguments');
        given.push({ title: prompt.title, message: prompt.message });
      }
      const threadTs = stringArg(body.thread_ts);
      const title = stringArg(body.title);
      // An agent app's prompts belong to its DM, not a thread: with a thread_ts Slack answers ok and shows nothing.
      prompts.push({ channel, ...(threadTs ? { thread_ts: threadTs } : {}), ...(title ? { title } : {}), prompts: given, dropped: threadTs !== undefined });
      return ok({});
    },
    'chat.postEphemeral': (body) => {
      const channel = stringArg(body.channel);
      const user = stringArg(body.user);
      if (!channel) return apiError('channel_not_found');
      if (!user) return apiError('user_not_found');
      const text = stringArg(body.text);
      const blocks = blocksArg(body.blocks);
      if (blocks === INVALID) return apiError('invalid_blocks');
      if (!text && !blocks && body.attachments === undefined) return apiError('no_text');
      const threadTs = stringArg(body.thread_ts);
      const messageTs = nextTs();
      ephemerals.push({ channel, user, text: text ?? '', ...(threadTs ? { thread_ts: threadTs } : {}), ...(blocks ? { blocks } : {}), message_ts: messageTs });
      return ok({ message_ts: messageTs });
    },
    'views.open': (body) => {
      const triggerId = stringArg(body.trigger_id);
      const view = jsonArg(body.view);
      if (typeof view !== 'object' || view === null || Array.isArray(view) || typeof (view as { type?: unknown }).type !== 'string') return apiError('invalid_arguments');
      const trigger = triggerId ? triggers.get(triggerId) : undefined;
      if (!triggerId || !trigger) return apiError('invalid_trigger_id');
      if (trigger.used) return apiError('exchanged_trigger_id');
      if (Date.now() - trigger.issuedAt > TRIGGER_LIFETIME_MS) return apiError('expired_trigger_id');
      trigger.used = true;
      const opened: FakeSlackView = { id: `V0FAKE${String((idCounter += 1)).padStart(4, '0')}`, trigger_id: triggerId, view: view as Record<string, unknown> };
      views.push(opened);
      return ok({ view: { id: opened.id, ...opened.view } });
    },
  };

  const findSession = (channel: string, threadTs: string) => sessions.find((session) => session.channel === channel && session.thread_ts === threadTs);

  /** Sets a thread's session status, creating the session (with its title and initiator) if needed. */
  function setSession(channel: string, threadTs: string, status: FakeSlackSessionStatus, creation: { title?: string; initiator_user_id?: string } = {}): FakeSlackSession {
    const existing = findSession(channel, threadTs);
    if (existing) {
      existing.status = status;
      existing.history.push(status);
      return existing;
    }
    const created: FakeSlackSession = { channel, thread_ts: threadTs, status, history: [status], ...creation };
    sessions.push(created);
    return created;
  }

  /** The message's metadata as chat.postMessage / chat.stopStream / chat.update send it (a JSON string in a form). */
  function storeMetadata(ts: string, raw: unknown): void {
    const metadata = metadataArg(raw);
    if (metadata !== undefined && metadata !== INVALID) metadataByTs.set(ts, metadata);
  }

  /** The text a bot message shows now. */
  function botText(ts: string): string | undefined {
    const stream = findStream(ts);
    if (stream) return stream.text;
    return edited.get(ts) ?? posts.find((post) => post.ts === ts)?.text;
  }

  /** The stream a chat.appendStream / chat.stopStream call names, if it still streams. */
  function streamFor(body: Record<string, unknown>): { stream: FakeSlackStream } | { error: Answer } {
    const channel = stringArg(body.channel);
    const ts = stringArg(body.ts);
    if (!channel) return { error: apiError('channel_not_found') };
    if (!ts) return { error: apiError('invalid_arguments') };
    const stream = streams.find((candidate) => candidate.channel === channel && candidate.ts === ts);
    if (!stream) return { error: apiError(posts.some((post) => post.channel === channel && post.ts === ts) ? 'message_not_in_streaming_state' : 'message_not_found') };
    if (stream.state !== 'streaming') return { error: apiError('message_not_in_streaming_state') };
    return { stream };
  }

  /** The cards a stream call's chunks draw or change, and the plan title it sets. */
  function drawCards(stream: FakeSlackStream, content: { tasks: Array<Record<string, unknown>>; planTitle?: string }): void {
    for (const task of content.tasks) {
      const { type: _type, ...card } = task as FakeSlackCard & { type: string };
      const at = stream.cards.findIndex((known) => known.id === card.id);
      if (at < 0) stream.cards.push(card);
      else stream.cards[at] = card;
    }
    if (content.planTitle !== undefined) stream.plan_title = content.planTitle;
  }

  /**
   * A stream call's `markdown_text` and `chunks` (markdown_text chunks add text; task_update chunks
   * are recorded and drawn; plan_update sets the plan's title). A chunk Slack would not take —
   * no type, a task without its id, title or a known status, details or a source that is not one,
   * a plan without a title — is refused with `invalid_chunks`, as Slack refuses it.
   */
  function streamContent(body: Record<string, unknown>): { text: string; tasks: Array<Record<string, unknown>>; planTitle?: string; given: boolean } | { error: Answer } {
    const markdown = typeof body.markdown_text === 'string' ? body.markdown_text : undefined;
    const chunks = jsonArg(body.chunks);
    if (chunks === INVALID || (chunks !== undefined && !Array.isArray(chunks))) return { error: apiError('invalid_chunks') };
    let text = markdown ?? '';
    if (markdown !== undefined && markdown.length > STREAM_MARKDOWN_LIMIT) return { error: apiError('msg_too_long') };
    const tasks: Array<Record<string, unknown>> = [];
    let planTitle: string | undefined;
    for (const chunk of (chunks ?? []) as unknown[]) {
      const item = chunk as Record<string, unknown> | null;
      if (typeof item !== 'object' || item === null || typeof item.type !== 'string') return { error: apiError('invalid_chunks') };
      if (item.type === 'markdown_text') {
        if (typeof item.text !== 'string') return { error: apiError('invalid_chunks') };
        if (item.text.length > STREAM_MARKDOWN_LIMIT) return { error: apiError('msg_too_long') };
        text += item.text;
      } else if (item.type === 'task_update') {
        if (!isTaskChunk(item)) return { error: apiError('invalid_chunks') };
        tasks.push(item);
      } else if (item.type === 'plan_update') {
        if (typeof item.title !== 'string' || !item.title) return { error: apiError('invalid_chunks') };
        planTitle = item.title;
      } else if (item.type !== 'blocks') return { error: apiError('invalid_chunks') };
    }
    if (text.length > STREAM_MARKDOWN_LIMIT) return { error: apiError('msg_too_long') };
    return { text, tasks, ...(planTitle !== undefined ? { planTitle } : {}), given: markdown !== undefined || (chunks !== undefined && (chunks as unknown[]).length > 0) };
  }

  function react(op: 'add' | 'remove', body: Record<string, unknown>): Answer {
    const channel = stringArg(body.channel);
    const timestamp = stringArg(body.timestamp);
    const name = stringArg(body.name);
    if (!channel) return apiError('channel_not_found');
    if (!timestamp) return apiError('bad_timestamp');
    if (!name || name.includes(':')) return apiError('invalid_name');
    const key = `${channel}/${timestamp}/${name}`;
    if (op === 'add' && present.has(key)) return apiError('already_reacted');
    if (op === 'remove' && !present.has(key)) return apiError('no_reaction');
    if (op === 'add') present.add(key);
    else present.delete(key);
    reactions.push({ op, channel, timestamp, name });
    return ok({});
  }

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      send(response, { status: 500, body: { ok: false, error: 'fake_slack_api_error', detail: String(error) } });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const fileMatch = /^\/files-pri\/[\w-]+-(F\w+)\/download\//.exec(url.pathname);
    if (fileMatch) return serveFile(fileMatch[1]!, request, response);
    const uploadMatch = /^\/upload\/v1\/(F\w+)$/.exec(url.pathname);
    if (uploadMatch) return receiveUpload(uploadMatch[1]!, request, response);
    const match = /^\/api\/([\w.]+)$/.exec(url.pathname);
    if (!match) return send(response, { status: 404, body: { ok: false, error: 'unknown_path' } });
    const method = match[1]!;
    const raw = await readBody(request);
    const at = fakeSlackNow();
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const isForm = contentType === '' || contentType === 'application/x-www-form-urlencoded';

    let body: Record<string, unknown> = Object.fromEntries(url.searchParams);
    if (contentType === 'application/json') {
      try {
        const parsed: unknown = raw ? JSON.parse(raw) : {};
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        body = { ...body, ...(parsed as Record<string, unknown>) };
      } catch {
        const record: FakeSlackRequest = { method, headers: request.headers, body: { raw }, at };
        requests.push(record);
        return answer(response, record, apiError('invalid_json'));
      }
    } else if (isForm) {
      body = { ...body, ...Object.fromEntries(new URLSearchParams(raw)) };
    } else {
      const record: FakeSlackRequest = { method, headers: request.headers, body: {}, at };
      requests.push(record);
      return answer(response, record, apiError('invalid_form_data'));
    }
    // The token may arrive in a form field; it is checked, never recorded.
    const { token: _bodyToken, ...recorded } = body;
    const record: FakeSlackRequest = { method, headers: request.headers, body: recorded, at };
    requests.push(record);

    const authError = authorized(request.headers, body, isForm);
    if (authError) return answer(response, record, apiError(authError));

    const failure = takeConditionalFailure(method, recorded) ?? takeFailure(method);
    if (failure) countInjected(failure);
    const handler = handlers[method];
    const apply = () => (handler ? handler(recorded) : apiError('unknown_method'));
    if (failure?.afterEffect) {
      // The call does what it does, its answer is lost, and the error goes back instead.
      const applied = apply();
      if (failure.stallMs === undefined) return answer(response, record, failureAnswer(failure), applied);
      await new Promise((resolve) => setTimeout(resolve, failure.stallMs));
      return answer(response, record, applied);
    }
    if (failure?.stallMs !== undefined) await new Promise((resolve) => setTimeout(resolve, failure.stallMs));
    else if (failure) return answer(response, record, failureAnswer(failure));

    answer(response, record, apply());
  }

  /**
   * Sends the answer to a recorded request, noting on the record how and when it was answered —
   * and, for a call that took effect before an injected error was answered, what it did (`applied`).
   */
  function answer(response: ServerResponse, record: FakeSlackRequest, reply: Answer, applied?: Answer): void {
    const error = reply.body.error;
    record.answer = {
      at: fakeSlackNow(),
      status: reply.status,
      ok: reply.body.ok === true,
      ...(typeof error === 'string' ? { error } : {}),
      ...(applied ? { applied: { ok: applied.body.ok === true, ...(typeof applied.body.error === 'string' ? { error: applied.body.error } : {}) } } : {}),
    };
    send(response, reply);
  }

  /** Step 2 of an upload: the bytes POSTed to its upload_url, recorded as `upload_url` and faulted like a method. */
  async function receiveUpload(fileId: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const record: FakeSlackRequest = { method: UPLOAD_URL_METHOD, headers: request.headers, body: { file_id: fileId, bytes: raw.length }, at: fakeSlackNow() };
    requests.push(record);
    const failure = takeConditionalFailure(UPLOAD_URL_METHOD, record.body) ?? takeFailure(UPLOAD_URL_METHOD);
    if (failure) countInjected(failure);
    if (failure && !failure.afterEffect && failure.stallMs === undefined) return answer(response, record, failureAnswer(failure));
    if (failure?.stallMs !== undefined && !failure.afterEffect) await new Promise((resolve) => setTimeout(resolve, failure.stallMs));
    const received = await uploads.receive(fileId, request, raw);
    const applied: Answer = { status: received.status, body: { ok: received.status === 200, ...(received.status === 200 ? {} : { error: received.text }) } };
    if (failure?.afterEffect && failure.stallMs === undefined) return answer(response, record, failureAnswer(failure), applied);
    if (failure?.afterEffect) await new Promise((resolve) => setTimeout(resolve, failure.stallMs));
    record.answer = { at: fakeSlackNow(), status: received.status, ok: received.status === 200 };
    response.writeHead(received.status, { 'content-type': 'text/plain' }).end(received.text);
  }

  /** Files are served like Slack serves them: with the bot token the bytes, without it the sign-in page (HTTP 200). */
  async function serveFile(id: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const authorized = request.headers.authorization === `Bearer ${token}`;
    downloads.push({ id, authorized });
    const failure = fileFailures.get(id);
    if (failure) {
      failure.times -= 1;
      if (failure.times <= 0) fileFailures.delete(id);
      if (failure.stallMs !== undefined) {
        // A stall ends early when the fake closes, so it never outlives a test.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => (stalls.delete(timer), resolve()), failure.stallMs);
          stalls.add(timer);
        });
      }
      if (failure.status !== undefined) {
        response.writeHead(failure.status, { 'content-type': 'text/plain' }).end(`HTTP ${failure.status}`);
        return;
      }
    }
    const hosted = files.get(id);
    if (!authorized) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(LOGIN_PAGE);
      return;
    }
    if (!hosted) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('file not found');
      return;
    }
    response.writeHead(200, { 'content-type': hosted.file.mimetype, 'content-length': hosted.bytes.length }).end(hosted.bytes);
  }

  origin = await listenOnLoopback(server);
  const apiUrl = `${origin}/api/`;

  return {
    apiUrl,
    get token() {
      return token;
    },
    rotateToken(next, refusedWith = 'invalid_auth') {
      retired.set(token, refusedWith);
      retired.delete(next);
      token = next;
    },
    botUserId: FAKE_BOT_USER_ID,
    posts,
    reactions,
    requests,
    downloads,
    statuses,
    statusOf(channel, threadTs) {
      const current = currentStatus.get(`${channel}/${threadTs}`);
      return current && Date.now() - current.at < STATUS_LIFETIME_MS ? current.status : undefined;
    },
    streams,
    updates,
    sessions,
    sessionOf: (channel, threadTs) => findSession(channel, threadTs),
    pressStop(channel, threadTs, user) {
      const session = findSession(channel, threadTs);
      if (session?.status !== 'processing') throw new Error(`fake Slack API: no Stop button in ${channel}/${threadTs}: its session is ${session ? session.status : 'not there'}`);
      const stopped: string[] = [];
      for (const stream of streams) {
        if (stream.channel !== channel || stream.thread_ts !== threadTs || stream.state !== 'streaming') continue;
        stream.state = 'stopped';
        stopped.push(stream.ts);
      }
      notifyStreamWaiters();
      return { type: 'agent_session_stopped', channel, thread_ts: threadTs, user, event_ts: nextTs(), streaming_message_ts: stopped };
    },
    prompts,
    ephemerals,
    views,
    mintTrigger({ issuedAt = Date.now() } = {}) {
      const id = `${tsSeconds}.${String((idCounter += 1)).padStart(4, '0')}.fake-trigger`;
      triggers.set(id, { issuedAt, used: false });
      return id;
    },
    messageBlocks(ts) {
      return blocksByTs.get(ts);
    },
    messageText(ts) {
      return botText(ts) ?? people.find((message) => message.ts === ts)?.text;
    },
    expireStream(ts) {
      const stream = findStream(ts);
      if (!stream) throw new Error(`fake Slack API: no stream ${ts}`);
      if (stream.state === 'streaming') stream.state = 'expired';
    },
    waitForStreams(count, { stopped = false, timeoutMs = 5000 } = {}) {
      const matching = () => streams.filter((stream) => !stopped || stream.state === 'stopped');
      if (matching().length >= count) return Promise.resolve(matching());
      return new Promise((resolve, reject) => {
        const waiter = {
          check: () => matching().length >= count,
          resolve: () => resolve(matching()),
          timer: setTimeout(() => {
            streamWaiters.delete(waiter);
            reject(new Error(`fake Slack API: expected ${count} ${stopped ? 'stopped ' : ''}stream(s) within ${timeoutMs} ms, got ${matching().length}: ${JSON.stringify(streams.map((s) => [s.state, s.text.slice(0, 60)]))}`));
          }, timeoutMs),
        };
        streamWaiters.add(waiter);
      });
    },
    addMessage(message) {
      const ts = message.ts ?? nextTs();
      people.push({ ...message, ts });
      return ts;
    },
    deleteMessage(channel, ts) {
      const index = people.findIndex((message) => message.channel === channel && message.ts === ts);
      if (index < 0) return;
      const message = people[index]!;
      const isParent = people.some((other) => other.thread_ts === ts && other.ts !== ts) || posts.some((post) => post.thread_ts === ts) || streams.some((stream) => stream.thread_ts === ts);
      if (isParent) people[index] = { channel, ts, user: 'USLACKBOT', text: 'This message was deleted.', subtype: 'tombstone', ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) };
      else people.splice(index, 1);
    },
    addFile(file) {
      fileCounter += 1;
      const id = `F0FAKE${String(fileCounter).padStart(4, '0')}`;
      const filetype = file.filetype ?? (/\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase() ?? 'binary');
      const url = `${origin}/files-pri/${FAKE_TEAM_ID}-${id}/download/${encodeURIComponent(file.name)}`;
      const shared: FakeSlackFile = { id, name: file.name, title: file.name, mimetype: file.mimetype, filetype, size: file.size ?? file.bytes.length, url_private: url, url_private_download: url };
      files.set(id, { file: shared, bytes: file.bytes });
      return shared;
    },
    uploads: uploads.uploads,
    fileShares: uploads.shares,
    setUploadPolicy: (policy) => uploads.setPolicy(policy),
    waitForFileShares: (count, timeoutMs) => uploads.waitForShares(count, timeoutMs),
    failFile(id, failure) {
      fileFailures.set(id, { ...failure, times: failure.times ?? 1 });
    },
    failNext(method, failure = {}) {
      const queue = failures.get(method) ?? [];
      queue.push({ ...failure, times: failure.times ?? 1 });
      failures.set(method, queue);
    },
    failWhen(method, match, failure = {}) {
      conditional.push({ method, match, failure: { ...failure, times: failure.times ?? 1 } });
    },
    injected,
    waitForPosts(count, timeoutMs = 5000) {
      if (posts.length >= count) return Promise.resolve(posts.slice());
      return new Promise((resolve, reject) => {
        const waiter = {
          count,
          resolve,
          timer: setTimeout(() => {
            waiters.delete(waiter);
            reject(new Error(`fake Slack API: expected ${count} post(s) within ${timeoutMs} ms, got ${posts.length}: ${JSON.stringify(posts.map((p) => p.text.slice(0, 60)))}`));
          }, timeoutMs),
        };
        waiters.add(waiter);
      });
    },
    reset() {
      posts.length = 0;
      reactions.length = 0;
      requests.length = 0;
      failures.clear();
      conditional.length = 0;
      for (const kind of Object.keys(injected)) delete injected[kind];
      present.clear();
      metadataByTs.clear();
      statuses.length = 0;
      currentStatus.clear();
      streams.length = 0;
      updates.length = 0;
      edited.clear();
      sessions.length = 0;
      prompts.length = 0;
      ephemerals.length = 0;
      views.length = 0;
      triggers.clear();
      blocksByTs.clear();
      people.length = 0;
      files.clear();
      fileFailures.clear();
      downloads.length = 0;
      uploads.reset();
    },
    async close() {
      for (const waiter of waiters) clearTimeout(waiter.timer);
      waiters.clear();
      for (const waiter of streamWaiters) clearTimeout(waiter.timer);
      streamWaiters.clear();
      for (const timer of stalls) clearTimeout(timer);
      stalls.clear();
      uploads.close();
      server.closeAllConnections();
      await closeServer(server);
    },
  };
}

/** What Slack serves for a file URL fetched without a usable token: its sign-in page, with HTTP 200. */
const LOGIN_PAGE = '<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to your workspace</body></html>';

/** Slack timestamps compared as numbers ("seconds.micro"). */
function compareTs(a: string, b: string): number {
  const [as, am = '0'] = a.split('.');
  const [bs, bm = '0'] = b.split('.');
  return Number(as) - Number(bs) || Number(am.padEnd(6, '0')) - Number(bm.padEnd(6, '0'));
}

function ok(fields: Record<string, unknown>): Answer {
  return { status: 200, body: { ok: true, ...fields } };
}

/** Slack answers API errors with HTTP 200 and `ok: false`. */
function apiError(error: string): Answer {
  return { status: 200, body: { ok: false, error } };
}

function failureAnswer(failure: FakeSlackFailure): Answer {
  if (failure.retryAfterSeconds !== undefined) {
    return { status: failure.status ?? 429, body: { ok: false, error: failure.error ?? 'ratelimited' }, headers: { 'retry-after': String(failure.retryAfterSeconds) } };
  }
  return { status: failure.status ?? 200, body: { ok: false, error: failure.error ?? 'internal_error' } };
}

/** An argument that failed to parse. */
const INVALID = Symbol('invalid');

/** An object or array argument: JSON inside a form field, or as it came in a JSON body. */
function jsonArg(value: unknown): unknown {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return INVALID;
  }
}

/** `metadata` as an object; INVALID when it is not one. */
function metadataArg(value: unknown): Record<string, unknown> | undefined | typeof INVALID {
  const parsed = jsonArg(value);
  if (parsed === undefined || parsed === INVALID) return parsed;
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : INVALID;
}

/** `blocks` as an array of block objects; INVALID when it is not one. */
function blocksArg(value: unknown): FakeSlackBlock[] | undefined | typeof INVALID {
  const parsed = jsonArg(value);
  if (parsed === undefined || parsed === INVALID) return parsed;
  if (!Array.isArray(parsed) || parsed.some((block) => typeof block !== 'object' || block === null || typeof (block as { type?: unknown }).type !== 'string')) return INVALID;
  if ((parsed as FakeSlackBlock[]).some((block) => block.type === 'actions' && !validActions(block))) return INVALID;
  return parsed as FakeSlackBlock[];
}

/**
 * Slack's rules for an `actions` block's buttons (docs.slack.dev, Block Kit "Actions block" and
 * "Button element"): 1 to 25 elements; a button has plain_text `text` of at most 75 characters, an
 * `action_id` of at most 255 unique within the block, a `value` of at most 2000. Broken, the whole
 * message is `invalid_blocks`.
 */
function validActions(block: FakeSlackBlock): boolean {
  const elements = (block as { elements?: unknown }).elements;
  if (!Array.isArray(elements) || elements.length < 1 || elements.length > 25) return false;
  const ids = new Set<string>();
  for (const element of elements as Array<{ type?: unknown; text?: { type?: unknown; text?: unknown }; action_id?: unknown; value?: unknown }>) {
    if (element.type !== 'button') continue;
    const text = element.text?.text;
    if (element.text?.type !== 'plain_text' || typeof text !== 'string' || text.length < 1 || text.length > 75) return false;
    if (element.action_id !== undefined && (typeof element.action_id !== 'string' || element.action_id.length > 255 || ids.has(element.action_id))) return false;
    if (typeof element.action_id === 'string') ids.add(element.action_id);
    if (element.value !== undefined && (typeof element.value !== 'string' || element.value.length > 2000)) return false;
  }
  return true;
}

function sessionStatusArg(value: unknown): FakeSlackSessionStatus | typeof INVALID {
  return (AGENT_SESSION_STATUSES as readonly unknown[]).includes(value) ? (value as FakeSlackSessionStatus) : INVALID;
}

/** A `task_update` chunk as Slack takes it: an id, a title, a known status; details and output strings; sources `{type: 'url', url, text}`. */
function isTaskChunk(item: Record<string, unknown>): boolean {
  if (typeof item.id !== 'string' || !item.id || typeof item.title !== 'string' || !['pending', 'in_progress', 'complete', 'error'].includes(String(item.status))) return false;
  if ((item.details !== undefined && typeof item.details !== 'string') || (item.output !== undefined && typeof item.output !== 'string')) return false;
  if (item.sources === undefined) return true;
  return Array.isArray(item.sources) && item.sources.every((source: unknown) => typeof source === 'object' && source !== null && (source as Record<string, unknown>).type === 'url' && typeof (source as Record<string, unknown>).url === 'string' && typeof (source as Record<string, unknown>).text === 'string');
}

function stringArg(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function send(response: ServerResponse, answer: Answer): void {
  const payload = JSON.stringify(answer.body);
  response.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload), ...answer.headers });
  response.end(payload);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The verification zone's Slack settings for an app on this fake workspace: its signing secret, bot token and API URL. */
export function slackAppEnv(slack: Pick<FakeSlackApi, 'token' | 'apiUrl'>, signingSecret: string): Record<'SLACK_SIGNING_SECRET' | 'SLACK_BOT_TOKEN' | 'SLACK_API_URL', string> {
  return { SLACK_SIGNING_SECRET: signingSecret, SLACK_BOT_TOKEN: slack.token, SLACK_API_URL: slack.apiUrl };
}
