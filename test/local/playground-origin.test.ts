import { request } from 'node:http';
import { sayCommand } from '../../src/cli/say';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { eventually } from '../support/http';

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** Real HTTP with exactly the headers given (fetch would not let a test set Host). */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const corsHeaders = (answer: Answer) => Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'));

describe('the playground refuses other origins; the CLI and Slack ingress keep working', () => {
  let stack: LocalStack;
  let base: string;
  let port: string;
  const say = JSON.stringify({ text: 'from somewhere else' });

  beforeAll(async () => {
    stack = await startLocalStack({
      env: { POWERTOOLS_LOG_LEVEL: 'SILENT', TRANSPORT: 'in-process', SYNC_BUDGET_MS: '200' },
      verificationPort: 0,
      executionPort: 0,
      timeScale: 0.1,
      replyWriter: () => undefined,
    });
    base = stack.playgroundUrl.replace(/\/$/, '');
    port = new URL(base).port;
  });
  afterAll(() => stack.stop());

  it.each([
    ['no browser headers (curl)', {}],
    ['its own origin', { origin: 'http://127.0.0.1:PORT', 'sec-fetch-site': 'same-origin' }],
    ['its own origin under the name localhost', { host: 'localhost:PORT', origin: 'http://localhost:PORT', 'sec-fetch-site': 'same-origin' }],
    ['the address bar (Sec-Fetch-Site: none)', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' }],
  ])('answers /api/state for %s', async (_name, headers) => {
    const answer = await send(`${base}/api/state`, { headers: withPort(headers) });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toHaveProperty('requests');
    expect(corsHeaders(answer)).toEqual([]);
  });

  it.each([
    ['another origin', { origin: 'https://evil.example' }],
    ['another port on the same host', { origin: 'http://127.0.0.1:1' }],
    ['an opaque origin (sandboxed frame, file://)', { origin: 'null' }],
    ['https on its own host', { origin: 'https://127.0.0.1:PORT' }],
    ['a cross-site request without Origin (no-cors GET)', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }],
    ['a same-site request from another port', { 'sec-fetch-site': 'same-site' }],
    ['a DNS-rebound name (Host is not this playground)', { host: 'rebind.evil.example:PORT' }],
    ['a DNS-rebound page (Host and Origin agree, neither is this playground)', { host: 'rebind.evil.example:PORT', origin: 'http://rebind.evil.example:PORT', 'sec-fetch-site': 'same-origin' }],
    ['another port in Host', { host: '127.0.0.1:1' }],
  ])('refuses POST /api/say, GET /api/state, GET /api/events/…, the agent surface\'s routes and GET /api/feedback from %s, with 403 and no CORS headers', async (_name, headers) => {
    const before = stack.traces.all().length;
    const post = (path: string, body: unknown) => send(`${base}${path}`, { method: 'POST', headers: { ...withPort(headers), 'content-type': 'text/plain' }, body: JSON.stringify(body) });
    const answers = [
      await send(`${base}/api/say`, { method: 'POST', headers: { ...withPort(headers), 'content-type': 'text/plain' }, body: say }),
      await send(`${base}/api/state`, { headers: withPort(headers) }),
      await send(`${base}/api/events/Ev0000`, { headers: withPort(headers) }),
      await send(`${base}/api/say`, { method: 'OPTIONS', headers: { ...withPort(headers), 'access-control-request-method': 'POST' } }),
      await post('/api/stop', { thread_ts: '1.000001' }),
      await post('/api/open', {}),
      await post('/api/feedback/click', { message_ts: '1.000002', value: 'positive' }),
      await post('/api/feedback/form', { trigger_id: 'x', text: 'x' }),
      await send(`${base}/api/feedback`, { headers: withPort(headers) }),
      await send(`${base}/api/stops/Ev0000`, { headers: withPort(headers) }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(403);
      expect(corsHeaders(answer)).toEqual([]);
      expect(answer.text).not.toContain('requests');
    }
    // Nothing was said on its behalf.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stack.traces.all().length).toBe(before);
  });

  it('serves its page to a top-level navigation from anywhere, never into a frame', async () => {
    const page = await send(`${base}/`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' } });
    expect(page.status).toBe(200);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['content-security-policy']).toBe("frame-ancestors 'none'");

    const framed = await send(`${base}/`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' } });
    expect(framed.status).toBe(403);
    const rebound = await send(`${base}/`, { headers: { host: `rebind.evil.example:${port}` } });
    expect(rebound.status).toBe(403);
  });

  it('the page’s own POST /api/say (Origin is the playground) is answered and goes through', async () => {
    const answer = await send(`${base}/api/say`, {
      method: 'POST',
      headers: { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'from the page' }),
    });
    expect(answer.status).toBe(200);
    const { event_id } = JSON.parse(answer.text) as { event_id: string };
    await eventually(() => stack.traces.byEventId(event_id)?.events.find((event) => event.hop === 'reply-posted'), 10_000);
  });

  it('the agent surface\'s routes answer the page and the CLI, and say what is wrong with a request', async () => {
    const own = { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' };
    const feedback = await send(`${base}/api/feedback`);
    expect(feedback.status).toBe(200);
    expect(JSON.parse(feedback.text)).toEqual({ feedback: [] });
    const stop = await send(`${base}/api/stop`, { method: 'POST', headers: own, body: JSON.stringify({ thread_ts: '1.000001' }) });
    expect(stop.status).toBe(200);
    const { event_id } = JSON.parse(stop.text) as { event_id: string };
    const followed = await eventually(async () => {
      const answer = await send(`${base}/api/stops/${event_id}`);
      const found = JSON.parse(answer.text) as { state?: string };
      return found.state === 'nothing-running' ? found : undefined;
    }, 10_000);
    expect(followed).toEqual({ event_id, channel: 'CLOCAL', thread_ts: '1.000001', state: 'nothing-running' });
    for (const [path, body, error] of [
      ['/api/stop', {}, 'thread_ts is required'],
      ['/api/feedback/click', { message_ts: '1.000002', value: 'meh' }, 'value must be positive or negative'],
      ['/api/feedback/click', { message_ts: '1.000002', value: 'positive' }, 'no answer with feedback buttons has ts 1.000002'],
      ['/api/feedback/form', { trigger_id: 'nope', text: 'x' }, 'no form was opened for that trigger'],
    ] as const) {
      const answer = await send(`${base}${path}`, { method: 'POST', headers: own, body: JSON.stringify(body) });
      expect([answer.status, JSON.parse(answer.text)]).toEqual([400, { error }]);
    }
    expect((await send(`${base}/api/stops/Ev0000`)).status).toBe(404);
  });

  it('leaves the Slack ingress alone: Slack posts with no browser headers and any Host, and the signature decides', async () => {
    const { body } = appMentionEnvelope({ text: 'hello from slack' });
    const foreign = { host: 'abc123.execute-api.us-east-1.amazonaws.com', 'content-type': 'application/json' };
    const signed = await send(stack.ingressUrl, { method: 'POST', headers: { ...foreign, ...slackSignatureHeaders(stack.signingSecret, body) }, body });
    expect(signed.status).toBe(200);
    const unsigned = await send(stack.ingressUrl, { method: 'POST', headers: { ...foreign, origin: 'https://evil.example' }, body });
    expect(unsigned.status).toBe(401);
  });

  it('`zone say` posts to the ingress and follows its trace on /api/events/… to the reply', async () => {
    const output: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(String(chunk));
      return true;
    });
    let code: number;
    try {
      code = await sayCommand.run(['--url', stack.ingressUrl, '--secret', stack.signingSecret, '--wait', '10', 'hello from the cli']);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(0);
    const text = output.join('');
    expect(text).toMatch(/HTTP 200/);
    expect(text).toMatch(/reply-posted/);
    expect(text).toContain('echo: hello from the cli');
  });

  /** PORT in a header value stands for the playground's port. */
  function withPort(headers: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value.replace('PORT', port)]));
  }
});
