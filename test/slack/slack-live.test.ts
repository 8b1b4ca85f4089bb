import type { Log } from '../../src/observability/logger';
import type { SecretSource } from '../../src/secrets/secret-source';
import { isLiveReplyRefusal } from '../../src/slack/slack-api-error';
import { REPLY_METADATA_TYPE, SlackApiError, WebApiSlackReplies, createSlackWebClient, slackRepliesFromSecret, splitMarkdown } from '../../src/slack/slack-replies';
import { startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';

/** A log that remembers what it was given. */
function recordingLog() {
  const lines: Array<{ level: string; message: string; extra: unknown[] }> = [];
  const at = (level: string) => (message: string, ...extra: unknown[]) => {
    lines.push({ level, message, extra });
  };
  return { lines, info: at('info'), warn: at('warn'), error: at('error') } as { lines: typeof lines } & Pick<Log, 'info' | 'warn' | 'error'>;
}

const THREAD = { channel: 'C1', threadTs: '1700000000.000100' };
const DM_THREAD = { channel: 'D1', threadTs: '1700000000.000200' };
const RECIPIENT = { recipientUserId: 'U123', recipientTeamId: 'T123' };

async function until(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SlackLive over the real WebClient', () => {
  let slack: FakeSlackApi;
  beforeEach(async () => {
    slack = await startFakeSlackApi();
  });
  afterEach(async () => {
    await slack.close();
  });

  const clientFor = (options: { retries?: number; timeoutMs?: number } = {}, log = recordingLog()) =>
    createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl, retries: options.retries ?? 0, log, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
  const liveFor = (options: { retries?: number; timeoutMs?: number } = {}, log = recordingLog()) => new WebApiSlackReplies(clientFor(options, log), { log });
  const calls = (method: string) => slack.requests.filter((request) => request.method === method);
  const failureOf = (promise: Promise<unknown>) => promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );

  describe('assistant.threads.setStatus', () => {
    it('sets a status with loading messages (at most 10), and Slack clears it when the app writes in the thread', async () => {
      const live = liveFor();
      const loading = Array.from({ length: 12 }, (_, i) => `step ${i + 1}`);

      await live.setStatus(DM_THREAD, 'is thinking…', { loadingMessages: loading });

      expect(slack.statuses).toEqual([{ channel: 'D1', thread_ts: DM_THREAD.threadTs, status: 'is thinking…', loading_messages: loading.slice(0, 10) }]);
      expect(slack.statusOf('D1', DM_THREAD.threadTs)).toBe('is thinking…');
      await live.startStream(DM_THREAD);
      expect(slack.statusOf('D1', DM_THREAD.threadTs)).toBeUndefined();
    });

    it('reports a refusal (not an assistant thread) as a non-retryable SlackApiError, without trying again', async () => {
      slack.failWhen('assistant.threads.setStatus', (body) => body.channel_id === 'C1', { error: 'not_allowed_token_type', times: Infinity });

      const error = await failureOf(liveFor().setStatus(THREAD, 'is thinking…'));

      expect(error).toBeInstanceOf(SlackApiError);
      expect(error).toMatchObject({ code: 'not_allowed_token_type', retryable: false, outcome: 'refused' });
      expect(isLiveReplyRefusal(error)).toBe(true);
      expect(calls('assistant.threads.setStatus')).toHaveLength(1);
      await liveFor().setStatus(DM_THREAD, 'still fine in a DM');
      expect(slack.statuses.map((s) => s.channel)).toEqual(['D1']);
    });

    it('is tried again after no answer, since setting a status twice does no harm', async () => {
      slack.failNext('assistant.threads.setStatus', { stallMs: 500 });

      await liveFor({ timeoutMs: 150 }).setStatus(DM_THREAD, 'is thinking…');

      expect(calls('assistant.threads.setStatus')).toHaveLength(2);
      expect(slack.statusOf('D1', DM_THREAD.threadTs)).toBe('is thinking…');
      await until(() => slack.statuses.length === 2); // the stalled one lands late, harmlessly
    });

    it('is tried again after a server error answer too, even one that landed', async () => {
      slack.failNext('assistant.threads.setStatus', { error: 'internal_error', afterEffect: true });

      await liveFor().setStatus(DM_THREAD, 'is thinking…');

      expect(calls('assistant.threads.setStatus')).toHaveLength(2);
      expect(slack.statusOf('D1', DM_THREAD.threadTs)).toBe('is thinking…');
    });
  });

  describe('chat.startStream', () => {
    it('starts a streamed thread reply in a DM without a recipient, with its opening markdown', async () => {
      const { ts } = await liveFor().startStream({ ...DM_THREAD, markdownText: 'Looking' });

      expect(slack.streams).toEqual([expect.objectContaining({ channel: 'D1', thread_ts: DM_THREAD.threadTs, ts, state: 'streaming', text: 'Looking' })]);
      expect(calls('chat.startStream')[0]?.body).toEqual({ channel: 'D1', thread_ts: DM_THREAD.threadTs, markdown_text: 'Looking' });
      expect(slack.posts).toEqual([]); // streamed messages are not posts
    });

    it('is refused in a channel without the recipient, and accepted with it', async () => {
      const live = liveFor();

      const error = await failureOf(live.startStream(THREAD));
      const { ts } = await live.startStream({ ...THREAD, ...RECIPIENT });

      expect(error).toMatchObject({ name: 'SlackApiError', code: expect.stringMatching(/^missing_recipient_(team|user)_id$/), retryable: false, outcome: 'refused' });
      expect(isLiveReplyRefusal(error)).toBe(true);
      expect(slack.streams).toEqual([expect.objectContaining({ ts, recipient_user_id: 'U123', recipient_team_id: 'T123' })]);
    });

    it('can open with a task step, sent as chunks, and mark it complete when it stops', async () => {
      const live = liveFor();
      const task = { id: 'answer', title: 'Working on it', status: 'in_progress' as const };

      const { ts } = await live.startStream({ ...DM_THREAD, task, markdownText: 'Hi' });
      await live.stopStream({ channel: 'D1', ts }, { task: { ...task, status: 'complete' } });

      expect(JSON.parse(String(calls('chat.startStream')[0]?.body.chunks))).toEqual([
        { type: 'task_update', id: 'answer', title: 'Working on it', status: 'in_progress' },
        { type: 'markdown_text', text: 'Hi' },
      ]);
      expect(slack.streams[0]).toMatchObject({ text: 'Hi', state: 'stopped', tasks: [expect.objectContaining({ status: 'in_progress' }), expect.objectContaining({ status: 'complete' })] });
    });

    it('refuses opening markdown longer than one call takes, before calling Slack', async () => {
      const error = await failureOf(liveFor().startStream({ ...DM_THREAD, markdownText: 'x'.repeat(12_001) }));
      expect(error).toMatchObject({ code: 'msg_too_long', retryable: false });
      expect(slack.requests).toHaveLength(0);
    });

    it('is never tried again after no answer: the stream it started is found in the thread and carried on', async () => {
      // It lands at once; its answer comes after the client stopped waiting.
      slack.failNext('chat.startStream', { stallMs: 500, afterEffect: true });
      const { ts } = await liveFor({ timeoutMs: 150 }).startStream(DM_THREAD);
      expect(calls('chat.startStream')).toHaveLength(1);
      expect(calls('conversations.replies')).toHaveLength(1);
      expect(slack.streams.map((stream) => stream.ts)).toEqual([ts]);
    });

    it('is never tried again after a server error answer (a second would be a second message): a start that landed is found and carried on', async () => {
      const threads = [
        { ...DM_THREAD, threadTs: '1700000000.000301' },
        { ...DM_THREAD, threadTs: '1700000000.000302' },
      ];
      const started: string[] = [];
      for (const [index, failure] of [{ status: 500 }, { status: 503 }].entries()) {
        slack.failNext('chat.startStream', { ...failure, afterEffect: true });
        started.push((await liveFor().startStream({ ...threads[index]!, markdownText: 'The answer' })).ts);
      }
      expect(calls('chat.startStream')).toHaveLength(2);
      expect(slack.streams.map((stream) => stream.ts)).toEqual(started);
      // Carried on: the stream takes appends as any other.
      const live = liveFor();
      await live.appendStream({ channel: 'D1', ts: started[0]! }, ' is 42.');
      expect(slack.messageText(started[0]!)).toBe('The answer is 42.');
    });

    it('takes no stream it cannot tell is its own: a start answered 500 in a thread where another of ours is streaming fails as unknown', async () => {
      const live = liveFor();
      await live.startStream({ ...DM_THREAD, markdownText: 'another task' });
      slack.failNext('chat.startStream', { status: 500, afterEffect: true });
      const error = await failureOf(live.startStream({ ...DM_THREAD, markdownText: 'The answer' }));
      expect(error).toMatchObject({ retryable: true, outcome: 'unknown' });
      // Answered messages (with reply metadata) and the thread's root are never candidates; two streams are.
      expect(slack.streams).toHaveLength(2);
    });

    it('a start refused before it did anything (a 500 that landed nothing) finds no stream and fails as unknown', async () => {
      slack.failNext('chat.startStream', { status: 500 });
      const error = await failureOf(liveFor().startStream({ ...DM_THREAD, threadTs: '1700000000.000303', markdownText: 'The answer' }));
      expect(error).toMatchObject({ retryable: true, outcome: 'unknown' });
      expect(slack.streams).toEqual([]);
    });
  });

  describe('chat.appendStream', () => {
    it('appends markdown that accumulates in the message, as conversations.replies shows it', async () => {
      const live = liveFor();
      const { ts } = await live.startStream({ ...DM_THREAD, markdownText: 'The answer' });

      await live.appendStream({ channel: 'D1', ts }, ' is');
      await live.appendStream({ channel: 'D1', ts }, ' **42**.');
      await live.appendStream({ channel: 'D1', ts }, ''); // nothing to send

      expect(slack.messageText(ts)).toBe('The answer is **42**.');
      expect(slack.streams[0]?.appends).toEqual([' is', ' **42**.']);
      expect(calls('chat.appendStream')).toHaveLength(2);
      const thread = await clientFor().conversations.replies({ channel: 'D1', ts: DM_THREAD.threadTs });
      expect(thread.messages).toEqual([expect.objectContaining({ ts, text: 'The answer is **42**.', bot_id: expect.any(String) })]);
    });

    it('sends task cards (and the plan title) as chunks before the text, and cards alone as one call; Slack keeps one card per id at its latest state', async () => {
      const live = liveFor();
      const { ts } = await live.startStream({ ...DM_THREAD, tasks: [{ id: 's1', title: 'Search the wiki', status: 'in_progress' }], planTitle: 'Plan' });
      await live.appendStream({ channel: 'D1', ts }, '', { tasks: [{ id: 's1', title: 'Search the wiki', status: 'complete', details: '3 pages', sources: [{ url: 'https://wiki.example/a', text: 'Page A' }] }, { id: 's2', title: 'Draft', status: 'in_progress' }] });
      await live.appendStream({ channel: 'D1', ts }, 'The answer', { tasks: [{ id: 's2', title: 'Draft', status: 'complete' }] });

      const appended = calls('chat.appendStream').map((call) => JSON.parse(String(call.body.chunks)));
      expect(appended[0]).toEqual([
        { type: 'task_update', id: 's1', title: 'Search the wiki', status: 'complete', details: '3 pages', sources: [{ type: 'url', url: 'https://wiki.example/a', text: 'Page A' }] },
        { type: 'task_update', id: 's2', title: 'Draft', status: 'in_progress' },
      ]);
      expect(appended[1]).toEqual([{ type: 'task_update', id: 's2', title: 'Draft', status: 'complete' }, { type: 'markdown_text', text: 'The answer' }]);
      expect(JSON.parse(String(calls('chat.startStream')[0]?.body.chunks))[0]).toEqual({ type: 'plan_update', title: 'Plan' });
      expect(slack.streams[0]).toMatchObject({ text: 'The answer', plan_title: 'Plan', cards: [expect.objectContaining({ id: 's1', status: 'complete', details: '3 pages' }), expect.objectContaining({ id: 's2', status: 'complete' })] });
    });

    it('splits more than 12,000 characters into several calls, in order, never inside a surrogate pair', async () => {
      const live = liveFor();
      const { ts } = await live.startStream(DM_THREAD);
      // An emoji (two UTF-16 units) straddles the 12,000 mark.
      const text = `${'a'.repeat(11_999)}😀${'b'.repeat(13_000)}`;

      await live.appendStream({ channel: 'D1', ts }, text);

      const sent = calls('chat.appendStream').map((r) => String(r.body.markdown_text));
      expect(sent.length).toBe(3);
      expect(sent.every((piece) => piece.length <= 12_000)).toBe(true);
      expect(sent[0]).toBe('a'.repeat(11_999));
      expect(slack.messageText(ts)).toBe(text);
    });

    it('refuses an append after the stream stopped or expired with message_not_in_streaming_state', async () => {
      const live = liveFor();
      const stopped = await live.startStream(DM_THREAD);
      const expired = await live.startStream(DM_THREAD);
      await live.stopStream({ channel: 'D1', ts: stopped.ts });
      slack.expireStream(expired.ts);

      const afterStop = await failureOf(live.appendStream({ channel: 'D1', ts: stopped.ts }, 'late'));
      const afterExpiry = await failureOf(live.appendStream({ channel: 'D1', ts: expired.ts }, 'late'));
      const stopAfterExpiry = await failureOf(live.stopStream({ channel: 'D1', ts: expired.ts }, { markdownText: 'late' }));

      for (const error of [afterStop, afterExpiry, stopAfterExpiry]) {
        expect(error).toBeInstanceOf(SlackApiError);
        expect(error).toMatchObject({ code: 'message_not_in_streaming_state', retryable: false, outcome: 'refused' });
        expect(isLiveReplyRefusal(error)).toBe(true);
      }
      expect(calls('chat.appendStream')).toHaveLength(2);
    });

    it('is never tried again after no answer (the text would show twice)', async () => {
      const { ts } = await liveFor().startStream(DM_THREAD);
      slack.failNext('chat.appendStream', { stallMs: 500 });

      const error = await failureOf(liveFor({ timeoutMs: 150 }).appendStream({ channel: 'D1', ts }, 'once'));

      expect(error).toMatchObject({ code: 'request_error', outcome: 'unknown' });
      await until(() => slack.messageText(ts) === 'once');
      expect(calls('chat.appendStream')).toHaveLength(1);
    });

    it('is never tried again after a server error answer (it may have landed: the text would show twice)', async () => {
      const live = liveFor();
      const { ts } = await live.startStream(DM_THREAD);
      slack.failNext('chat.appendStream', { status: 500, afterEffect: true });
      slack.failNext('chat.appendStream', { error: 'service_unavailable', afterEffect: true });

      const after500 = await failureOf(live.appendStream({ channel: 'D1', ts }, 'once'));
      const afterUnavailable = await failureOf(live.appendStream({ channel: 'D1', ts }, ', twice'));

      expect(after500).toMatchObject({ code: 'http_500', retryable: true, outcome: 'unknown' });
      expect(afterUnavailable).toMatchObject({ code: 'service_unavailable', retryable: true, outcome: 'unknown' });
      expect(calls('chat.appendStream')).toHaveLength(2);
      expect(slack.messageText(ts)).toBe('once, twice');
    });

    it('reports a split append that failed after a part landed with an unknown outcome, keeping Slack’s code', async () => {
      const live = liveFor();
      const { ts } = await live.startStream(DM_THREAD);
      slack.failWhen('chat.appendStream', (body) => String(body.markdown_text).startsWith('b'), { error: 'message_not_in_streaming_state' });

      const error = await failureOf(live.appendStream({ channel: 'D1', ts }, `${'a'.repeat(12_000)}${'b'.repeat(10)}`));

      expect(error).toMatchObject({ code: 'message_not_in_streaming_state', outcome: 'unknown', retryable: false });
      expect(slack.messageText(ts)).toBe('a'.repeat(12_000));
    });

    it('waits out a 429 with Retry-After as a post does, and appends once', async () => {
      const log = recordingLog();
      const live = liveFor({}, log);
      const { ts } = await live.startStream(DM_THREAD);
      slack.failNext('chat.appendStream', { retryAfterSeconds: 0 });

      await live.appendStream({ channel: 'D1', ts }, 'after a 429');

      expect(calls('chat.appendStream')).toHaveLength(2);
      expect(slack.messageText(ts)).toBe('after a 429');
      expect(log.lines).toContainEqual(expect.objectContaining({ level: 'warn', extra: [{ method: 'chat.appendStream', retry_after_seconds: 0 }] }));
    });

    it('ends at once, retryable, when the Retry-After outlasts the deadline', async () => {
      const live = liveFor();
      const { ts } = await live.startStream(DM_THREAD);
      slack.failNext('chat.appendStream', { retryAfterSeconds: 30 });

      const error = await failureOf(live.appendStream({ channel: 'D1', ts }, 'x', { deadline: Date.now() + 1_000 }));

      expect(error).toMatchObject({ code: 'ratelimited', retryable: true });
      expect(calls('chat.appendStream')).toHaveLength(1);
      expect(slack.messageText(ts)).toBe('');
    });
  });

  describe('chat.stopStream', () => {
    it('stops with final markdown and the reply marker, which conversations.replies and findPosted show', async () => {
      const live = liveFor();
      const { ts } = await live.startStream({ ...THREAD, ...RECIPIENT, markdownText: 'Part one' });
      await live.appendStream({ channel: 'C1', ts }, ', part two');

      await live.stopStream({ channel: 'C1', ts }, { markdownText: ', the end.', marker: { requestId: 'req-1', chunk: 0 } });

      expect(slack.streams[0]).toMatchObject({ state: 'stopped', text: 'Part one, part two, the end.' });
      const thread = await clientFor().conversations.replies({ channel: 'C1', ts: THREAD.threadTs, include_all_metadata: true });
      expect(thread.messages).toEqual([
        expect.objectContaining({ ts, text: 'Part one, part two, the end.', metadata: { event_type: REPLY_METADATA_TYPE, event_payload: { request_id: 'req-1', chunk: 0 } } }),
      ]);
      await expect(live.findPosted(THREAD, { requestId: 'req-1', chunk: 0 })).resolves.toBe(ts);
    });

    it('sends final markdown longer than one call as appends, then the stop with the rest', async () => {
      const live = liveFor();
      const { ts } = await live.startStream(DM_THREAD);
      const text = 'y'.repeat(30_000);

      await live.stopStream({ channel: 'D1', ts }, { markdownText: text });

      expect(calls('chat.appendStream').map((r) => String(r.body.markdown_text).length)).toEqual([12_000, 12_000]);
      expect(String(calls('chat.stopStream')[0]?.body.markdown_text)).toHaveLength(6_000);
      expect(slack.streams[0]).toMatchObject({ state: 'stopped', text });
    });

    it('is tried again after no answer; a stop cannot land twice', async () => {
      const { ts } = await liveFor().startStream(DM_THREAD);
      // The first stop is held until well after the retry, which stops the stream.
      slack.failNext('chat.stopStream', { stallMs: 800 });

      await liveFor({ timeoutMs: 150 }).stopStream({ channel: 'D1', ts }, { markdownText: ' done' });

      expect(calls('chat.stopStream')).toHaveLength(2);
      expect(slack.streams[0]).toMatchObject({ state: 'stopped', text: ' done' });
      await new Promise((resolve) => setTimeout(resolve, 900)); // the held stop is then refused, to nobody
      expect(slack.messageText(ts)).toBe(' done');
    });

    it('is tried again after a server error answer; a repeat of a stop that landed is refused, with the outcome unknown', async () => {
      const { ts } = await liveFor().startStream(DM_THREAD);
      slack.failNext('chat.stopStream', { status: 503, afterEffect: true });

      const error = await failureOf(liveFor().stopStream({ channel: 'D1', ts }, { markdownText: ' done' }));

      expect(calls('chat.stopStream')).toHaveLength(2);
      expect(error).toMatchObject({ code: 'message_not_in_streaming_state', outcome: 'unknown', retryable: false });
      expect(slack.streams[0]).toMatchObject({ state: 'stopped', text: ' done' });
    });

    it('reports message_not_in_streaming_state after such a retry with an unknown outcome (the first stop may have landed)', async () => {
      const { ts } = await liveFor().startStream(DM_THREAD);
      // Held past the client's timeout, but it lands before the retry (250 ms after the timeout).
      slack.failNext('chat.stopStream', { stallMs: 150 });

      const error = await failureOf(liveFor({ timeoutMs: 100 }).stopStream({ channel: 'D1', ts }, { markdownText: ' done' }));

      expect(error).toMatchObject({ code: 'message_not_in_streaming_state', outcome: 'unknown', retryable: false });
      expect(slack.streams[0]).toMatchObject({ state: 'stopped', text: ' done' });
    });
  });

  describe('chat.update', () => {
    it('replaces the text of a posted message (the fallback where streaming is refused)', async () => {
      const live = liveFor();
      const { ts } = await live.post({ ...THREAD, text: 'Working…', marker: { requestId: 'req-2', chunk: 0 } });

      await live.update({ channel: 'C1', ts }, 'The answer');
      await live.update({ channel: 'C1', ts }, 'The answer, complete.');

      expect(slack.messageText(ts)).toBe('The answer, complete.');
      expect(slack.posts.map((p) => p.text)).toEqual(['Working…']); // posts stay as they were sent
      expect(slack.updates.map((u) => u.text)).toEqual(['The answer', 'The answer, complete.']);
      const thread = await clientFor().conversations.replies({ channel: 'C1', ts: THREAD.threadTs, include_all_metadata: true });
      // Without a marker Slack keeps the message's metadata.
      expect(thread.messages).toEqual([expect.objectContaining({ ts, text: 'The answer, complete.', metadata: expect.objectContaining({ event_payload: { request_id: 'req-2', chunk: 0 } }) })]);
    });

    it('reports message_not_found and cant_update_message as Slack does', async () => {
      const live = liveFor();
      const theirs = slack.addMessage({ channel: 'C1', user: 'U1', text: 'mine' });

      await expect(live.update({ channel: 'C1', ts: '1.000001' }, 'x')).rejects.toMatchObject({ code: 'message_not_found', retryable: false });
      await expect(live.update({ channel: 'C1', ts: theirs }, 'x')).rejects.toMatchObject({ code: 'cant_update_message', retryable: false });
    });

    it('is tried again after no answer, since the same text twice is the same message', async () => {
      const { ts } = await liveFor().post({ ...THREAD, text: 'Working…' });
      slack.failNext('chat.update', { stallMs: 500 });

      await liveFor({ timeoutMs: 150 }).update({ channel: 'C1', ts }, 'Done');

      expect(calls('chat.update')).toHaveLength(2);
      expect(slack.messageText(ts)).toBe('Done');
      await until(() => slack.updates.length === 2);
    });

    it('is tried again after a server error answer, even one that landed: the same text twice is the same message', async () => {
      const { ts } = await liveFor().post({ ...THREAD, text: 'Working…' });
      slack.failNext('chat.update', { error: 'internal_error', afterEffect: true });

      await liveFor().update({ channel: 'C1', ts }, 'Done');

      expect(calls('chat.update')).toHaveLength(2);
      expect(slack.messageText(ts)).toBe('Done');
    });

    it('stops trying once the caller’s signal aborts', async () => {
      const live = liveFor({ timeoutMs: 5_000 });
      const { ts } = await live.post({ ...THREAD, text: 'Working…' });
      slack.failNext('chat.update', { stallMs: 300 });

      const error = await failureOf(live.update({ channel: 'C1', ts }, 'Done', { signal: AbortSignal.timeout(100) }));

      expect(error).toMatchObject({ code: 'request_error', outcome: 'unknown' });
      expect(calls('chat.update')).toHaveLength(1);
      await until(() => slack.updates.length === 1);
    });
  });
});

