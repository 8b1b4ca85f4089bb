import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { loadExecutionConfig } from '../../src/execution/config';
import { BedrockExecutor } from '../../src/execution/executors/bedrock-executor';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { ConsoleSlackReplies } from '../../src/local/console-slack-replies';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { startLocalStack } from '../../src/local/local-stack';
import { agentSessionStoppedEnvelope, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { InProcessTransport } from '../../src/transport/in-process';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { tokensOf, utcDay, type UsageRow } from '../../src/verification/stores/usage-store';
import { listAudit, type AuditRecord } from '../../src/verification/budgets/usage-ledger';
import type { Usage } from '../../src/contract';
import { echoUsage } from '../support/echo-usage';
import { closeServer, eventually, listenOnLoopback } from '../support/http';
import { capturingLog } from '../support/slack-surface';

/**
 * Usage records, audit records and budgets (docs/architecture.md §2.7) through the local pipeline
 * — the four verification functions wired as deployed, with in-memory queues and stores — and a
 * real execution runtime behind the in-process transport: echo (a token a word), and Bedrock's
 * executor against a loopback Converse stand-in, answering at once (Converse) and streamed
 * (ConverseStream, when the answer is shown live).
 */
const SIGNING_SECRET = 'usage-signing-secret-0123456789';
const TEAM = 'T0USAGE';

type Harness = { pipeline: LocalPipeline; runtime: ExecutionRuntime; slack: ConsoleSlackReplies; executeCalls: () => string[]; log: ReturnType<typeof capturingLog> };

function harness(env: Record<string, string>, runtime: ExecutionRuntime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '2000' }) })): Harness {
  const calls: string[] = [];
  const transport = new InProcessTransport(async (bytes) => {
    const body = Buffer.from(bytes).toString();
    if (body.includes('"execute_task"')) calls.push((JSON.parse(body) as { params: { text: string } }).params.text);
    return runtime.dispatch(bytes);
  });
  const slack = new ConsoleSlackReplies(() => undefined);
  const log = capturingLog();
  const pipeline = createLocalPipeline({
    agent: new ExecutionAgent('default', createProtocol('execute-task'), transport),
    slack,
    signingSecret: SIGNING_SECRET,
    env: { RATE_LIMIT_PER_MINUTE: '1000', ...env },
    timeScale: 0.05,
    log,
  });
  return { pipeline, runtime, slack, executeCalls: () => calls, log };
}

let sequence = 0;
/** A user's mention, signed and posted to the ingress as Slack would; its ts (the thread). */
async function say(pipeline: LocalPipeline, text: string, who: { user?: string; channel?: string } = {}): Promise<string> {
  const ts = `1700000000.${String((sequence += 1)).padStart(6, '0')}`;
  const { body } = slackEventEnvelope('mention', { text, ts, teamId: TEAM, userId: who.user ?? 'U0ALICE', channel: who.channel ?? 'C0USAGE' });
  const answer = await pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body });
  expect(answer.statusCode).toBe(200);
  return ts;
}

/** A mention in a thread (`parent`), as Slack sends it. */
async function sayInThread(pipeline: LocalPipeline, text: string, parent: string, user: string): Promise<void> {
  const ts = `1700000000.${String((sequence += 1)).padStart(6, '0')}`;
  const { body } = slackEventEnvelope('mention', { text, ts, threadTs: parent, teamId: TEAM, userId: user, channel: 'C0USAGE' });
  expect((await pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body })).statusCode).toBe(200);
}

const today = () => utcDay(Date.now());
const row = (rows: UsageRow[], scope: UsageRow['scope'], id: string) => rows.find((candidate) => candidate.scope === scope && candidate.id === id);
const auditOf = async (pipeline: LocalPipeline, text: string): Promise<AuditRecord | undefined> => {
  const trace = (await listAudit(pipeline.records)).find((record) => record.text === text);
  return trace;
};

