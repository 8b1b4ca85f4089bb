import { createServer } from 'node:http';
import { ConfigError } from '../../src/config/env';
import type { Log } from '../../src/observability/logger';
import type { SecretSource } from '../../src/secrets/secret-source';
import { REPLY_METADATA_TYPE, SlackApiError, WebApiSlackReplies, createSlackWebClient, slackApiUrl, slackRepliesFromSecret, toSlackApiError } from '../../src/slack/slack-replies';
import { startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { closeServer, listenOnLoopback } from '../support/http';

/** A log that remembers what it was given, for asserting where the SDK's own lines end up. */
function recordingLog() {
  const lines: Array<{ level: string; message: string; extra: unknown[] }> = [];
  const at = (level: string) => (message: string, ...extra: unknown[]) => {
    lines.push({ level, message, extra });
  };
  return { lines, info: at('info'), warn: at('warn'), error: at('error') } as { lines: typeof lines } & Pick<Log, 'info' | 'warn' | 'error'>;
}

describe('WebApiSlackReplies over the real WebClient', () => {
  let slack: FakeSlackApi;
  beforeEach(async () => {
    slack = await startFakeSlackApi();
  });
  afterEach(async () => {
    await slack.close();
  });

  const repliesFor = (options: { token?: string; retries?: number; timeoutMs?: number } = {}, log = recordingLog()) =>
    new WebApiSlackReplies(
      createSlackWebClient({ token: options.token ?? slack.token, apiUrl: slack.apiUrl, retries: options.retries ?? 2, log, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) }),
      { log },
    );

  it('posts in the thread without link previews, form-encoded with a bearer token, and returns the ts', async () => {
    // Act
    const { ts } = await repliesFor().post({ channel: 'C1', threadTs: '1700000000.000100', text: 'Hello *world* <https://example.com>' });

    // Assess
    expect(slack.posts).toEqual([{ channel: 'C1', thread_ts: '1700000000.000100', text: 'Hello *world* <https://example.com>', ts }]);
    const [request] = slack.requests;
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request?.headers.authorization).toBe(`Bearer ${slack.token}`);
    expect(request?.body).toMatchObject({ unfurl_links: 'false', unfurl_media: 'false', mrkdwn: 'true' });
  });

  it('passes `retries` to the client, which then repeats a call Slack answered with a 5xx itself (off by default: a post may have landed)', async () => {
    slack.failNext('chat.postMessage', { status: 503 });
    await repliesFor({ retries: 2 }).post({ channel: 'C1', threadTs: '1.1', text: 'hi' });
    expect(slack.requests.filter((r) => r.method === 'chat.postMessage')).toHaveLength(2);
    expect(slack.posts).toHaveLength(1);
  });

  it('reports a Slack API error as a non-retryable SlackApiError with Slack’s code, without retrying', async () => {
    const error = await repliesFor({ token: 'xoxb-wrong' })
      .post({ channel: 'C1', threadTs: '1.1', text: 'hi' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlackApiError);
    expect(error).toMatchObject({ code: 'invalid_auth', retryable: false });
    expect(slack.requests).toHaveLength(1);
    expect(slack.posts).toHaveLength(0);
  });

  it('reports a 429 that outlasts its waits (two Retry-After waits per call) as a retryable ratelimited error', async () => {
    slack.failNext('chat.postMessage', { retryAfterSeconds: 0, times: 5 });
    const error = await repliesFor({ retries: 1 })
      .post({ channel: 'C1', threadTs: '1.1', text: 'hi' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'SlackApiError', code: 'ratelimited', retryable: true });
    expect(slack.requests).toHaveLength(3);
  });

  it('never tries a post again after a server error (5xx, internal_error, …): it may have landed, and its outcome is unknown', async () => {
    // The client's own retries off (the default). Each of these posts lands, then Slack answers the error.
    const answers = [{ status: 500 }, { status: 503 }, { error: 'internal_error' }, { error: 'fatal_error' }, { error: 'service_unavailable' }, { error: 'request_timeout' }];
    const errors: unknown[] = [];
    for (const [index, failure] of answers.entries()) {
      slack.failNext('chat.postMessage', { ...failure, afterEffect: true });
      errors.push(await repliesFor({ retries: 0 }).post({ channel: 'C1', threadTs: '1.1', text: `The answer is ${index}.` }).catch((e: unknown) => e));
    }
    expect(errors.map((error) => (error as SlackApiError).code)).toEqual(['http_500', 'http_503', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);
    for (const error of errors) expect(error).toMatchObject({ name: 'SlackApiError', retryable: true, outcome: 'unknown' });
    // One request each, and each post once: never 'The answer is 0.' twice.
    expect(slack.requests).toHaveLength(answers.length);
    expect(slack.posts.map((p) => p.text)).toEqual(answers.map((_, index) => `The answer is ${index}.`));
  });

  it('never tries a post again that got no answer (it may have landed)', async () => {
    slack.failNext('chat.postMessage', { stallMs: 600 });
    const error = await repliesFor({ retries: 0, timeoutMs: 200 })
      .post({ channel: 'C1', threadTs: '1.1', text: 'late' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'request_error', outcome: 'unknown' });
    await slack.waitForPosts(1, 2_000); // the late answer did land
    expect(slack.requests).toHaveLength(1);
  });

  it('reports a 429 without Retry-After as ratelimited at once (the SDK does not guess a wait)', async () => {
    slack.failNext('chat.postMessage', { status: 429, error: 'ratelimited' });
    const error = await repliesFor({ retries: 2 })
      .post({ channel: 'C1', threadTs: '1.1', text: 'hi' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ratelimited', retryable: true });
    expect(slack.requests).toHaveLength(1);
  });

  it('reports an unreachable API as a retryable request_error and routes the SDK’s warning through our log', async () => {
    // A port that was just free: nothing listens there.
    const server = createServer();
    const url = `${await listenOnLoopback(server)}/api/`;
    await closeServer(server);
    const log = recordingLog();
    const replies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: url, retries: 0, log }), { log });

    const error = await replies.post({ channel: 'C1', threadTs: '1.1', text: 'hi' }).catch((e: unknown) => e);

    expect(error).toMatchObject({ name: 'SlackApiError', code: 'request_error', retryable: true });
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringContaining('@slack/web-api: http request failed') }));
  });

  it('treats already_reacted and no_reaction as done, logging them at info', async () => {
    const log = recordingLog();
    const replies = repliesFor({}, log);
    const target = { channel: 'C1', timestamp: '1.1', name: 'eyes' };

    await replies.addReaction(target);
    await replies.addReaction(target); // already_reacted
    await replies.removeReaction(target);
    await replies.removeReaction(target); // no_reaction

    expect(slack.reactions.map((r) => r.op)).toEqual(['add', 'remove']);
    expect(log.lines.filter((l) => l.level === 'info').map((l) => (l.extra[0] as { code: string }).code)).toEqual(['already_reacted', 'no_reaction']);
  });

  it('treats message_not_found on a reaction as done, and throws other reaction errors', async () => {
    const replies = repliesFor();
    slack.failNext('reactions.add', { error: 'message_not_found' });
    await expect(replies.addReaction({ channel: 'C1', timestamp: '9.9', name: 'eyes' })).resolves.toBeUndefined();
    slack.failNext('reactions.add', { error: 'too_many_reactions' });
    await expect(replies.addReaction({ channel: 'C1', timestamp: '9.9', name: 'eyes' })).rejects.toMatchObject({ code: 'too_many_reactions', retryable: false });
  });

  it('tries a read (looking for a posted chunk) and a reaction again after a server error: repeating them does no harm', async () => {
    const replies = repliesFor({ retries: 0 });
    const { ts } = await replies.post({ channel: 'C1', threadTs: '1.1', text: 'chunk', marker: { requestId: 'req-1', chunk: 0 } });
    slack.failNext('conversations.replies', { status: 503 });
    slack.failNext('reactions.add', { error: 'internal_error', afterEffect: true });

    await expect(replies.findPosted({ channel: 'C1', threadTs: '1.1' }, { requestId: 'req-1', chunk: 0 })).resolves.toBe(ts);
    // The add landed, the repeat is answered already_reacted: done.
    await expect(replies.addReaction({ channel: 'C1', timestamp: '1.1', name: 'eyes' })).resolves.toBeUndefined();

    expect(slack.requests.map((r) => r.method)).toEqual(['chat.postMessage', 'auth.test', 'conversations.replies', 'conversations.replies', 'reactions.add', 'reactions.add']);
    expect(slack.reactions).toEqual([{ op: 'add', channel: 'C1', timestamp: '1.1', name: 'eyes' }]);
  });

  it('counts only its own message as a posted chunk, never another app\'s look-alike with the same metadata', async () => {
    // Prepare: another app copies the reply metadata of chunk 1 onto a message of its own.
    const replies = repliesFor();
    const parent = slack.addMessage({ channel: 'C1', user: 'U1', text: 'question' });
    slack.addMessage({ channel: 'C1', thread_ts: parent, user: 'U0OTHERBOT', bot_id: 'B0OTHER', text: 'fake chunk', metadata: { event_type: REPLY_METADATA_TYPE, event_payload: { request_id: 'req-9', chunk: 1 } } });
    // Act
    const beforeOurs = await replies.findPosted({ channel: 'C1', threadTs: parent }, { requestId: 'req-9', chunk: 1 });
    const { ts } = await replies.post({ channel: 'C1', threadTs: parent, text: 'real chunk', marker: { requestId: 'req-9', chunk: 1 } });
    const afterOurs = await replies.findPosted({ channel: 'C1', threadTs: parent }, { requestId: 'req-9', chunk: 1 });
    // Assess
    expect(beforeOurs).toBeUndefined();
    expect(afterOurs).toBe(ts);
    // Who the token posts as is asked once.
    expect(slack.requests.filter((r) => r.method === 'auth.test')).toHaveLength(1);
  });

  it('warns through our log when Slack rate-limits a call, naming the method', async () => {
    const log = recordingLog();
    slack.failNext('reactions.add', { retryAfterSeconds: 0 });
    await repliesFor({}, log).addReaction({ channel: 'C1', timestamp: '1.1', name: 'eyes' });
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 'warn', extra: [{ method: 'reactions.add', retry_after_seconds: 0 }] }));
  });
});

