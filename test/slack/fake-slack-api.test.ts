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
});
