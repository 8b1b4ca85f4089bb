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
});