describe('slackRepliesFromSecret: a bot token that rotates while the process lives', () => {
  let slack: FakeSlackApi;
  beforeEach(async () => {
    slack = await startFakeSlackApi({ botToken: 'token-a' });
  });
  afterEach(async () => {
    await slack.close();
  });

  /** What Secrets Manager would hold: `stored`, cached by `get` until `refresh` reads it again. */
  function storedSecret(initial: string) {
    const state = { stored: initial, cached: initial, refreshes: 0, failRefresh: false };
    const source: SecretSource = {
      get: async () => state.cached,
      refresh: async () => {
        state.refreshes += 1;
        if (state.failRefresh) throw new Error('secret not readable');
        return (state.cached = state.stored);
      },
    };
    return { state, source };
  }

  const message = { channel: 'C1', threadTs: '1.1', text: 'hi' };
  const tokensSent = () => slack.requests.map((r) => r.headers.authorization);

  it.each(['invalid_auth', 'token_revoked', 'token_expired', 'account_inactive', 'not_authed'])(
    'on %s re-reads the secret once and makes the call once more with the new token',
    async (refusal) => {
      const { state, source } = storedSecret('token-a');
      const log = recordingLog();
      const replies = slackRepliesFromSecret(source, { apiUrl: slack.apiUrl, retries: 0, log });
      await replies.post(message);

      slack.rotateToken('token-b', refusal);
      state.stored = 'token-b';
      await replies.post(message);
      await replies.addReaction({ channel: 'C1', timestamp: '1.1', name: 'eyes' });

      expect(tokensSent()).toEqual(['Bearer token-a', 'Bearer token-a', 'Bearer token-b', 'Bearer token-b']);
      expect(slack.posts).toHaveLength(2);
      expect(state.refreshes).toBe(1);
      expect(log.lines).toEqual([expect.objectContaining({ level: 'info', message: expect.stringContaining('refused the bot token'), extra: [{ method: 'chat.postMessage', code: refusal }] })]);
    },
  );

  it('builds a new client as soon as the secret holds a new token, before Slack refuses the old one', async () => {
    const { state, source } = storedSecret('token-a');
    const replies = slackRepliesFromSecret(source, { apiUrl: slack.apiUrl, retries: 0 });
    await replies.post(message);

    // The cached value changed (its max age ran out and it was read again).
    slack.rotateToken('token-b');
    state.cached = 'token-b';
    await replies.removeReaction({ channel: 'C1', timestamp: '1.1', name: 'eyes' });

    expect(tokensSent()).toEqual(['Bearer token-a', 'Bearer token-b']);
    expect(state.refreshes).toBe(0);
  });

  it('does not call Slack again when the secret still holds the refused token', async () => {
    const { state, source } = storedSecret('token-stale');
    const replies = slackRepliesFromSecret(source, { apiUrl: slack.apiUrl, retries: 0 });

    await expect(replies.post(message)).rejects.toMatchObject({ name: 'SlackApiError', code: 'invalid_auth' });

    expect(slack.requests).toHaveLength(1);
    expect(state.refreshes).toBe(1);
  });

  it('reports Slack’s refusal, not the secret read, when re-reading the secret fails', async () => {
    const { state, source } = storedSecret('token-stale');
    state.failRefresh = true;
    const log = recordingLog();
    const replies = slackRepliesFromSecret(source, { apiUrl: slack.apiUrl, retries: 0, log });

    await expect(replies.post(message)).rejects.toMatchObject({ code: 'invalid_auth' });

    expect(slack.requests).toHaveLength(1);
    expect(log.lines.map((l) => [l.level, l.message])).toEqual([['warn', 'Slack refused the bot token and re-reading its secret failed']]);
  });

  it('leaves the secret alone for errors that are not about the token', async () => {
    const { state, source } = storedSecret('token-a');
    slack.failNext('chat.postMessage', { error: 'channel_not_found' });

    await expect(slackRepliesFromSecret(source, { apiUrl: slack.apiUrl, retries: 0 }).post(message)).rejects.toMatchObject({ code: 'channel_not_found' });

    expect(state.refreshes).toBe(0);
    expect(slack.requests).toHaveLength(1);
  });
});