describe('SlackLive through slackRepliesFromSecret: a bot token that rotates', () => {
  let slack: FakeSlackApi;
  beforeEach(async () => {
    slack = await startFakeSlackApi({ botToken: 'token-a' });
  });
  afterEach(async () => {
    await slack.close();
  });

  function storedSecret(initial: string) {
    const state = { stored: initial, cached: initial, refreshes: 0 };
    const source: SecretSource = {
      get: async () => state.cached,
      refresh: async () => {
        state.refreshes += 1;
        return (state.cached = state.stored);
      },
    };
    return { state, source };
  }

  it('re-reads a rotated token once and carries on streaming with it', async () => {
    const { state, source } = storedSecret('token-a');
    const live = slackRepliesFromSecret(source, { apiUrl: slack.apiUrl, retries: 0 });
    await live.setStatus(DM_THREAD, 'is thinking…');
    const { ts } = await live.startStream({ ...DM_THREAD, markdownText: 'Hello' });

    slack.rotateToken('token-b', 'token_revoked');
    state.stored = 'token-b';
    await live.appendStream({ channel: 'D1', ts }, ', world');
    await live.stopStream({ channel: 'D1', ts }, { markdownText: '.' });
    const posted = await live.post({ channel: 'D1', threadTs: DM_THREAD.threadTs, text: 'Working…' });
    await live.update({ channel: 'D1', ts: posted.ts }, 'Done');

    expect(slack.requests.map((r) => [r.method, r.headers.authorization])).toEqual([
      ['assistant.threads.setStatus', 'Bearer token-a'],
      ['chat.startStream', 'Bearer token-a'],
      ['chat.appendStream', 'Bearer token-a'],
      ['chat.appendStream', 'Bearer token-b'],
      ['chat.stopStream', 'Bearer token-b'],
      ['chat.postMessage', 'Bearer token-b'],
      ['chat.update', 'Bearer token-b'],
    ]);
    expect(state.refreshes).toBe(1);
    expect(slack.messageText(ts)).toBe('Hello, world.');
    expect(slack.messageText(posted.ts)).toBe('Done');
  });

  it('does not make a split append again with a new token after part of it landed', async () => {
    const { state, source } = storedSecret('token-a');
    const live = slackRepliesFromSecret(source, { apiUrl: slack.apiUrl, retries: 0 });
    const { ts } = await live.startStream(DM_THREAD);
    // The token is rotated between the two parts of one append.
    slack.failWhen('chat.appendStream', (body) => String(body.markdown_text).startsWith('b'), { error: 'invalid_auth' });
    state.stored = 'token-b';

    const error = await live.appendStream({ channel: 'D1', ts }, `${'a'.repeat(12_000)}bbb`).catch((e: unknown) => e);

    expect(error).toMatchObject({ code: 'invalid_auth', outcome: 'unknown' });
    expect(state.refreshes).toBe(0);
    expect(slack.messageText(ts)).toBe('a'.repeat(12_000));
  });
});

describe('splitMarkdown', () => {
  it('keeps short text whole, gives nothing for empty text, and cuts at a line end near the limit', () => {
    expect(splitMarkdown('short', 10)).toEqual(['short']);
    expect(splitMarkdown('', 10)).toEqual([]);
    expect(splitMarkdown('aaaaaaaaa\nbbbb', 10)).toEqual(['aaaaaaaaa\n', 'bbbb']);
    expect(splitMarkdown('a\nbbbbbbbbbbbbbbbbbbb', 10)).toEqual(['a\nbbbbbbbb', 'bbbbbbbbbb', 'b']);
    expect(splitMarkdown('x'.repeat(25)).join('')).toBe('x'.repeat(25));
  });
});
