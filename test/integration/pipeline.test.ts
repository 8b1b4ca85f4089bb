import type { Server } from 'node:http';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { createSlackWebClient, WebApiSlackReplies } from '../../src/slack/slack-replies';
import { HttpsTransport } from '../../src/transport/https';
import { slackSignatureHeaders } from '../../src/verification/slack-signature';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/user-messages';
import { FAKE_BOT_TOKEN, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { eventually } from '../support/http';
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
  port: number;
  stopRuntime(): Promise<void>;
  startRuntime(): Promise<void>;
  send(text: string, options?: { threadTs?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; ts: string; body: string }>;
  close(): Promise<void>;
};

const logLines: string[] = [];

async function startHarness(pipelineEnv: Record<string, string> = {}, runtimeEnv: Record<string, string> = {}): Promise<Harness> {
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
  const transport = new HttpsTransport({ url: `http://127.0.0.1:${port}/invocations`, baseDelayMs: 5, maxDelayMs: 20, timeoutMs: 5000 });
  const agent = new ExecutionAgent('default', createProtocol('execute-task'), transport);
  const replies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl }));
  const pipeline = createLocalPipeline({
    agent,
    slack: replies,
    signingSecret: SIGNING_SECRET,
    timeScale: TIME_SCALE,
    env: { POLL_FIRST_DELAY_S: '1', POLL_MAX_DELAY_S: '4', ...pipelineEnv },
    log: createLogger('verification'),
  });
  return {
    pipeline,
    slack,
    runtime,
    get port() {
      return port;
    },
    startRuntime,
    stopRuntime,
    async send(text, options = {}) {
      const { body, ts } = appMentionEnvelope({ text, threadTs: options.threadTs });
      const sent = options.body ?? body;
      const response = await pipeline.ingress({ headers: { ...slackSignatureHeaders(SIGNING_SECRET, sent), ...options.headers }, body: sent });
      return { status: response.statusCode, ts, body: sent };
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

  it('replies inside an existing thread when the mention is in one', async () => {
    await h.send('in a thread', { threadTs: '1700000000.000100' });
    const [post] = await h.slack.waitForPosts(1);
    expect(post?.thread_ts).toBe('1700000000.000100');
  });

  it('follows an accepted task by polling until its answer', async () => {
    const { ts } = await h.send('take your time #sleep=600');
    const [post] = await h.slack.waitForPosts(1, 10_000);
    expect(post).toMatchObject({ thread_ts: ts, text: 'echo: take your time #sleep=600' });
    await h.pipeline.whenIdle();
    expect(h.slack.posts).toHaveLength(1);
  });

  it('turns an execution error into a safe message', async () => {
    await h.send('please #fail');
    const [post] = await h.slack.waitForPosts(1);
    expect(post?.text).toBe(DEFAULT_USER_MESSAGES.executionFailed);
    expect(post?.text).not.toMatch(/-32000|asked to fail/);
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
    expect(h.slack.requests.length).toBe(requestsBefore);
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
  it('never contain the signing secret, the bot token or an Authorization header', () => {
    const text = logLines.join('');
    expect(text.length).toBeGreaterThan(1000);
    expect(text).toContain('"request_id"');
    expect(text).not.toContain(SIGNING_SECRET);
    expect(text).not.toContain(FAKE_BOT_TOKEN);
    expect(text).not.toMatch(/Bearer\s+(?!\[REDACTED\])/);
  });
});
