import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { runtimeSessionId } from '../../src/transport/session-id';
import { conversationKey } from '../../src/verification/queues/slack-thread';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { eventually } from '../support/http';
import { capturingLog } from '../support/slack-surface';

/**
 * AGENTCORE_STOP_SESSION (src/verification/stop/agentcore-session-stop.ts): when a conversation's AgentCore session
 * is ended with StopRuntimeSession. The local stack over TRANSPORT=agentcore — the real SDK client,
 * the local AgentCore emulator (which keeps sessions as AgentCore does and answers
 * StopRuntimeSession), the execution runtime — and the fake Slack API.
 */
const SIGNING_SECRET = 'session-stop-signing-secret-0123456789';
const TEAM = 'T0FAKE';

async function stackWith(slack: FakeSlackApi, stopSession: string | undefined): Promise<LocalStack> {
  return startLocalStack({
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      ...slackAppEnv(slack, SIGNING_SECRET),
      TRANSPORT: 'agentcore',
      STREAM_REPLIES: 'false',
      ...(stopSession ? { AGENTCORE_STOP_SESSION: stopSession } : {}),
    },
    verificationPort: 0,
    executionPort: 0,
    // quiet-5m waits 3 s of real time; the emulator's idle timeout (15 min, real time) never ends a session here.
    timeScale: 0.01,
    log: capturingLog(),
  });
}

describe.each([
  ['never (the default: the idle timeout ends it)', undefined],
  ['after-answer', 'after-answer'],
  ['quiet-5m', 'quiet-5m'],
])('AGENTCORE_STOP_SESSION=%s', (_name, setting) => {
  let slack: FakeSlackApi;
  let stack: LocalStack;
  beforeAll(async () => {
    slack = await startFakeSlackApi();
    stack = await stackWith(slack, setting);
  });
  afterAll(async () => {
    await stack?.stop();
    await slack?.close();
  });

  const say = async (channel: string, text: string, threadTs?: string): Promise<string> => {
    const ts = slack.addMessage({ channel, user: 'U0ALICE', text, ...(threadTs ? { thread_ts: threadTs } : {}) });
    const { body } = slackEventEnvelope('mention', { text, ts, channel, teamId: TEAM, userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID, ...(threadTs ? { threadTs } : {}) });
    expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
    return ts;
  };
  const sessionOf = (channel: string, threadTs: string) => runtimeSessionId(conversationKey({ team_id: TEAM, channel, ts: threadTs }));

  it('ends the conversation\'s session as decided once the answer is out', async () => {
    const ts = await say('C0ONE', 'hello there');
    await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(slack.posts.map((post) => post.text)).toContain('echo: hello there');
    const emulator = stack.agentCoreEmulator!;
    const session = sessionOf('C0ONE', ts);
    const live = emulator.liveSessions().some((candidate) => candidate.sessionId === session);
    const stops = emulator.stops.filter((stop) => stop.sessionId === session);
    if (setting === undefined) {
      expect(stops).toEqual([]);
      expect(live).toBe(true);
    } else {
      expect(stops).toEqual([{ runtimeArn: expect.stringContaining('runtime/'), sessionId: session, ended: true }]);
      expect(live).toBe(false);
    }
  });

  if (setting === 'quiet-5m') {
    it('leaves the session alone while the thread goes on: only the check after the last answer ends it', async () => {
      const parent = await say('C0TWO', 'first');
      // The follow-up comes within the quiet: the first answer's check finds a newer task.
      await eventually(() => slack.posts.find((post) => post.text === 'echo: first'), 10_000);
      await say('C0TWO', 'second', parent);
      await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
      const emulator = stack.agentCoreEmulator!;
      const session = sessionOf('C0TWO', parent);
      expect(emulator.stops.filter((stop) => stop.sessionId === session)).toEqual([{ runtimeArn: expect.any(String), sessionId: session, ended: true }]);
      // One session for both messages: the first check did not end it under the follow-up.
      expect(emulator.invocations.filter((invocation) => invocation.sessionId === session && invocation.coldStart)).toHaveLength(1);
    });
  }
});

it('AGENTCORE_STOP_SESSION refuses what it does not know at start-up', async () => {
  const slack = await startFakeSlackApi();
  try {
    await expect(stackWith(slack, 'quiet-20m')).rejects.toThrow(/AGENTCORE_STOP_SESSION: a quiet of at most 900 s/);
    await expect(stackWith(slack, 'sometimes')).rejects.toThrow(/AGENTCORE_STOP_SESSION must be never, after-answer, or quiet-<N>s \/ quiet-<N>m/);
  } finally {
    await slack.close();
  }
});
