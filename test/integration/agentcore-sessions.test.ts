import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { runtimeSessionId } from '../../src/transport/session-id';
import { conversationKey } from '../../src/verification/queues/slack-thread';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { manualClock } from '../support/manual-clock';

/**
 * AgentCore sessions sized for chat (docs/operations.md, "AgentCore sessions"): one session per
 * Slack conversation. The local stack over TRANSPORT=agentcore — the real SDK client, the local
 * AgentCore emulator (which keeps sessions as AgentCore does: one per session id, an idle timeout,
 * an account limit), the execution runtime — and the fake Slack API.
 */
const SIGNING_SECRET = 'sessions-signing-secret-0123456789';
const TEAM = 'T0FAKE';

let slack: FakeSlackApi;
let stack: LocalStack;
const clock = manualClock();

beforeAll(async () => {
  slack = await startFakeSlackApi();
  stack = await startLocalStack({
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      ...slackAppEnv(slack, SIGNING_SECRET),
      TRANSPORT: 'agentcore',
      SYNC_BUDGET_MS: '300',
      POLL_FIRST_DELAY_S: '1',
      POLL_MAX_DELAY_S: '1',
      // One receive: a task refused for the session limit is answered at once (the last receive).
      TASK_MAX_RECEIVE_COUNT: '1',
      STREAM_REPLIES: 'false',
    },
    verificationPort: 0,
    executionPort: 0,
    timeScale: 0.01,
    // AgentCore's announced rule: a call to a session serving another one is refused with 409.
    agentCoreSessions: { idleTimeoutSeconds: 300, maxSessions: 4, clock, conflictOnConcurrentUse: true },
    log: createLogger('local'),
  });
});

afterAll(async () => {
  await stack?.stop();
  await slack?.close();
});

beforeEach(() => slack.reset());

async function say(channel: string, text: string, threadTs?: string): Promise<string> {
  const ts = slack.addMessage({ channel, user: 'U0ALICE', text, ...(threadTs ? { thread_ts: threadTs } : {}) });
  const { body } = slackEventEnvelope('mention', { text, ts, channel, teamId: TEAM, userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID, ...(threadTs ? { threadTs } : {}) });
  expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
  return ts;
}

const sessionOf = (channel: string, threadTs: string) => runtimeSessionId(conversationKey({ team_id: TEAM, channel, ts: threadTs }));
const emulator = () => stack.agentCoreEmulator!;

describe('AgentCore sessions, one per conversation', () => {
  let busyThread = '';
  it('two messages in one thread use one session (one cold start); the poll of a long task reaches the same session', async () => {
    const coldBefore = emulator().coldStarts;
    const first = await say('C0ONE', 'first question');
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    await say('C0ONE', 'a slow follow-up #sleep=800', first);
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });

    expect(slack.posts.map((post) => post.text)).toEqual(['echo: first question', 'echo: a slow follow-up #sleep=800']);
    expect(emulator().coldStarts - coldBefore).toBe(1);
    const calls = emulator().invocations.filter((invocation) => invocation.sessionId === sessionOf('C0ONE', first));
    // execute_task, execute_task (accepted), get_task_result…: all in the thread's session.
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls.every((call) => call.status === 200)).toBe(true);
  });

  it('two quick messages in one thread take turns in its one session: never two calls at once, both answered, no failure shown', async () => {
    const parent = (busyThread = await say('C0BUSY', 'start'));
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    // Quick: each is answered within the sync budget (300 ms), by its one execute_task call, no poll.
    await Promise.all([say('C0BUSY', 'one #sleep=200', parent), say('C0BUSY', 'two #sleep=200', parent)]);
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    expect(slack.posts.map((post) => post.text).sort()).toEqual(['echo: one #sleep=200', 'echo: start', 'echo: two #sleep=200']);
    const sessions = emulator().liveSessions().filter((session) => session.sessionId === sessionOf('C0BUSY', parent));
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.requests).toBe(3);
    // One after the other: the second call was refused (409) while the first ran, and waited its turn.
    expect(sessions[0]!.peakInFlight).toBe(1);
    const calls = emulator().invocations.filter((invocation) => invocation.sessionId === sessionOf('C0BUSY', parent));
    const refused = calls.filter((call) => call.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((call) => `${call.status} ${call.errorType}`))).toEqual(new Set(['409 RetryableConflictException']));
  });

  it('a session that stays busy past the SDK\'s retries puts the task back on the queue: answered, with one receive allowed, and never shown as a failure', async () => {
    // More refusals than the SDK's three attempts: the invoker gets transport:session-busy.
    emulator().injectFaults(...Array.from({ length: 5 }, () => ({ status: 409, type: 'RetryableConflictException' })));
    const putBack: number[] = [];
    const unsubscribe = stack.pipeline.queues.tasks.subscribe((event) => {
      if (event.type === 'sent') putBack.push((JSON.parse(event.body) as { requeued?: number }).requeued ?? 0);
    });
    try {
      // In the same thread: no new session (the account's limit of 4 is for the tests below).
      await say('C0BUSY', 'patient question', busyThread);
      await slack.waitForPosts(1, 10_000);
      await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    } finally {
      unsubscribe();
    }
    expect(slack.posts.map((post) => post.text)).toEqual(['echo: patient question']);
    expect(emulator().invocations.slice(-6).map((call) => call.status)).toEqual([409, 409, 409, 409, 409, 200]);
    // Sent by slack-events, put back once after the SDK's three attempts were refused; the next receive got through on its third.
    expect(putBack).toEqual([0, 1]);
    expect(stack.pipeline.queues.tasksDlq.size).toBe(0);
  });

  it('two threads use two sessions, never shared', async () => {
    const one = await say('C0TWO', 'thread one');
    const two = await say('C0TWO', 'thread two');
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    const ids = new Set(emulator().liveSessions().map((session) => session.sessionId));
    expect(ids.has(sessionOf('C0TWO', one))).toBe(true);
    expect(ids.has(sessionOf('C0TWO', two))).toBe(true);
    expect(sessionOf('C0TWO', one)).not.toBe(sessionOf('C0TWO', two));
  });

  it('at the account limit a new conversation is refused as AgentCore refuses it, and the user still hears back', async () => {
    // The limit is 4 and four sessions are live: a fifth conversation cannot open one.
    expect(emulator().liveSessions().length).toBe(4);
    await say('C0FULL', 'one conversation too many');
    await slack.waitForPosts(1, 10_000);
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    expect(emulator().invocations.at(-1)).toMatchObject({ status: 402, errorType: 'ServiceQuotaExceededException' });
    expect(slack.posts.map((post) => post.text)).toEqual([DEFAULT_USER_MESSAGES.modelBusy]);
  });

  it('a session idle past the timeout ends; the next message in its thread opens a new one (a cold start)', async () => {
    const before = emulator().liveSessions().length;
    clock.advance(301_000);
    expect(emulator().liveSessions()).toHaveLength(0);
    expect(before).toBeGreaterThan(0);
    const coldBefore = emulator().coldStarts;
    await say('C0FULL', 'room again');
    await stack.pipeline.whenIdle({ timeoutMs: 15_000 });
    expect(slack.posts.map((post) => post.text)).toEqual(['echo: room again']);
    expect(emulator().coldStarts - coldBefore).toBe(1);
  });
});
