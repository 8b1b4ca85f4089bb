import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import type { MemoryQueue } from '../../src/queue/memory-queue';
import { startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { eventually } from '../support/http';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi, type FakeSlackStream } from '../support/fake-slack-api';

/**
 * The agent's steps in Slack (docs/architecture.md §2.5, "Steps"), end to end through the local
 * stack, with the real @slack/web-api client against the fake Slack: the echo's `#steps=3` over
 * in-process, https and agentcore (the SDK through the local AgentCore emulator), and an
 * @a2a-js/sdk agent whose status messages are its steps. Each step is a task card in the live
 * stream, drawn while the agent works and ending complete before the answer; no card is sent
 * twice (a duplicated poll neither); where Slack refuses the stream the steps fold to one line
 * above the answer; a step title passes the output guardrail. The asker rides on every call.
 */
const SIGNING_SECRET = 'agent-steps-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const USER = 'U0ALICE';
const BASE_ENV = { POWERTOOLS_LOG_LEVEL: 'SILENT', STREAM_QUIET_S: '1', POLL_FIRST_DELAY_S: '1', POLL_MAX_DELAY_S: '1' };

type StepsCase = { env: (a2a: A2aTestAgent) => Record<string, string>; text: string; ids: string[] };

const ECHO_STEPS = ['step-1', 'step-2', 'step-3'];
const CASES: Record<string, StepsCase> = {
  'in-process': { env: () => ({ TRANSPORT: 'in-process' }), text: 'plan it #steps=3', ids: ECHO_STEPS },
  https: { env: () => ({ TRANSPORT: 'https' }), text: 'plan it #steps=3', ids: ECHO_STEPS },
  agentcore: { env: () => ({ TRANSPORT: 'agentcore' }), text: 'plan it #steps=3', ids: ECHO_STEPS },
  // The A2A agent's steps are its status messages; the output guardrail checks their titles (input only detected: the question reaches the agent as asked).
  'an A2A agent': {
    env: (a2a) => ({ EXECUTION_AGENTS: JSON.stringify([{ name: 'a2a', protocol: 'a2a', transport: 'https', url: a2a.url, default: true }]), GUARDRAIL: 'builtin', GUARDRAIL_INPUT_MODE: 'detect' }),
    text: 'plan it #stream #steps=3 #delay=100',
    ids: ['status-1', 'status-2', 'status-3'],
  },
};

let slack: FakeSlackApi;
let a2a: A2aTestAgent;
beforeAll(async () => {
  slack = await startFakeSlackApi();
  a2a = await startSdkA2aAgent({ streaming: true });
});
afterAll(async () => {
  await a2a?.close();
  await slack?.close();
});

/** A mention signed like Slack in its own channel; resolves with its ts once the pipeline is idle (`idle: false`: once it is accepted). */
async function mention(stack: LocalStack, channel: string, text: string, how: { idle?: boolean } = {}): Promise<string> {
  const ts = slack.addMessage({ channel, user: USER, text: `<@${FAKE_BOT_USER_ID}> ${text}` });
  const { body } = slackEventEnvelope('mention', { text, ts, channel, teamId: TEAM, userId: USER, botUserId: FAKE_BOT_USER_ID });
  expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
  if (how.idle !== false) await stack.pipeline.whenIdle({ timeoutMs: 30_000 });
  return ts;
}

function streamIn(threadTs: string): FakeSlackStream {
  const streams = slack.streams.filter((stream) => stream.thread_ts === threadTs);
  expect(streams).toHaveLength(1);
  return streams[0]!;
}

/** The task_update chunks sent for the agent's steps (not the working card), in order. */
const stepChunks = (stream: FakeSlackStream, ids: string[]) => stream.tasks.filter((task) => ids.includes(String(task.id)));

/** Each card is sent only when what it shows changed: no step's state twice. */
function expectNoCardTwice(stream: FakeSlackStream, ids: string[]): void {
  for (const id of ids) {
    const sent = stepChunks(stream, [id]).map((task) => JSON.stringify([task.status, task.title, task.details ?? '']));
    expect(new Set(sent).size).toBe(sent.length);
  }
}

/** The requests that carried task cards to the stream of `ts` while it was live (before its stop). */
function liveCardCalls(ts: string): Array<Array<Record<string, unknown>>> {
  return slack.requests
    .filter((request) => (request.method === 'chat.startStream' || request.method === 'chat.appendStream') && request.body.chunks !== undefined)
    .filter((request) => request.method === 'chat.startStream' || request.body.ts === ts)
    .map((request) => (typeof request.body.chunks === 'string' ? JSON.parse(request.body.chunks) : request.body.chunks) as Array<Record<string, unknown>>);
}