describe('usage and audit records with echo', () => {
  let h: Harness;
  beforeAll(() => (h = harness({ AUDIT_MESSAGE_TEXT: 'true' })));
  afterAll(() => h.pipeline.stop());

  it('counts an answered task on its team, channel, user and agent, and audits it (text only with AUDIT_MESSAGE_TEXT)', async () => {
    const text = 'count these five words';
    await say(h.pipeline, text, { user: 'U0ECHO', channel: 'C0ECHO' });
    await h.pipeline.whenIdle({ timeoutMs: 20_000 });
    const usage = echoUsage(text);
    const rows = await h.pipeline.usage.day(today());
    for (const [scope, id] of [['team', TEAM], ['channel', `${TEAM}/C0ECHO`], ['user', `${TEAM}/U0ECHO`], ['agent', 'default']] as const) {
      expect(row(rows, scope, id)).toMatchObject({ input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, tokens: tokensOf(usage), tasks: 1, refused: 0 });
    }
    const audit = await auditOf(h.pipeline, text);
    expect(audit).toMatchObject({ team_id: TEAM, channel: 'C0ECHO', user: 'U0ECHO', agent: 'default', outcome: 'answered', usage, tokens: tokensOf(usage), text });
    expect(audit!.latency_ms).toBeGreaterThanOrEqual(0);
    expect(audit!.ended_at).toBeGreaterThanOrEqual(audit!.received_at);
  });

  it('audits a task the user stopped while it was answering', async () => {
    const text = `${Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ')} #stream=40`;
    const ts = await say(h.pipeline, text, { user: 'U0STOP', channel: 'C0STOP' });
    // Stopped once the agent is answering it.
    await eventually(() => (h.executeCalls().includes(text) ? true : undefined), 10_000);
    const { body } = agentSessionStoppedEnvelope({ teamId: TEAM, userId: 'U0STOP', channel: 'C0STOP', threadTs: ts });
    expect((await h.pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body })).statusCode).toBe(200);
    await h.pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(await auditOf(h.pipeline, text)).toMatchObject({ user: 'U0STOP', channel: 'C0STOP', outcome: 'stopped' });
    expect(row(await h.pipeline.usage.day(today()), 'user', `${TEAM}/U0STOP`)).toMatchObject({ tasks: 1 });
  });

  it('keeps no message text without AUDIT_MESSAGE_TEXT', async () => {
    const plain = harness({});
    try {
      await say(plain.pipeline, 'secret words here', { user: 'U0PLAIN' });
      await plain.pipeline.whenIdle({ timeoutMs: 20_000 });
      const [audit] = await listAudit(plain.pipeline.records);
      expect(audit).toMatchObject({ user: 'U0PLAIN', outcome: 'answered' });
      expect(JSON.stringify(audit)).not.toContain('secret');
    } finally {
      await plain.pipeline.stop();
    }
  });
});

