import { httpsTransport } from '../support/transports';
import { createServer, type Server } from 'node:http';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionHttpServer, readBody } from '../../src/execution/hosts/http-host';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { createSlackWebClient, WebApiSlackReplies } from '../../src/slack/slack-replies';
import { staticSecret } from '../../src/secrets/secret-source';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import type { TraceEvent } from '../../src/verification/trace';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { FAKE_BOT_TOKEN, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { closeServer, eventually, listenOnLoopback } from '../support/http';
import type { AddressInfo } from 'node:net';

/**
 * The verification zone's four functions wired with in-memory queues, a real execution runtime
 * on loopback reached over the https transport, and replies posted through the real
 * @slack/web-api client to a fake Slack Web API on loopback. Queue delays and visibility timeouts
 * run at 1/200 of real time.
 */
const SIGNING_SECRET = 'integration-signing-secret-0123456789';
const TIME_SCALE = 0.005;

type Harness = {
  pipeline: LocalPipeline;
  slack: FakeSlackApi;
  runtime: ExecutionRuntime;
  /** Every hop of every request, as the playground's trace shows them. */
  hops: TraceEvent[];
  hopsOf(requestId: string): TraceEvent[];
  port: number;
  stopRuntime(): Promise<void>;
  startRuntime(): Promise<void>;
  send(text: string, options?: { threadTs?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; ts: string; body: string; eventId: string }>;
  /** The request id the ingress gave the event (from its `ingress` hop). */
  requestIdOf(eventId: string): string;
  close(): Promise<void>;
};

const logLines: string[] = [];

type HarnessOptions = {
  /** Sent by the https transport as `Authorization: Bearer <token>`. */
  bearerToken?: string;
  /** Where the transport sends execute_task, given the runtime's URL (e.g. a gateway in front of it). */
  executionUrl?: (runtimeUrl: string) => string;
  /** The Slack client's per-attempt HTTP timeout. */
  slackTimeoutMs?: number;
};

async function startHarness(pipelineEnv: Record<string, string> = {}, runtimeEnv: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const slack = await startFakeSlackApi();
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '100', ...runtimeEnv }), log: createLogger('execution') });
  let server: Server | undefined;
  let port = 0;
  const startRuntime = async () => {
    server = createExecutionHttpServer(runtime);
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  const stopRuntime = async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  };
  await startRuntime();
  const log = createLogger('verification');
  const runtimeUrl = `http://127.0.0.1:${port}/invocations`;
  const transport = httpsTransport({
    url: options.executionUrl?.(runtimeUrl) ?? runtimeUrl,
    baseDelayMs: 5,
    maxDelayMs: 20,
    timeoutMs: 5000,
    log,
    ...(options.bearerToken ? { auth: { kind: 'bearer' as const, token: staticSecret(options.bearerToken) } } : {}),
  });
  // Tasks are polled here, never held as streams (test/integration/held-streams.test.ts holds them).
  const agent = new ExecutionAgent('default', createProtocol('execute-task'), transport, { streamHoldMs: 0 });
  // The Slack client's own warnings and errors go to the log, as in the Lambda functions.
  const replies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl, log, ...(options.slackTimeoutMs ? { timeoutMs: options.slackTimeoutMs } : {}) }));
  const hops: TraceEvent[] = [];
  const pipeline = createLocalPipeline({
    agent,
    slack: replies,
    signingSecret: SIGNING_SECRET,
    timeScale: TIME_SCALE,
    env: { POLL_FIRST_DELAY_S: '1', POLL_MAX_DELAY_S: '4', ...pipelineEnv },
    log,
    trace: (event) => hops.push(event),
  });
  return {
    pipeline,
    slack,
    runtime,
    hops,
    hopsOf: (requestId) => hops.filter((hop) => hop.requestId === requestId),
    requestIdOf(eventId) {
      const ingress = hops.find((hop) => hop.hop === 'ingress' && hop.detail?.event_id === eventId);
      if (!ingress) throw new Error(`no ingress hop for ${eventId}`);
      return ingress.requestId;
    },
    get port() {
      return port;
    },
    startRuntime,
    stopRuntime,
    async send(text, options = {}) {
      const { body, ts, eventId } = appMentionEnvelope({ text, threadTs: options.threadTs });
      const sent = options.body ?? body;
      const response = await pipeline.ingress({ headers: { ...slackSignatureHeaders(SIGNING_SECRET, sent), ...options.headers }, body: sent });
      return { status: response.statusCode, ts, body: sent, eventId };
    },
    async close() {
      await pipeline.stop();
      await stopRuntime();
      await slack.close();
    },
  };
}

