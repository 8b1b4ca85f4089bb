import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { slackEventEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { MemoryQueue } from '../../src/queue/memory-queue';
import { createSlackWebClient, WebApiSlackReplies } from '../../src/slack/slack-replies';
import { InProcessTransport } from '../../src/transport/in-process';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import type { TraceEvent } from '../../src/verification/trace';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';

/**
 * Held streams end to end (docs/architecture.md §2.5, "Across the zones"): agent-invoker reads the
 * streamed `execute_task` for its hold and appends to Slack as text comes; the hold ends mid-text
 * (STREAM_HOLD_S=1 here, against an answer of about three seconds), the poll that follows holds
 * the stream again from its cursor, and so on to the end — one function at a time. A real execution
 * runtime (echo, a word every 50 ms), the real @slack/web-api client against the fake Slack API,
 * over in-process and https. Timings are bench part 7's (bench/live-answers.ts), not asserted here.
 */
const SIGNING_SECRET = 'held-streams-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const QUESTION = `${Array.from({ length: 60 }, (_, i) => `word${i + 1}`).join(' ')} #stream=50`;
const ANSWER = `echo: ${QUESTION}`;
const ENV = { POWERTOOLS_LOG_LEVEL: 'SILENT', STREAM_HOLD_S: '1', STREAM_POLL_DELAY_S: '1', SYNC_BUDGET_MS: '5000', STREAM_FIRST_TEXT_MS: '100' };

type Harness = { pipeline: LocalPipeline; hops(requestId: string): TraceEvent[]; ingress(body: string): Promise<number> };

async function inProcess(slack: FakeSlackApi): Promise<Harness & { stop(): Promise<void> }> {
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '5000', STREAM_FIRST_TEXT_MS: '100' }), log: createLogger('execution') });
  const hops: TraceEvent[] = [];
  const agent = new ExecutionAgent('default', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch, runtime.dispatchStream), { streamHoldMs: 1_000 });
  const pipeline = createLocalPipeline({
    agent,
    slack: new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl })),
    signingSecret: SIGNING_SECRET,
    env: { ...slackAppEnv(slack, SIGNING_SECRET), ...ENV },
    timeScale: 0.1,
    trace: (event) => hops.push(event),
    log: createLogger('local'),
  });
  return {
    pipeline,
    hops: (requestId) => hops.filter((hop) => hop.requestId === requestId),
    ingress: async (body) => (await pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body })).statusCode,
    stop: () => pipeline.stop(),
  };
}

async function https(slack: FakeSlackApi): Promise<Harness & { stop(): Promise<void> }> {
  const stack: LocalStack = await startLocalStack({ env: { ...slackAppEnv(slack, SIGNING_SECRET), ...ENV, TRANSPORT: 'https' }, verificationPort: 0, executionPort: 0, timeScale: 0.1, log: createLogger('local') });
  return {
    pipeline: stack.pipeline,
    hops: (requestId) => stack.traces.byRequestId(requestId)?.events ?? [],
    ingress: async (body) => (await stack.pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body })).statusCode,
    stop: () => stack.stop(),
  };
}

describe.each([
  ['in-process', inProcess],
  ['https', https],
] as const)('held streams over %s', (_transport, start) => {
  let slack: FakeSlackApi;
  let harness: Harness & { stop(): Promise<void> };

  beforeAll(async () => {
    slack = await startFakeSlackApi();
    harness = await start(slack);
  });
  afterAll(async () => {
    await harness?.stop();
    await slack?.close();
  });

  it('appends the answer as it is produced across holds, one function at a time, and ends with exactly the answer, once', async () => {
    // Which follow-up function holds the answer, and when: never two at once. A function's last
    // step is queueing the next poll; from then on it holds nothing.
    const running = new Set<string>();
    let overlapped = false;
    let requestId = '';
    const queues = harness.pipeline.queues as unknown as Record<'tasks' | 'polls', MemoryQueue<unknown>>;
    for (const queue of [queues.tasks, queues.polls]) {
      queue.subscribe((event) => {
        if (event.type === 'sent' && !requestId) requestId = (JSON.parse(event.body) as { request_id: string }).request_id;
        if (event.type === 'sent' && event.queue === queues.polls.name) running.clear();
        if (event.type === 'delivered') {
          if (running.size > 0) overlapped = true;
          running.add(event.messageId);
        }
        if (event.type === 'succeeded' || event.type === 'failed') running.delete(event.messageId);
      });
    }

    const ts = slack.addMessage({ channel: 'C0HELD', user: 'U0ALICE', text: QUESTION });
    const { body } = slackEventEnvelope('mention', { text: QUESTION, ts, channel: 'C0HELD', teamId: TEAM, userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID });
    expect(await harness.ingress(body)).toBe(200);
    await harness.pipeline.whenIdle({ timeoutMs: 30_000 });

    // One stream, grown by several appends before the answer was done (the stop came after them).
    expect(slack.streams).toHaveLength(1);
    const [stream] = slack.streams;
    expect(stream!.state).toBe('stopped');
    expect(stream!.appends.length).toBeGreaterThanOrEqual(3);
    const methods = slack.requests.map((request) => request.method);
    expect(methods.lastIndexOf('chat.appendStream')).toBeLessThan(methods.indexOf('chat.stopStream'));
    // No text twice, none skipped: what the start and the appends showed is the answer's beginning, in order.
    expect(ANSWER.startsWith(stream!.text)).toBe(true);
    expect(stream!.text.length).toBeGreaterThan('echo: word1'.length);

    // The invoker's hold ended mid-text; polls held the stream on from its cursor, one at a time.
    const hops = harness.hops(requestId);
    expect(hops.filter((hop) => hop.hop === 'accepted')).toHaveLength(1);
    expect(hops.some((hop) => hop.hop === 'poll' && typeof hop.detail?.held_ms === 'number')).toBe(true);
    expect(overlapped).toBe(false);

    // Exactly one message of the bot in the thread, holding exactly the answer.
    expect(slack.messageText(stream!.ts)).toBe(ANSWER);
    expect(slack.posts).toEqual([]);
  });
});