describe('budgets', () => {
  it('refuses a user over USER_DAILY_TOKEN_BUDGET with the notice (limit, reset); the agent never sees the task; the audit says refused', async () => {
    const h = harness({ USER_DAILY_TOKEN_BUDGET: '10' });
    try {
      // 4 + 5 tokens: under the limit when asked, 9 of 10 used after.
      await say(h.pipeline, 'one two three four', { user: 'U0OVER' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      // 9 used: admitted alone (nothing in flight, under the limit); 1 + 2 more → 12, over.
      await say(h.pipeline, 'five', { user: 'U0OVER' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      const refusedTs = await say(h.pipeline, 'this one is refused', { user: 'U0OVER' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });

      expect(h.executeCalls()).toEqual(['one two three four', 'five']);
      const notice = h.slack.posted.filter((reply) => reply.threadTs === refusedTs).map((reply) => reply.text);
      expect(notice).toHaveLength(1);
      expect(notice[0]).toMatch(/^You've used your daily allowance of 10 tokens, so I didn't send this one\. It resets at midnight UTC \(in (\d+ h )?\d+ min\)\.$/);
      expect(row(await h.pipeline.usage.day(today()), 'user', `${TEAM}/U0OVER`)).toMatchObject({ tokens: 12, tasks: 2, refused: 1 });
      const refused = (await listAudit(h.pipeline.records)).find((record) => record.outcome === 'refused-budget');
      expect(refused).toMatchObject({ user: 'U0OVER', budget: { scope: 'user', limit: 10, used: 12 } });
      // Nothing is lost: the task message was consumed, not dead-lettered.
      expect(h.pipeline.queues.tasksDlq.size).toBe(0);
      // Another user is not held by it.
      await say(h.pipeline, 'someone else', { user: 'U0OTHER' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      expect(h.executeCalls()).toContain('someone else');
    } finally {
      await h.pipeline.stop();
    }
  });

  it('refuses quietly in a thread under way: one ephemeral to the user per scope and day there, nothing in the channel; a new thread is told in it', async () => {
    const h = harness({ USER_DAILY_TOKEN_BUDGET: '10' });
    try {
      // 4 + 5 + 1 + 2 = 12 tokens: the budget is used up.
      const parent = await say(h.pipeline, 'one two three four', { user: 'U0QUIET' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      await sayInThread(h.pipeline, 'five', parent, 'U0QUIET');
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      const postsBefore = h.slack.posted.length;
      // Three more in the same thread: refused, the user told once, by an ephemeral.
      for (const text of ['six', 'seven', 'eight']) {
        await sayInThread(h.pipeline, text, parent, 'U0QUIET');
        await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      }
      expect(h.slack.posted.length).toBe(postsBefore);
      const ephemerals = h.slack.surface.filter((call) => call.type === 'ephemeral');
      expect(ephemerals).toEqual([expect.objectContaining({ user: 'U0QUIET', threadTs: parent, text: expect.stringMatching(/^You've used your daily allowance of 10 tokens/) })]);
      expect(row(await h.pipeline.usage.day(today()), 'user', `${TEAM}/U0QUIET`)).toMatchObject({ refused: 3 });
      // A new thread: the refusal is its only reply, in it.
      const fresh = await say(h.pipeline, 'a new question', { user: 'U0QUIET' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      expect(h.slack.posted.filter((reply) => reply.threadTs === fresh).map((reply) => reply.text)).toEqual([expect.stringMatching(/^You've used your daily allowance/)]);
      expect(h.pipeline.queues.tasksDlq.size).toBe(0);
    } finally {
      await h.pipeline.stop();
    }
  });

  it('near the limit, a task that waited its last delivery for another still running is refused with budgetBusy, not dead-lettered', async () => {
    const h = harness({ USER_DAILY_TOKEN_BUDGET: '100', TASK_MAX_RECEIVE_COUNT: '1' });
    try {
      // 4 + 5 = 9 tokens, then 43 + 44: 96 of 100 used.
      await say(h.pipeline, 'one two three four', { user: 'U0BUSY' });
      await say(h.pipeline, Array.from({ length: 43 }, (_, i) => `w${i}`).join(' '), { user: 'U0BUSY' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      // Admitted alone (nothing in flight, under the limit); it runs 5 s, well past the next one's wait.
      await say(h.pipeline, 'slow #sleep=5000', { user: 'U0BUSY' });
      await eventually(() => (h.executeCalls().includes('slow #sleep=5000') ? true : undefined), 10_000);
      const waitingTs = await say(h.pipeline, 'me too', { user: 'U0BUSY' });
      await h.pipeline.whenIdle({ timeoutMs: 30_000 });

      expect(h.executeCalls()).not.toContain('me too');
      expect(h.slack.posted.filter((reply) => reply.threadTs === waitingTs).map((reply) => reply.text)).toEqual([
        "This is close to the daily allowance of 100 tokens, so I take one request at a time until it resets, and another is still running. Please ask again once it's answered.",
      ]);
      expect(h.pipeline.queues.tasksDlq.size).toBe(0);
      expect(row(await h.pipeline.usage.day(today()), 'user', `${TEAM}/U0BUSY`)).toMatchObject({ tasks: 3, refused: 1 });
    } finally {
      await h.pipeline.stop();
    }
  }, 60_000);

  it.each([
    // limit, messages at once, words per message, MAX_TASK_TOKENS
    [60, 20, 5, 20],
    [1_000, 50, 20, 50],
    [200, 50, 5, undefined],
  ])('holds at the start of a day: limit %i, %i concurrent messages from one user (%i words each, ceiling %s) go over by at most one task\'s ceiling', async (LIMIT, BURST, WORDS, CEILING) => {
    const h = harness({ USER_DAILY_TOKEN_BUDGET: String(LIMIT), CHANNEL_DAILY_TOKEN_BUDGET: '100000', TEAM_DAILY_TOKEN_BUDGET: '100000', ...(CEILING ? { MAX_TASK_TOKENS: String(CEILING) } : {}) });
    try {
      const text = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
      const perTask = tokensOf(echoUsage(text));
      await Promise.all(Array.from({ length: BURST }, () => say(h.pipeline, text, { user: 'U0BURST' })));
      await h.pipeline.whenIdle({ timeoutMs: 60_000 });

      const user = row(await h.pipeline.usage.day(today()), 'user', `${TEAM}/U0BURST`)!;
      expect(user.tokens).toBeGreaterThanOrEqual(LIMIT);
      // No more than one task's charge over: a task is charged at most its ceiling, and these cost perTask.
      expect(user.tokens).toBeLessThanOrEqual(LIMIT + Math.min(perTask, CEILING ?? perTask));
      expect(user.tasks).toBe(h.executeCalls().length);
      expect(user.tasks + user.refused).toBe(BURST);
      expect(user.refused).toBeGreaterThan(0);
      // Every message has its one reply: an answer or the notice; none went to a DLQ.
      const replies = h.slack.posted.filter((reply) => reply.channel === 'C0USAGE');
      expect(new Set(replies.map((reply) => reply.threadTs)).size).toBe(BURST);
      expect(h.pipeline.queues.tasksDlq.size + h.pipeline.queues.repliesDlq.size).toBe(0);
    } finally {
      await h.pipeline.stop();
    }
  }, 90_000);
});

/** Bedrock's Converse and ConverseStream on loopback, in their wire formats. */
const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const header = (value: string) => ({ type: 'string' as const, value });
const event = (type: string, body: unknown) =>
  codec.encode({ headers: { ':message-type': header('event'), ':event-type': header(type), ':content-type': header('application/json') }, body: new TextEncoder().encode(JSON.stringify(body)) });

describe('usage records with Bedrock (loopback Converse stand-in)', () => {
  const MODEL = 'anthropic.claude-test-v1:0';
  const paths: string[] = [];
  let failNext = false;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const path = decodeURIComponent(req.url ?? '');
      paths.push(path);
      if (failNext) {
        failNext = false;
        res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' }).end(JSON.stringify({ message: 'bad input' }));
        return;
      }
      if (path.endsWith('/converse-stream')) {
        res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
        for (const frame of [
          event('messageStart', { role: 'assistant' }),
          event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'streamed answer' } }),
          event('contentBlockStop', { contentBlockIndex: 0 }),
          event('messageStop', { stopReason: 'end_turn' }),
          event('metadata', { usage: { inputTokens: 21, outputTokens: 7, totalTokens: 28, cacheReadInputTokens: 3 }, metrics: { latencyMs: 5 } }),
        ])
          res.write(frame);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'whole answer' }] } }, stopReason: 'end_turn', usage: { inputTokens: 30, outputTokens: 11, totalTokens: 41 }, metrics: { latencyMs: 5 } }),
      );
    });
  });
  let client: BedrockRuntimeClient;
  let runtime: ExecutionRuntime;

  beforeAll(async () => {
    const endpoint = await listenOnLoopback(server);
    client = new BedrockRuntimeClient({ endpoint, region: 'us-east-1', maxAttempts: 1, requestHandler: new NodeHttpHandler(), credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '2000' }), executor: new BedrockExecutor({ client, modelId: MODEL, maxTokens: 100 }) });
  });
  afterAll(async () => {
    client.destroy();
    await closeServer(server);
  });

  it.each([
    ['unstreamed (Converse)', 'false', '/converse', { input_tokens: 30, output_tokens: 11, model: MODEL }],
    ['streamed (ConverseStream)', 'true', '/converse-stream', { input_tokens: 21, output_tokens: 7, cache_read_tokens: 3, model: MODEL }],
  ])('%s: the answer\'s usage reaches the counters and the audit record', async (_name, streamReplies, path, usage) => {
    const h = harness({ STREAM_REPLIES: streamReplies }, runtime);
    try {
      paths.length = 0;
      await say(h.pipeline, 'ask the model', { user: 'U0BEDROCK' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      expect(paths).toEqual([`/model/${MODEL}${path}`]);
      const rows = await h.pipeline.usage.day(today());
      expect(row(rows, 'user', `${TEAM}/U0BEDROCK`)).toMatchObject({ input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, cache_read_tokens: (usage as Usage).cache_read_tokens ?? 0, tokens: tokensOf(usage), tasks: 1 });
      expect(row(rows, 'agent', 'default')).toMatchObject({ tokens: tokensOf(usage) });
      const [audit] = await listAudit(h.pipeline.records);
      expect(audit).toMatchObject({ user: 'U0BEDROCK', outcome: 'answered', usage, tokens: tokensOf(usage) });
    } finally {
      await h.pipeline.stop();
    }
  });

  it('a failed task is audited as failed and charged: never free', async () => {
    const h = harness({ STREAM_REPLIES: 'false' }, runtime);
    try {
      failNext = true;
      await say(h.pipeline, 'this fails', { user: 'U0FAIL' });
      await h.pipeline.whenIdle({ timeoutMs: 20_000 });
      const [audit] = await listAudit(h.pipeline.records);
      expect(audit).toMatchObject({ user: 'U0FAIL', outcome: 'failed' });
      expect(audit!.tokens).toBeGreaterThan(0);
      expect(row(await h.pipeline.usage.day(today()), 'user', `${TEAM}/U0FAIL`)).toMatchObject({ tokens: audit!.tokens, tasks: 1 });
    } finally {
      await h.pipeline.stop();
    }
  });
});

describe('the audit record and feedback, through the local stack', () => {
  it('takes the last 👍 / 👎 given to the task\'s answer, linked by its request id', async () => {
    const stack = await startLocalStack({ env: { TRANSPORT: 'in-process', POWERTOOLS_LOG_LEVEL: 'SILENT' }, verificationPort: 0, executionPort: 0, timeScale: 0.05, replyWriter: () => undefined, log: capturingLog() });
    try {
      await stack.say('rate this answer');
      await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
      const answer = stack.consoleReplies!.posted.find((reply) => reply.text === 'echo: rate this answer' && reply.feedback)!;
      for (const value of ['positive', 'negative']) {
        const click = await fetch(new URL('/api/feedback/click', stack.playgroundUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_ts: answer.ts, value }) });
        expect(click.status).toBe(200);
        await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
      }
      const [audit] = await listAudit(stack.pipeline.records);
      expect(audit).toMatchObject({ request_id: answer.feedback!.requestId, outcome: 'answered', feedback: 'negative', user: 'ULOCALUSER', channel: 'CLOCAL' });
    } finally {
      await stack.stop();
    }
  });
});