let restoreWrites: () => void;
beforeAll(() => {
  // Every log line of these scenarios is kept, at DEBUG, to prove no secret is ever written.
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
  const originals = [process.stdout.write, process.stderr.write] as const;
  const capture = (chunk: string | Uint8Array) => {
    logLines.push(String(chunk));
    return true;
  };
  process.stdout.write = capture as typeof process.stdout.write;
  process.stderr.write = capture as typeof process.stderr.write;
  restoreWrites = () => {
    process.stdout.write = originals[0];
    process.stderr.write = originals[1];
  };
});
afterAll(() => {
  restoreWrites();
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

describe('pipeline: Slack event in, exactly one reply out', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  beforeEach(() => h.slack.reset());

  it('answers a quick task synchronously, in the thread of the mention', async () => {
    const { status, ts } = await h.send('hello there');
    expect(status).toBe(200);
    const [post] = await h.slack.waitForPosts(1);
    expect(post).toMatchObject({ channel: 'CLOCAL', thread_ts: ts, text: 'echo: hello there' });
    await h.pipeline.whenIdle();
    expect(h.slack.posts).toHaveLength(1);
  });

  it('tells the agent who is asking: the verified slack:<team>:<user> (docs/contract.md, "Who is asking")', async () => {
    await h.send('who asks? #asker');
    const [post] = await h.slack.waitForPosts(1);
    expect(post).toMatchObject({ text: 'echo: who asks? #asker\nasker: slack:TLOCAL:ULOCALUSER' });
  });

  it('replies inside an existing thread when the mention is in one', async () => {
    h.slack.addMessage({ channel: 'CLOCAL', ts: '1700000000.000100', user: 'UOTHER', text: 'a thread someone started' });
    await h.send('in a thread', { threadTs: '1700000000.000100' });
    const [post] = await h.slack.waitForPosts(1);
    expect(post).toMatchObject({ thread_ts: '1700000000.000100', text: 'echo: in a thread' });
    await h.pipeline.whenIdle();
    expect(h.slack.posts).toHaveLength(1);
  });

  it('follows an accepted task by polling until its answer', async () => {
    const { ts, eventId } = await h.send('take your time #sleep=600');
    const [post] = await h.slack.waitForPosts(1, 10_000);
    expect(post).toMatchObject({ thread_ts: ts, text: 'echo: take your time #sleep=600' });
    await h.pipeline.whenIdle();
    expect(h.slack.posts).toHaveLength(1);
    // The runtime answered accepted (its 100 ms sync budget is shorter than the task), and the
    // answer came from polls: pending at first, then success, and only then the reply.
    const hops = h.hopsOf(h.requestIdOf(eventId));
    const accepted = hops.filter((hop) => hop.hop === 'accepted');
    expect(accepted).toEqual([expect.objectContaining({ detail: expect.objectContaining({ task_id: expect.stringMatching(/^task-/) }) })]);
    const polls = hops.filter((hop) => hop.hop === 'poll').map((hop) => hop.detail?.outcome);
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(polls.at(-1)).toBe('success');
    expect(polls.slice(0, -1).every((outcome) => outcome === 'pending')).toBe(true);
    expect(hops.map((hop) => hop.hop).filter((hop) => hop === 'accepted' || hop === 'reply-posted')).toEqual(['accepted', 'reply-posted']);
    expect(hops.findIndex((hop) => hop.hop === 'accepted')).toBeLessThan(hops.findIndex((hop) => hop.hop === 'poll'));
  });

  it('turns an execution error into a safe message', async () => {
    await h.send('please #fail');
    const [post] = await h.slack.waitForPosts(1);
    expect(post?.text).toBe(DEFAULT_USER_MESSAGES.executionFailed);
    expect(post?.text).not.toMatch(/-32000|asked to fail/);
    await h.pipeline.whenIdle();
    expect(h.slack.posts).toHaveLength(1);
  });

  it('gives one reply to an event Slack delivers four times', async () => {
    const { body } = await h.send('just once');
    for (let retry = 1; retry <= 3; retry += 1) {
      const response = await h.pipeline.ingress({ headers: { ...slackSignatureHeaders(SIGNING_SECRET, body), 'x-slack-retry-num': String(retry) }, body });
      expect(response.statusCode).toBe(200);
    }
    await h.slack.waitForPosts(1);
    await h.pipeline.whenIdle();
    expect(h.slack.posts.map((p) => p.text)).toEqual(['echo: just once']);
  });

  it('gives one reply when the queue redelivers a task message', async () => {
    await h.send('delivered twice');
    await h.slack.waitForPosts(1);
    await h.pipeline.whenIdle();
    const requestsBefore = h.slack.requests.length;
    // The very task message the ingress queued (same request id), as an SQS redelivery would bring it.
    await h.pipeline.queues.tasks.send(lastTaskMessage(h));
    await h.pipeline.whenIdle();
    expect(h.slack.posts.map((p) => p.text)).toEqual(['echo: delivered twice']);
    // Nothing is posted again; only the thread's session is set active once more (an earlier
    // delivery may have died before it did, and the same status twice is the same status).
    expect(h.slack.requests.slice(requestsBefore).map((r) => [r.method, r.body.status])).toEqual([['agents.sessions.setStatus', 'active']]);
  });

  it('sends a poison message to the DLQ and still apologizes to the user', async () => {
    const poison = { team_id: 'TLOCAL', channel: 'CLOCAL', ts: '1700000001.000200', request_id: 'not-a-uuid', text: 42 };
    await h.pipeline.queues.tasks.send(poison as never);
    const [post] = await h.slack.waitForPosts(1, 10_000);
    expect(post).toMatchObject({ thread_ts: '1700000001.000200', text: DEFAULT_USER_MESSAGES.internalError });
    await h.pipeline.whenIdle();
    expect(h.pipeline.queues.tasksDlq.peek().map((b) => JSON.parse(b))).toEqual([poison]);
    expect(h.slack.posts).toHaveLength(1);
  });

  it('refuses forged, stale and unsigned requests with 401 and queues nothing', async () => {
    const { body } = appMentionEnvelope({ text: 'sneaky' });
    const responses = await Promise.all([
      h.pipeline.ingress({ headers: slackSignatureHeaders('not-the-secret', body), body }),
      h.pipeline.ingress({ headers: slackSignatureHeaders(SIGNING_SECRET, body, Math.floor(Date.now() / 1000) - 600), body }),
      h.pipeline.ingress({ headers: {}, body }),
    ]);
    expect(responses.map((r) => r.statusCode)).toEqual([401, 401, 401]);
    await h.pipeline.whenIdle();
    expect(h.slack.posts).toHaveLength(0);
  });
});

function lastTaskMessage(h: Harness) {
  const line = [...logLines].reverse().find((l) => l.includes('"task queued"'));
  const requestId = line ? (JSON.parse(line) as { request_id: string }).request_id : undefined;
  if (!requestId) throw new Error('no task was queued');
  const ts = h.slack.posts.at(-1)!.thread_ts!;
  return { request_id: requestId, event_id: 'EvREDELIVERED', team_id: 'TLOCAL', user_id: 'ULOCALUSER', channel: 'CLOCAL', ts, text: 'delivered twice', received_at: Date.now() };
}

describe('pipeline: deadlines and outages', () => {
  it('times out past the poll deadline, tells the user, and cancels the task in the execution zone', async () => {
    const h = await startHarness({ POLL_DEADLINE_S: '40' });
    try {
      await h.send('forever #sleep=60000');
      const [post] = await h.slack.waitForPosts(1, 15_000);
      expect(post?.text).toBe(DEFAULT_USER_MESSAGES.timedOut);
      const taskIds = [...logLines.join('').matchAll(/"task_id":"(task-[0-9a-f]+)"/g)].map((m) => m[1]!);
      const cancelled = await Promise.all([...new Set(taskIds)].map((id) => h.runtime.service.getTaskResult(id).then(() => false, (e: { code?: number }) => e.code === -32003)));
      expect(cancelled).toContain(true);
      expect(h.runtime.service.busy).toBe(false);
    } finally {
      await h.close();
    }
  });

  it('survives an execution zone that is down for a while, then answers once', async () => {
    const h = await startHarness({ TASK_MAX_RECEIVE_COUNT: '5' });
    try {
      await h.stopRuntime();
      await h.send('are you there?');
      await eventually(() => (logLines.join('').includes('transient failure; the task will be retried') ? true : undefined), 5000);
      await h.startRuntime();
      const [post] = await h.slack.waitForPosts(1, 15_000);
      expect(post?.text).toBe('echo: are you there?');
      await h.pipeline.whenIdle();
      expect(h.slack.posts).toHaveLength(1);
      expect(h.pipeline.queues.tasksDlq.size).toBe(0);
    } finally {
      await h.close();
    }
  });

  it('tells the user when the execution zone stays down, and dead-letters the task', async () => {
    const h = await startHarness({ TASK_MAX_RECEIVE_COUNT: '2' });
    try {
      await h.stopRuntime();
      await h.send('anyone?');
      const [post] = await h.slack.waitForPosts(1, 15_000);
      expect(post?.text).toBe(DEFAULT_USER_MESSAGES.unavailable);
      await eventually(() => (h.pipeline.queues.tasksDlq.size === 1 ? true : undefined), 10_000);
      expect(h.slack.posts).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});

describe('logs', () => {
  /** The https transport's bearer token for the execution zone. */
  const EXECUTION_BEARER = 'exec-bearer-5f0c2a9e7d41b8c36e1a';
  /** A gateway in front of the runtime: it records what it was sent, and can fail echoing the request's headers. */
  type Gateway = { url: string; target: string; failing: number; seen: Array<{ authorization?: string; botToken?: unknown }>; close(): Promise<void> };

  async function startGateway(): Promise<Gateway> {
    const gateway: Gateway = { url: '', target: '', failing: 0, seen: [], close: () => closeServer(server) };
    const server = createServer(async (req, res) => {
      const body = await readBody(req, 10_000_000);
      const text = typeof body === 'string' ? '' : body.toString('utf8');
      let botToken: unknown;
      try {
        botToken = (JSON.parse(text) as { params?: { bot_token?: unknown } }).params?.bot_token;
      } catch {
        botToken = undefined;
      }
      gateway.seen.push({ authorization: req.headers.authorization, botToken });
      if (gateway.failing > 0) {
        gateway.failing -= 1;
        // A gateway whose error page shows the credential it was sent, then the rest of the request.
        const page = JSON.stringify({ message: 'upstream unavailable', authorization: req.headers.authorization, request: { method: req.method, headers: req.headers } });
        return res.writeHead(502, { 'content-type': 'application/json' }).end(page);
      }
      const upstream = await fetch(gateway.target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
      const answer = await upstream.text();
      res.writeHead(upstream.status, answer ? { 'content-type': 'application/json' } : {}).end(answer);
    });
    gateway.url = `${await listenOnLoopback(server)}/invocations`;
    return gateway;
  }

  let h: Harness;
  let gateway: Gateway;
  /** Only this block's lines: it depends on no other block having run. */
  let from: number;
  let text: string;

  beforeAll(async () => {
    from = logLines.length;
    gateway = await startGateway();
    h = await startHarness(
      // The bot token goes to the execution zone too (EXECUTION_SEND_BOT_TOKEN), in the task's params.
      { SLACK_BOT_TOKEN: FAKE_BOT_TOKEN, EXECUTION_SEND_BOT_TOKEN: 'true', TASK_MAX_RECEIVE_COUNT: '5', REPLY_MAX_RECEIVE_COUNT: '5' },
      {},
      {
        bearerToken: EXECUTION_BEARER,
        slackTimeoutMs: 300,
        executionUrl: (runtimeUrl) => {
          gateway.target = runtimeUrl;
          return gateway.url;
        },
      },
    );
    expect(h.slack.token).toBe(FAKE_BOT_TOKEN);

    // One at a time, so each failure meets the request it is meant for.
    // 1. A task whose first delivery meets the gateway failing three times (every attempt of one
    //    send), each answer echoing the Authorization header; the redelivery gets through.
    gateway.failing = 3;
    await h.send('through a flaky gateway');
    await h.slack.waitForPosts(1, 15_000);
    await h.pipeline.whenIdle({ timeoutMs: 15_000 });
    // 2. A post Slack does not answer in time: the Slack client's own warning, the poster's, and a
    //    redelivery that finds the post had landed.
    h.slack.failNext('chat.postMessage', { stallMs: 600 });
    await h.send('slack is slow');
    await h.slack.waitForPosts(2, 15_000);
    await h.pipeline.whenIdle({ timeoutMs: 15_000 });
    // 3. A task that crashes in the execution zone (logged there with its stack).
    await h.send('please #crash');
    await h.slack.waitForPosts(3, 15_000);
    // 4. A request signed with another secret.
    const { body } = appMentionEnvelope({ text: 'forged' });
    expect((await h.pipeline.ingress({ headers: slackSignatureHeaders('not-the-signing-secret', body), body })).statusCode).toBe(401);
    await h.pipeline.whenIdle({ timeoutMs: 15_000 });
    text = logLines.slice(from).join('');
  }, 40_000);
  afterAll(async () => {
    await h?.close();
    await gateway?.close();
  });

  it('are written where the secrets could leak: the bearer and bot tokens went to the execution zone, and failures echoing them were logged', () => {
    // The secrets were on the wire …
    expect(gateway.seen.length).toBeGreaterThanOrEqual(4);
    for (const request of gateway.seen) expect(request.authorization).toBe(`Bearer ${EXECUTION_BEARER}`);
    expect(gateway.seen.filter((request) => request.botToken === FAKE_BOT_TOKEN).length).toBeGreaterThanOrEqual(4);
    // … and the paths that could write them out did write, at DEBUG and above:
    expect(text).toContain('"execution endpoint call failed; retrying"');
    expect(text).toMatch(/"transient failure; the task will be retried".*answered HTTP 502: .*Bearer \[REDACTED\]/);
    expect(text).toContain('@slack/web-api: http request failed');
    expect(text).toContain('"posting the reply failed; SQS will deliver it again"');
    expect(text).toContain('"task failed unexpectedly"');
    expect(text).toContain('"refused a request with a bad Slack signature"');
    expect(h.slack.posts.map((post) => post.text).sort()).toEqual(['echo: slack is slow', 'echo: through a flaky gateway', DEFAULT_USER_MESSAGES.executionFailed].sort());
  });

  it('never contain the signing secret, the bot token, the execution bearer token or an Authorization header', () => {
    expect(text).toContain('"request_id"');
    expect(text).not.toContain(SIGNING_SECRET);
    expect(text).not.toContain(FAKE_BOT_TOKEN);
    expect(text).not.toContain(EXECUTION_BEARER);
    expect(text).not.toMatch(/authorization["']?\s*[:=]\s*["']?(?!\[REDACTED\])(Bearer|Basic|AWS4)/i);
  });
});