describe.each(Object.keys(CASES))('the agent’s steps as task cards, over %s', (name) => {
  const { env, text, ids } = CASES[name]!;
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ env: { ...slackAppEnv(slack, SIGNING_SECRET), ...BASE_ENV, ...env(a2a) }, verificationPort: 0, executionPort: 0, timeScale: 0.1, log: createLogger('local') });
  }, 30_000);
  afterAll(() => stack?.stop());

  it('#steps=3 draws three cards while the agent works, each ending complete before the answer, none sent twice', async () => {
    const channel = `C0STEPS${name.replace(/[^a-z]/gi, '').toUpperCase()}`;
    const ts = await mention(stack, channel, text);
    const stream = streamIn(ts);
    expect(stream.state).toBe('stopped');
    // The three cards, at their last state: complete, titled by the agent.
    expect(stream.cards.filter((card) => ids.includes(card.id))).toEqual(ids.map((id, index) => expect.objectContaining({ id, title: expect.stringMatching(new RegExp(`^Step ${index + 1}`)), status: 'complete' })));
    // Drawn live: a step was shown in progress by the start or an append, before the stop.
    const live = liveCardCalls(stream.ts).flat();
    expect(live.some((chunk) => chunk.type === 'task_update' && ids.includes(String(chunk.id)) && chunk.status === 'in_progress')).toBe(true);
    expectNoCardTwice(stream, ids);
    // The answer, without the line the steps fold to elsewhere: the cards show them.
    expect(slack.messageText(stream.ts)).toContain(name === 'an A2A agent' ? `a2a steps: ${text}` : `echo: ${text}`);
    expect(slack.messageText(stream.ts)).not.toContain('✓ Step');
  });

  if (name === 'https') {
    it('where Slack refuses the stream, the steps fold to one line above the answer in the message it updates', async () => {
      slack.failNext('chat.startStream', { error: 'missing_recipient_user_id' });
      const ts = await mention(stack, 'C0FOLD', 'fold it #steps=3');
      expect(slack.streams.filter((stream) => stream.thread_ts === ts)).toEqual([]);
      const updates = slack.updates.filter((update) => update.text.includes('Step'));
      expect(updates.length).toBeGreaterThan(0);
      const bot = slack.posts.filter((post) => post.thread_ts === ts);
      expect(bot).toHaveLength(1);
      expect(slack.messageText(bot[0]!.ts)).toBe('✓ Step 1 · ✓ Step 2 · ✓ Step 3\n\necho: fold it #steps=3');
    });
  }

  if (name === 'agentcore') {
    it('the asker rides on every call about the task — execute_task, each get_task_result — as runtimeUserId', async () => {
      const before = stack.agentCoreEmulator!.invocations.length;
      await mention(stack, 'C0ASKER', 'slow one #sleep=2500');
      const calls = stack.agentCoreEmulator!.invocations.slice(before);
      // The quiet stream let go after STREAM_QUIET_S, then polls: more than one call.
      expect(calls.length).toBeGreaterThan(1);
      expect(calls.map((call) => call.userId)).toEqual(calls.map(() => `slack:${TEAM}:${USER}`));
    });
  }

  if (name === 'an A2A agent') {
    it('a step title with an e-mail address is masked by the output guardrail before Slack shows it', async () => {
      const ts = await mention(stack, 'C0MASK', 'mail it #stream #steps=2 #delay=50 #step-title=write to alice@example.com');
      const stream = streamIn(ts);
      const titles = stepChunks(stream, ['status-1', 'status-2']).map((task) => String(task.title));
      expect(titles.length).toBeGreaterThan(0);
      for (const title of titles) {
        expect(title).not.toContain('alice@example.com');
        expect(title).toMatch(/^Step \d: write to \[EMAIL-1\]$/);
      }
    });
  }
});

describe('steps between polls (no held stream), with poll messages delivered twice', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ env: { ...slackAppEnv(slack, SIGNING_SECRET), ...BASE_ENV, TRANSPORT: 'https', STREAM_HOLD_S: '0', SYNC_BUDGET_MS: '100' }, verificationPort: 0, executionPort: 0, timeScale: 0.1, log: createLogger('local') });
  }, 30_000);
  afterAll(() => stack?.stop());

  it('each step change a poll finds is shown once: a redelivered poll sends no card twice', async () => {
    const polls = stack.pipeline.queues.polls as unknown as MemoryQueue<unknown>;
    const duplicated = new Set<string>();
    let copies = 0;
    // As SQS may: the first poll messages come twice (each copy sent at once, with the same body).
    const unsubscribe = polls.subscribe((event) => {
      if (event.type !== 'sent' || duplicated.has(event.body) || copies >= 4) return;
      duplicated.add(event.body);
      copies += 1;
      void polls.send(JSON.parse(event.body));
    });
    try {
      // Not waiting for the queues to be idle: the copies' replies wait out the replies queue's
      // visibility timeout behind the one posting them (a chunk claimed by another delivery).
      const ts = await mention(stack, 'C0POLLED', 'polled #steps=3 #sleep=600', { idle: false });
      const answered = (stream: FakeSlackStream) => stream.state === 'stopped' && (slack.messageText(stream.ts) ?? '').includes('echo: polled #steps=3 #sleep=600');
      await eventually(() => (slack.streams.some((stream) => stream.thread_ts === ts && answered(stream)) ? true : undefined), 30_000);
      const stream = streamIn(ts);
      expect(copies).toBeGreaterThan(1);
      expect(stream.cards.filter((card) => ECHO_STEPS.includes(card.id)).map((card) => card.status)).toEqual(['complete', 'complete', 'complete']);
      // A step seen in progress by a poll was shown then, before the answer.
      expect(liveCardCalls(stream.ts).flat().some((chunk) => chunk.type === 'task_update' && ECHO_STEPS.includes(String(chunk.id)) && chunk.status === 'in_progress')).toBe(true);
      expectNoCardTwice(stream, ECHO_STEPS);
      expect(slack.posts.filter((post) => post.thread_ts === ts)).toEqual([]);
      expect(slack.messageText(stream.ts)).toContain('echo: polled #steps=3 #sleep=600');
    } finally {
      unsubscribe();
    }
  });
});