describe('slackApiUrl', () => {
  it('ends the URL with a slash, since the SDK appends method names to it', () => {
    expect(slackApiUrl('http://127.0.0.1:3001/api')).toBe('http://127.0.0.1:3001/api/');
    expect(slackApiUrl('https://slack.com/api/')).toBe('https://slack.com/api/');
  });

  it('refuses plain http to anything but loopback, since the token travels with every call', () => {
    expect(() => slackApiUrl('http://slack.example.com/api/')).toThrow(ConfigError);
    expect(() => slackApiUrl('not a url')).toThrow(ConfigError);
    expect(slackApiUrl('http://localhost:9/api/')).toBe('http://localhost:9/api/');
  });
});

describe('toSlackApiError', () => {
  it('classifies HTTP statuses: 5xx retryable, 4xx not', () => {
    const http = (statusCode: number) => Object.assign(new Error('x'), { code: 'slack_webapi_http_error', statusCode });
    expect(toSlackApiError(http(502), 'chat.postMessage')).toMatchObject({ code: 'http_502', retryable: true });
    expect(toSlackApiError(http(404), 'chat.postMessage')).toMatchObject({ code: 'http_404', retryable: false });
  });

  it('takes a 5xx and Slack’s internal failures as “may have landed” (outcome unknown), its refusals as refused', () => {
    const http = (statusCode: number) => Object.assign(new Error('x'), { code: 'slack_webapi_http_error', statusCode });
    const platform = (error: string) => Object.assign(new Error('x'), { code: 'slack_webapi_platform_error', data: { ok: false, error } });
    for (const status of [500, 502, 503, 504]) expect(toSlackApiError(http(status), 'chat.postMessage')).toMatchObject({ retryable: true, outcome: 'unknown' });
    for (const code of ['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']) {
      expect(toSlackApiError(platform(code), 'chat.postMessage')).toMatchObject({ code, retryable: true, outcome: 'unknown' });
    }
    expect(toSlackApiError(platform('ratelimited'), 'chat.postMessage')).toMatchObject({ code: 'ratelimited', retryable: true, outcome: 'refused' });
    expect(toSlackApiError(platform('channel_not_found'), 'chat.postMessage')).toMatchObject({ code: 'channel_not_found', retryable: false, outcome: 'refused' });
  });

  it('keeps a token that slipped into an unknown error out of the message', () => {
    const error = toSlackApiError(new Error('boom xoxb-123-456-secret'), 'chat.postMessage');
    expect(error).toMatchObject({ code: 'unknown_error', retryable: false });
    expect(error.message).not.toContain('xoxb-123-456-secret');
  });
});
