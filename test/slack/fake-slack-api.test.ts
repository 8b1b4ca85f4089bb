import { startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';

// The fake stands in for Slack in the pipeline's integration tests, so it must refuse what Slack
// refuses; a fake that accepts anything would let a broken client pass.
describe('startFakeSlackApi', () => {
  let slack: FakeSlackApi;
  beforeEach(async () => {
    slack = await startFakeSlackApi({ botToken: 'test-token-1' });
  });
  afterEach(async () => {
    await slack.close();
  });

  const call = async (method: string, init: { body: string; contentType: string; auth?: string }) => {
    const response = await fetch(`${slack.apiUrl}${method}`, {
      method: 'POST',
      body: init.body,
      headers: { 'content-type': init.contentType, ...(init.auth ? { authorization: init.auth } : {}) },
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), json: (await response.json()) as Record<string, unknown> };
  };

  it('reads JSON bodies as well as forms, and answers a post with its channel and a new ts', async () => {
    const json = await call('chat.postMessage', { body: JSON.stringify({ channel: 'C1', text: 'from JSON', thread_ts: '1.1' }), contentType: 'application/json; charset=utf-8', auth: 'Bearer test-token-1' });
    const form = await call('chat.postMessage', { body: new URLSearchParams({ channel: 'C1', text: 'from a form' }).toString(), contentType: 'application/x-www-form-urlencoded', auth: 'Bearer test-token-1' });

    expect(json.json).toMatchObject({ ok: true, channel: 'C1', message: { text: 'from JSON', thread_ts: '1.1' } });
    expect(form.json.ts).not.toBe(json.json.ts);
    expect(slack.posts.map((p) => p.text)).toEqual(['from JSON', 'from a form']);
    expect(slack.posts[1]).not.toHaveProperty('thread_ts');
  });

  it('refuses a wrong or missing token, and accepts a form-field token without recording it', async () => {
    const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
    const wrong = await call('chat.postMessage', { body: form({ channel: 'C1', text: 'x' }), contentType: 'application/x-www-form-urlencoded', auth: 'Bearer nope' });
    const missing = await call('chat.postMessage', { body: form({ channel: 'C1', text: 'x' }), contentType: 'application/x-www-form-urlencoded' });
    const inForm = await call('chat.postMessage', { body: form({ channel: 'C1', text: 'x', token: 'test-token-1' }), contentType: 'application/x-www-form-urlencoded' });

    expect(wrong.json).toEqual({ ok: false, error: 'invalid_auth' });
    expect(missing.json).toEqual({ ok: false, error: 'not_authed' });
    expect(inForm.json.ok).toBe(true);
    expect(JSON.stringify(slack.requests.map((r) => r.body))).not.toContain('test-token-1');
  });

  it('after a token rotation refuses the old token as Slack does, and accepts only the new one', async () => {
    const post = (token: string) => call('chat.postMessage', { body: JSON.stringify({ channel: 'C1', text: 'x' }), contentType: 'application/json', auth: `Bearer ${token}` });

    slack.rotateToken('test-token-2');
    const [old, fresh] = [await post('test-token-1'), await post('test-token-2')];
    slack.rotateToken('test-token-3', 'token_revoked');
    const revoked = await post('test-token-2');

    expect([old.status, old.json]).toEqual([200, { ok: false, error: 'invalid_auth' }]);
    expect(fresh.json.ok).toBe(true);
    expect(revoked.json).toEqual({ ok: false, error: 'token_revoked' });
    expect(slack.token).toBe('test-token-3');
    expect(slack.posts).toHaveLength(1);
  });

  it('rate-limits with 429 and Retry-After for as many calls as asked, then recovers', async () => {
    slack.failNext('chat.postMessage', { retryAfterSeconds: 3, times: 2 });
    const post = () => call('chat.postMessage', { body: JSON.stringify({ channel: 'C1', text: 'x' }), contentType: 'application/json', auth: 'Bearer test-token-1' });

    const [first, second, third] = [await post(), await post(), await post()];

    expect([first.status, first.retryAfter, first.json.error]).toEqual([429, '3', 'ratelimited']);
    expect(second.status).toBe(429);
    expect(third.json.ok).toBe(true);
    expect(slack.posts).toHaveLength(1);
  });

  it('answers an injected error before the call takes effect, unless told to apply the call first (afterEffect)', async () => {
    const api = (method: string, body: Record<string, unknown>) => call(method, { body: JSON.stringify(body), contentType: 'application/json', auth: 'Bearer test-token-1' });
    slack.failNext('chat.postMessage', { status: 500 });
    slack.failNext('chat.postMessage', { status: 502, afterEffect: true });
    slack.failNext('chat.postMessage', { error: 'internal_error', afterEffect: true });

    const before = await api('chat.postMessage', { channel: 'C1', thread_ts: '1.1', text: 'refused' });
    const after5xx = await api('chat.postMessage', { channel: 'C1', thread_ts: '1.1', text: 'landed with a 502' });
    const afterInternal = await api('chat.postMessage', { channel: 'C1', thread_ts: '1.1', text: 'landed with internal_error', metadata: { event_type: 'm', event_payload: { n: 1 } } });

    expect([before.status, before.json]).toEqual([500, { ok: false, error: 'internal_error' }]);
    expect([after5xx.status, after5xx.json]).toEqual([502, { ok: false, error: 'internal_error' }]);
    expect([afterInternal.status, afterInternal.json]).toEqual([200, { ok: false, error: 'internal_error' }]);
    // The two that took effect are in the thread, with their metadata, as Slack would show them.
    expect(slack.posts.map((post) => post.text)).toEqual(['landed with a 502', 'landed with internal_error']);
    const thread = await api('conversations.replies', { channel: 'C1', ts: '1.1', include_all_metadata: true });
    expect(thread.json.messages).toEqual([expect.objectContaining({ text: 'landed with a 502' }), expect.objectContaining({ text: 'landed with internal_error', metadata: { event_type: 'm', event_payload: { n: 1 } } })]);
    expect(slack.requests.map((request) => request.answer)).toEqual([
      expect.not.objectContaining({ applied: expect.anything() }),
      expect.objectContaining({ status: 502, ok: false, applied: { ok: true } }),
      expect.objectContaining({ status: 200, ok: false, error: 'internal_error', applied: { ok: true } }),
      expect.objectContaining({ ok: true }),
    ]);
    expect(slack.injected).toEqual({ http_500: 1, 'http_502 after effect': 1, 'api_error after effect': 1 });
  });

  it('applies a stream call before answering its injected error, and a refused call stays refused (afterEffect)', async () => {
    const api = (method: string, body: Record<string, unknown>) => call(method, { body: JSON.stringify(body), contentType: 'application/json', auth: 'Bearer test-token-1' });
    const started = await api('chat.startStream', { channel: 'D1', thread_ts: '1.1', markdown_text: 'one ' });
    const ts = String(started.json.ts);
    slack.failWhen('chat.appendStream', () => true, { status: 503, afterEffect: true, times: 2 });

    const appended = await api('chat.appendStream', { channel: 'D1', ts, markdown_text: 'two' });
    slack.expireStream(ts);
    const refused = await api('chat.appendStream', { channel: 'D1', ts, markdown_text: 'three' });

    expect(appended.status).toBe(503);
    expect(slack.messageText(ts)).toBe('one two');
    expect(refused.status).toBe(503);
    expect(slack.requests.at(-1)?.answer).toMatchObject({ status: 503, applied: { ok: false, error: 'message_not_in_streaming_state' } });
  });

  it('with afterEffect and a stall, applies the call at once and answers it, late', async () => {
    slack.failNext('chat.postMessage', { stallMs: 300, afterEffect: true });
    const answered = call('chat.postMessage', { body: JSON.stringify({ channel: 'C1', text: 'early' }), contentType: 'application/json', auth: 'Bearer test-token-1' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(slack.posts.map((post) => post.text)).toEqual(['early']);
    expect(slack.requests[0]?.answer).toBeUndefined();
    expect((await answered).json).toMatchObject({ ok: true, ts: slack.posts[0]!.ts });
  });

  it('answers auth.test with the bot user, and reports waitForPosts timeouts clearly', async () => {
    const auth = await call('auth.test', { body: '', contentType: 'application/x-www-form-urlencoded', auth: 'Bearer test-token-1' });
    expect(auth.json).toMatchObject({ ok: true, user_id: slack.botUserId });
    await expect(slack.waitForPosts(1, 50)).rejects.toThrow(/expected 1 post\(s\) within 50 ms, got 0/);
  });

  describe('live replies', () => {
    const api = (method: string, body: Record<string, unknown>) => call(method, { body: JSON.stringify(body), contentType: 'application/json', auth: 'Bearer test-token-1' });
    const form = (method: string, fields: Record<string, string>) => call(method, { body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded', auth: 'Bearer test-token-1' });
    const replies = async (channel: string, ts: string) => (await api('conversations.replies', { channel, ts, include_all_metadata: true })).json.messages as Array<Record<string, unknown>>;

    it('records statuses; a status clears when set to empty or when the bot writes in the thread; more than 10 loading messages are refused', async () => {
      const first = await form('assistant.threads.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'is thinking…', loading_messages: JSON.stringify(['a', 'b']) });
      const tooMany = await api('assistant.threads.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'x', loading_messages: Array.from({ length: 11 }, () => 'm') });
      const noThread = await api('assistant.threads.setStatus', { channel_id: 'D1', status: 'x' });

      expect(first.json).toEqual({ ok: true });
      expect(tooMany.json).toEqual({ ok: false, error: 'invalid_arguments' });
      expect(noThread.json).toEqual({ ok: false, error: 'invalid_thread_ts' });
      expect(slack.statuses).toEqual([{ channel: 'D1', thread_ts: '1.1', status: 'is thinking…', loading_messages: ['a', 'b'] }]);
      expect(slack.statusOf('D1', '1.1')).toBe('is thinking…');

      await api('chat.postMessage', { channel: 'D1', thread_ts: '1.1', text: 'an answer' });
      expect(slack.statusOf('D1', '1.1')).toBeUndefined();
      await api('assistant.threads.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'again' });
      await api('assistant.threads.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: '' });
      expect(slack.statusOf('D1', '1.1')).toBeUndefined();
    });

    it('refuses a status like a non-assistant thread when told to, for as long as told', async () => {
      slack.failWhen('assistant.threads.setStatus', (body) => String(body.channel_id).startsWith('C'), { error: 'not_allowed_token_type', times: Infinity });

      const refused = [await api('assistant.threads.setStatus', { channel_id: 'C1', thread_ts: '1.1', status: 'x' }), await api('assistant.threads.setStatus', { channel_id: 'C2', thread_ts: '1.1', status: 'x' })];
      const accepted = await api('assistant.threads.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'x' });

      expect(refused.map((r) => r.json)).toEqual([{ ok: false, error: 'not_allowed_token_type' }, { ok: false, error: 'not_allowed_token_type' }]);
      expect(accepted.json.ok).toBe(true);
      expect(slack.statuses.map((s) => s.channel)).toEqual(['D1']);
    });

    it('starts a stream in a DM without a recipient, but outside a DM only with both recipient ids', async () => {
      const dm = await api('chat.startStream', { channel: 'D1', thread_ts: '1.1', markdown_text: 'hi' });
      const noTeam = await api('chat.startStream', { channel: 'C1', thread_ts: '1.1', recipient_user_id: 'U1' });
      const noUser = await api('chat.startStream', { channel: 'G1', thread_ts: '1.1', recipient_team_id: 'T1' });
      const noThread = await api('chat.startStream', { channel: 'D1' });
      const both = await api('chat.startStream', { channel: 'C1', thread_ts: '1.1', recipient_user_id: 'U1', recipient_team_id: 'T1' });

      expect(dm.json).toEqual({ ok: true, channel: 'D1', ts: expect.any(String) });
      expect(noTeam.json).toEqual({ ok: false, error: 'missing_recipient_team_id' });
      expect(noUser.json).toEqual({ ok: false, error: 'missing_recipient_user_id' });
      expect(noThread.json).toEqual({ ok: false, error: 'invalid_arguments' });
      expect(both.json.ok).toBe(true);
      expect(slack.streams.map((s) => [s.channel, s.text, s.state, s.recipient_user_id])).toEqual([
        ['D1', 'hi', 'streaming', undefined],
        ['C1', '', 'streaming', 'U1'],
      ]);
      expect(slack.posts).toEqual([]);
    });

    it('appends and stops a stream, with chunks and metadata, shows it in conversations.replies, and refuses it once stopped or expired', async () => {
      const parent = slack.addMessage({ channel: 'D1', user: 'U1', text: 'question' });
      const { ts } = (await api('chat.startStream', { channel: 'D1', thread_ts: parent, chunks: [{ type: 'task_update', id: 't', title: 'Working', status: 'in_progress' }] })).json as { ts: string };
      await form('chat.appendStream', { channel: 'D1', ts, markdown_text: 'The answer' });
      await form('chat.appendStream', { channel: 'D1', ts, chunks: JSON.stringify([{ type: 'markdown_text', text: ' is 42' }]) });
      expect((await replies('D1', parent)).map((m) => m.text)).toEqual(['question', 'The answer is 42']);

      const metadata = { event_type: 'reply', event_payload: { request_id: 'r', chunk: 0 } };
      const stop = await form('chat.stopStream', { channel: 'D1', ts, markdown_text: '.', metadata: JSON.stringify(metadata) });
      const appendAfterStop = await api('chat.appendStream', { channel: 'D1', ts, markdown_text: 'late' });
      const stopAfterStop = await api('chat.stopStream', { channel: 'D1', ts });

      expect(stop.json).toMatchObject({ ok: true, channel: 'D1', ts });
      expect(appendAfterStop.json).toEqual({ ok: false, error: 'message_not_in_streaming_state' });
      expect(stopAfterStop.json).toEqual({ ok: false, error: 'message_not_in_streaming_state' });
      expect(slack.streams[0]).toMatchObject({ state: 'stopped', text: 'The answer is 42.', appends: ['The answer', ' is 42'], tasks: [expect.objectContaining({ type: 'task_update', id: 't' })] });
      expect(slack.messageText(ts)).toBe('The answer is 42.');
      expect((await replies('D1', parent))[1]).toMatchObject({ ts, thread_ts: parent, user: slack.botUserId, text: 'The answer is 42.', metadata });

      const other = (await api('chat.startStream', { channel: 'D1', thread_ts: parent })).json.ts as string;
      slack.expireStream(other);
      expect((await api('chat.appendStream', { channel: 'D1', ts: other, markdown_text: 'x' })).json).toEqual({ ok: false, error: 'message_not_in_streaming_state' });
      expect(slack.streams[1]?.state).toBe('expired');
      expect(() => slack.expireStream('9.9')).toThrow(/no stream/);
    });

    it('draws task_update chunks as cards (one per id, latest state) and plan_update as the title; refuses malformed chunks and display modes as Slack does', async () => {
      const { ts } = (await api('chat.startStream', { channel: 'D1', thread_ts: '1.1', task_display_mode: 'plan', chunks: [{ type: 'plan_update', title: 'Plan' }, { type: 'task_update', id: 'a', title: 'A', status: 'in_progress' }] })).json as { ts: string };
      await api('chat.appendStream', { channel: 'D1', ts, chunks: [{ type: 'task_update', id: 'b', title: 'B', status: 'pending' }, { type: 'task_update', id: 'a', title: 'A', status: 'complete' }] });
      expect(slack.streams[0]).toMatchObject({ task_display_mode: 'plan', plan_title: 'Plan', cards: [{ id: 'a', title: 'A', status: 'complete' }, { id: 'b', title: 'B', status: 'pending' }] });

      const refused = [
        [{ type: 'task_update', id: 'a', title: 'A', status: 'done' }],
        [{ type: 'task_update', title: 'A', status: 'complete' }],
        [{ type: 'task_update', id: 'a', title: 'A', status: 'complete', sources: [{ url: 'https://x.example' }] }],
        [{ type: 'plan_update' }],
        [{ type: 'mystery' }],
      ];
      for (const chunks of refused) expect((await api('chat.appendStream', { channel: 'D1', ts, chunks })).json).toEqual({ ok: false, error: 'invalid_chunks' });
      expect((await api('chat.startStream', { channel: 'D1', thread_ts: '1.1', task_display_mode: 'grid' })).json).toEqual({ ok: false, error: 'invalid_arguments' });
      expect(slack.streams[0]!.cards).toHaveLength(2);
    });

    it('refuses more than 12,000 characters of markdown in one call, an append without content, and a message that is not a stream', async () => {
      const { ts } = (await api('chat.startStream', { channel: 'D1', thread_ts: '1.1' })).json as { ts: string };
      const posted = (await api('chat.postMessage', { channel: 'D1', thread_ts: '1.1', text: 'a post' })).json.ts as string;

      expect((await api('chat.appendStream', { channel: 'D1', ts, markdown_text: 'x'.repeat(12_001) })).json).toEqual({ ok: false, error: 'msg_too_long' });
      expect((await api('chat.startStream', { channel: 'D1', thread_ts: '1.1', markdown_text: 'x'.repeat(12_001) })).json).toEqual({ ok: false, error: 'msg_too_long' });
      expect((await api('chat.appendStream', { channel: 'D1', ts })).json).toEqual({ ok: false, error: 'invalid_arguments' });
      expect((await api('chat.appendStream', { channel: 'D1', ts: posted, markdown_text: 'x' })).json).toEqual({ ok: false, error: 'message_not_in_streaming_state' });
      expect((await api('chat.appendStream', { channel: 'D1', ts: '9.9', markdown_text: 'x' })).json).toEqual({ ok: false, error: 'message_not_found' });
      expect((await api('chat.appendStream', { channel: 'D1', ts, markdown_text: 'x'.repeat(12_000) })).json.ok).toBe(true);
    });

    it('updates the bot’s messages, keeping their metadata unless replaced, and refuses others’', async () => {
      const parent = slack.addMessage({ channel: 'C1', user: 'U1', text: 'question' });
      const metadata = { event_type: 'reply', event_payload: { request_id: 'r', chunk: 0 } };
      const posted = (await api('chat.postMessage', { channel: 'C1', thread_ts: parent, text: 'Working…', metadata })).json.ts as string;

      const update = await form('chat.update', { channel: 'C1', ts: posted, text: 'Done' });
      expect(update.json).toMatchObject({ ok: true, channel: 'C1', ts: posted, text: 'Done' });
      expect(slack.messageText(posted)).toBe('Done');
      expect(slack.posts.map((p) => p.text)).toEqual(['Working…']);
      expect(slack.updates).toEqual([{ channel: 'C1', ts: posted, text: 'Done' }]);
      expect((await replies('C1', parent))[1]).toMatchObject({ text: 'Done', metadata });

      const replaced = { event_type: 'reply', event_payload: { request_id: 'r', chunk: 1 } };
      await api('chat.update', { channel: 'C1', ts: posted, text: 'Done again', metadata: replaced });
      expect((await replies('C1', parent))[1]).toMatchObject({ text: 'Done again', metadata: replaced });

      expect((await api('chat.update', { channel: 'C1', ts: parent, text: 'x' })).json).toEqual({ ok: false, error: 'cant_update_message' });
      expect((await api('chat.update', { channel: 'C1', ts: '9.9', text: 'x' })).json).toEqual({ ok: false, error: 'message_not_found' });
      expect((await api('chat.update', { channel: 'C2', ts: posted, text: 'x' })).json).toEqual({ ok: false, error: 'message_not_found' });
      expect((await api('chat.update', { channel: 'C1', ts: posted })).json).toEqual({ ok: false, error: 'no_text' });
      expect((await api('chat.update', { channel: 'C1', ts: posted, text: 'x'.repeat(40_001) })).json).toEqual({ ok: false, error: 'msg_too_long' });
    });

    it('waits for streams to start or stop, and forgets them on reset', async () => {
      const started = slack.waitForStreams(1);
      const stopped = slack.waitForStreams(1, { stopped: true });
      const { ts } = (await api('chat.startStream', { channel: 'D1', thread_ts: '1.1' })).json as { ts: string };
      await expect(started).resolves.toHaveLength(1);
      await api('chat.stopStream', { channel: 'D1', ts });
      await expect(stopped).resolves.toEqual([expect.objectContaining({ ts, state: 'stopped' })]);
      await expect(slack.waitForStreams(2, { timeoutMs: 50 })).rejects.toThrow(/expected 2 stream\(s\) within 50 ms, got 1/);

      await api('assistant.threads.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'x' });
      slack.reset();
      expect([slack.streams, slack.statuses, slack.updates, slack.statusOf('D1', '1.1'), slack.messageText(ts)]).toEqual([[], [], [], undefined, undefined]);
    });
  });

  describe('agent surface', () => {
    const api = (method: string, body: Record<string, unknown>) => call(method, { body: JSON.stringify(body), contentType: 'application/json', auth: 'Bearer test-token-1' });
    // As @slack/web-api sends them: a form, arrays and objects as JSON inside it.
    const form = (method: string, fields: Record<string, string>) => call(method, { body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded', auth: 'Bearer test-token-1' });

    it('creates a session with the first status (title and initiator count only then), keeps its status history, and refuses what Slack refuses', async () => {
      const created = await form('agents.sessions.setStatus', { channel_id: 'C1', thread_ts: '1.1', status: 'processing', title: 'What is the capital of France?', initiator_user_id: 'U1' });
      await form('agents.sessions.setStatus', { channel_id: 'C1', thread_ts: '1.1', status: 'active', title: 'another title', initiator_user_id: 'U2' });
      const refused = [
        await api('agents.sessions.setStatus', { channel_id: 'C1', thread_ts: '1.1', status: 'thinking' }),
        await api('agents.sessions.setStatus', { channel_id: 'C1', thread_ts: '1.1' }),
        await api('agents.sessions.setStatus', { channel_id: 'C1', status: 'active' }),
        await api('agents.sessions.setStatus', { thread_ts: '1.1', status: 'active' }),
        await api('agents.sessions.setStatus', { channel_id: 'C1', thread_ts: '2.2', status: 'active', title: 'x'.repeat(201) }),
      ];

      expect(created.json).toEqual({ ok: true, status: 'processing', title: 'What is the capital of France?' });
      expect(refused.map((r) => [r.status, r.json])).toEqual([
        [200, { ok: false, error: 'invalid_arguments' }],
        [200, { ok: false, error: 'invalid_arguments' }],
        [200, { ok: false, error: 'invalid_arguments' }],
        [200, { ok: false, error: 'channel_not_found' }],
        [200, { ok: false, error: 'invalid_arguments' }],
      ]);
      expect(slack.sessions).toEqual([{ channel: 'C1', thread_ts: '1.1', status: 'active', history: ['processing', 'active'], title: 'What is the capital of France?', initiator_user_id: 'U1' }]);
      expect(slack.sessionOf('C1', '2.2')).toBeUndefined();
    });

    it('renames a session that exists, and only within 1–200 characters', async () => {
      await api('agents.sessions.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'processing', title: 'first' });

      const renamed = await form('agents.sessions.rename', { channel_id: 'D1', thread_ts: '1.1', title: 'second' });
      const tooLong = await api('agents.sessions.rename', { channel_id: 'D1', thread_ts: '1.1', title: 'x'.repeat(201) });
      const empty = await api('agents.sessions.rename', { channel_id: 'D1', thread_ts: '1.1', title: '' });
      const none = await api('agents.sessions.rename', { channel_id: 'D1', thread_ts: '9.9', title: 'x' });

      expect(renamed.json).toEqual({ ok: true, title: 'second' });
      expect([tooLong.json, empty.json, none.json]).toEqual([
        { ok: false, error: 'invalid_arguments' },
        { ok: false, error: 'invalid_arguments' },
        { ok: false, error: 'session_not_found' },
      ]);
      expect(slack.sessionOf('D1', '1.1')).toMatchObject({ title: 'second', status: 'processing', history: ['processing'] });
    });

    it('stops a stream with blocks and a session status, which moves the thread’s session; a status Slack does not know refuses the stop', async () => {
      await api('agents.sessions.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'processing' });
      const { ts } = (await api('chat.startStream', { channel: 'D1', thread_ts: '1.1', markdown_text: 'the answer' })).json as { ts: string };
      const blocks = [{ type: 'context_actions', elements: [{ type: 'feedback_buttons', action_id: 'a' }] }];

      const badStatus = await form('chat.stopStream', { channel: 'D1', ts, session_status: 'finished' });
      const badBlocks = await form('chat.stopStream', { channel: 'D1', ts, blocks: JSON.stringify([{ text: 'no type' }]) });
      expect([badStatus.json, badBlocks.json]).toEqual([
        { ok: false, error: 'invalid_arguments' },
        { ok: false, error: 'invalid_blocks' },
      ]);
      expect(slack.streams[0]?.state).toBe('streaming');

      const stopped = await form('chat.stopStream', { channel: 'D1', ts, blocks: JSON.stringify(blocks), session_status: 'active' });
      expect(stopped.json.ok).toBe(true);
      expect(slack.streams[0]).toMatchObject({ state: 'stopped', text: 'the answer', blocks });
      expect(slack.messageBlocks(ts)).toEqual(blocks);
      expect(slack.sessionOf('D1', '1.1')).toMatchObject({ status: 'active', history: ['processing', 'active'] });
    });

    it('keeps the blocks of posts and updates: an update without blocks keeps them, an empty list removes them, a malformed list is refused', async () => {
      const blocks = [{ type: 'markdown', text: 'hello' }, { type: 'context_actions', elements: [] }];
      const ts = (await form('chat.postMessage', { channel: 'C1', thread_ts: '1.1', text: 'hello', blocks: JSON.stringify(blocks) })).json.ts as string;
      expect(slack.posts).toEqual([{ channel: 'C1', thread_ts: '1.1', text: 'hello', ts, blocks }]);

      await api('chat.update', { channel: 'C1', ts, text: 'hello again' });
      expect(slack.messageBlocks(ts)).toEqual(blocks);
      const replaced = [{ type: 'markdown', text: 'bye' }];
      await form('chat.update', { channel: 'C1', ts, text: 'bye', blocks: JSON.stringify(replaced) });
      expect(slack.updates.map((update) => update.blocks)).toEqual([undefined, replaced]);
      expect(slack.messageBlocks(ts)).toEqual(replaced);
      await api('chat.update', { channel: 'C1', ts, text: 'plain', blocks: [] });
      expect(slack.messageBlocks(ts)).toBeUndefined();

      expect((await form('chat.postMessage', { channel: 'C1', text: 'x', blocks: '{not json' })).json).toEqual({ ok: false, error: 'invalid_blocks' });
      expect((await api('chat.update', { channel: 'C1', ts, text: 'x', blocks: { type: 'markdown' } })).json).toEqual({ ok: false, error: 'invalid_blocks' });
    });

    it('refuses buttons Slack refuses: none, a label too long, an action_id twice in a block, a value over 2000 characters', async () => {
      const button = (over: Record<string, unknown> = {}) => ({ type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'Approve' }, value: 'v', ...over });
      const post = async (elements: unknown[]) => (await api('chat.postMessage', { channel: 'C1', text: 'Go?', blocks: [{ type: 'actions', elements }] })).json;
      expect(await post([button(), button({ action_id: 'b' })])).toMatchObject({ ok: true });
      for (const broken of [[], [button({ text: { type: 'plain_text', text: 'x'.repeat(76) } })], [button(), button()], [button({ value: 'v'.repeat(2001) })], [button({ text: { type: 'mrkdwn', text: '*Go*' } })]]) {
        expect(await post(broken)).toEqual({ ok: false, error: 'invalid_blocks' });
      }
    });

    it('shows Stop only on a processing session; pressing it stops the app’s streams in that thread and says which', async () => {
      expect(() => slack.pressStop('C1', '1.1', 'U1')).toThrow(/no Stop button.*not there/);
      await api('agents.sessions.setStatus', { channel_id: 'C1', thread_ts: '1.1', status: 'processing' });
      const start = async (threadTs: string) => ((await api('chat.startStream', { channel: 'C1', thread_ts: threadTs, recipient_user_id: 'U1', recipient_team_id: 'T1' })).json as { ts: string }).ts;
      const [mine, finished, elsewhere] = [await start('1.1'), await start('1.1'), await start('2.2')];
      await api('chat.stopStream', { channel: 'C1', ts: finished });

      const event = slack.pressStop('C1', '1.1', 'U1');

      expect(event).toEqual({ type: 'agent_session_stopped', channel: 'C1', thread_ts: '1.1', user: 'U1', event_ts: expect.stringMatching(/^\d+\.\d{6}$/), streaming_message_ts: [mine] });
      expect(slack.streams.map((stream) => [stream.ts, stream.state])).toEqual([
        [mine, 'stopped'],
        [finished, 'stopped'],
        [elsewhere, 'streaming'],
      ]);
      expect((await api('chat.appendStream', { channel: 'C1', ts: mine, markdown_text: 'late' })).json).toEqual({ ok: false, error: 'message_not_in_streaming_state' });
      // The app moves the session out of processing itself; until then the button stays.
      expect(slack.sessionOf('C1', '1.1')?.status).toBe('processing');
      await api('agents.sessions.setStatus', { channel_id: 'C1', thread_ts: '1.1', status: 'active' });
      expect(() => slack.pressStop('C1', '1.1', 'U1')).toThrow(/its session is active/);
    });

    it('records up to 4 suggested prompts; with a thread_ts answers ok but drops them, as Slack does for agent apps', async () => {
      const prompt = (n: number) => ({ title: `Prompt ${n}`, message: `Say ${n}` });
      const inDm = await form('assistant.threads.setSuggestedPrompts', { channel_id: 'D1', title: 'Try', prompts: JSON.stringify([prompt(1), prompt(2), prompt(3), prompt(4)]) });
      const inThread = await api('assistant.threads.setSuggestedPrompts', { channel_id: 'D1', thread_ts: '1.1', prompts: [prompt(1)] });
      const refused = [
        await api('assistant.threads.setSuggestedPrompts', { channel_id: 'D1', prompts: [1, 2, 3, 4, 5].map(prompt) }),
        await api('assistant.threads.setSuggestedPrompts', { channel_id: 'D1', prompts: [] }),
        await api('assistant.threads.setSuggestedPrompts', { channel_id: 'D1', prompts: [{ title: 'no message' }] }),
        await api('assistant.threads.setSuggestedPrompts', { prompts: [prompt(1)] }),
      ];

      expect([inDm.json, inThread.json]).toEqual([{ ok: true }, { ok: true }]);
      expect(refused.map((r) => r.json.error)).toEqual(['invalid_arguments', 'invalid_arguments', 'invalid_arguments', 'channel_not_found']);
      expect(slack.prompts).toEqual([
        { channel: 'D1', title: 'Try', prompts: [prompt(1), prompt(2), prompt(3), prompt(4)], dropped: false },
        { channel: 'D1', thread_ts: '1.1', prompts: [prompt(1)], dropped: true },
      ]);
    });

    it('records ephemeral messages for one user', async () => {
      const sent = await form('chat.postEphemeral', { channel: 'C1', user: 'U1', text: 'Thanks!', thread_ts: '1.1' });
      const noUser = await api('chat.postEphemeral', { channel: 'C1', text: 'x' });
      const noText = await api('chat.postEphemeral', { channel: 'C1', user: 'U1' });

      expect(sent.json).toEqual({ ok: true, message_ts: expect.any(String) });
      expect([noUser.json, noText.json]).toEqual([
        { ok: false, error: 'user_not_found' },
        { ok: false, error: 'no_text' },
      ]);
      expect(slack.ephemerals).toEqual([{ channel: 'C1', user: 'U1', text: 'Thanks!', thread_ts: '1.1', message_ts: sent.json.message_ts }]);
      expect(slack.posts).toEqual([]);
    });

    it('opens a modal with a trigger Slack issued less than 3 s ago, once; refuses an old, a reused and an unknown one', async () => {
      const view = { type: 'modal', callback_id: 'form', title: { type: 'plain_text', text: 'Form' }, blocks: [] };
      const fresh = slack.mintTrigger();
      const old = slack.mintTrigger({ issuedAt: Date.now() - 3001 });

      const opened = await form('views.open', { trigger_id: fresh, view: JSON.stringify(view) });
      const reused = await form('views.open', { trigger_id: fresh, view: JSON.stringify(view) });
      const expired = await api('views.open', { trigger_id: old, view });
      const unknown = await api('views.open', { trigger_id: '123.456.never-issued', view });
      const noView = await api('views.open', { trigger_id: slack.mintTrigger() });

      expect(opened.json).toEqual({ ok: true, view: { id: expect.stringMatching(/^V/), ...view } });
      expect([reused.json, expired.json, unknown.json, noView.json]).toEqual([
        { ok: false, error: 'exchanged_trigger_id' },
        { ok: false, error: 'expired_trigger_id' },
        { ok: false, error: 'invalid_trigger_id' },
        { ok: false, error: 'invalid_arguments' },
      ]);
      expect(slack.views).toEqual([{ id: (opened.json.view as { id: string }).id, trigger_id: fresh, view }]);
    });

    it('injects failures into the new methods as into the others, and forgets everything on reset', async () => {
      slack.failNext('agents.sessions.setStatus', { error: 'ratelimited', retryAfterSeconds: 1 });
      slack.failWhen('views.open', () => true, { error: 'internal_error' });
      const limited = await api('agents.sessions.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'processing' });
      const failed = await api('views.open', { trigger_id: slack.mintTrigger(), view: { type: 'modal' } });
      expect([limited.status, limited.retryAfter, limited.json]).toEqual([429, '1', { ok: false, error: 'ratelimited' }]);
      expect(failed.json).toEqual({ ok: false, error: 'internal_error' });
      expect([slack.sessions, slack.views]).toEqual([[], []]);

      const trigger = slack.mintTrigger();
      await api('agents.sessions.setStatus', { channel_id: 'D1', thread_ts: '1.1', status: 'processing' });
      await api('assistant.threads.setSuggestedPrompts', { channel_id: 'D1', prompts: [{ title: 'a', message: 'b' }] });
      await api('chat.postEphemeral', { channel: 'D1', user: 'U1', text: 'x' });
      slack.reset();
      expect([slack.sessions, slack.prompts, slack.ephemerals, slack.views]).toEqual([[], [], [], []]);
      expect((await api('views.open', { trigger_id: trigger, view: { type: 'modal' } })).json).toEqual({ ok: false, error: 'invalid_trigger_id' });
    });
  });
});
