import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { createLogger } from '../../src/observability/logger';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';

/**
 * Live answers end to end (docs/architecture.md §2.5, docs/contract.md "Streaming"): the local
 * stack's four verification functions, a real execution runtime whose echo executor streams word by
 * word, the https transport on loopback, and the real @slack/web-api client against the fake Slack
 * API, which answers the status, stream and update methods with Slack's own refusals.
 */
const SIGNING_SECRET = 'live-answers-signing-secret-0123456789';
const TEAM = 'T0FAKE';

let slack: FakeSlackApi;
let stack: LocalStack;

beforeAll(async () => {
  slack = await startFakeSlackApi();
  stack = await startLocalStack({
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      ...slackAppEnv(slack, SIGNING_SECRET),
      TRANSPORT: 'https',
      SYNC_BUDGET_MS: '5000',
      STREAM_FIRST_TEXT_MS: '100',
      STREAM_POLL_DELAY_S: '1',
    },
    verificationPort: 0,
    executionPort: 0,
    // Queue delays (the 1 s poll while text flows) at a tenth of real time.
    timeScale: 0.1,
    log: createLogger('local'),
  });
});

afterAll(async () => {
  await stack?.stop();
  await slack?.close();
});

beforeEach(() => slack.reset());

/** A question of ~12 words streamed at 100 ms a word: the answer grows over a second or so, in several appends (a held stream appends a few words at a time). */
const QUESTION = 'tell me about the two zones and how they meet #stream=250';
const ANSWER = `echo: ${QUESTION}`;

async function ask(options: { channel: string; kind?: 'mention' | 'dm'; text?: string }): Promise<{ ts: string }> {
  const text = options.text ?? QUESTION;
  const ts = slack.addMessage({ channel: options.channel, user: 'U0ALICE', text });
  const { body } = slackEventEnvelope(options.kind ?? 'mention', { text, ts, channel: options.channel, teamId: TEAM, userId: 'U0ALICE', botUserId: FAKE_BOT_USER_ID });
  expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
  await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
  return { ts };
}

/** The bot's messages in the thread, as Slack shows them now. */
async function botMessages(channel: string, threadTs: string): Promise<string[]> {
  const response = await fetch(`${slack.apiUrl}conversations.replies`, {
    method: 'POST',
    headers: { authorization: `Bearer ${slack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ channel, ts: threadTs }),
  });
  const answer = (await response.json()) as { messages?: Array<{ user?: string; ts: string }> };
  return (answer.messages ?? []).filter((message) => message.user === FAKE_BOT_USER_ID).map((message) => slack.messageText(message.ts) ?? '');
}

describe('live answers', () => {
  it('shows a sign of life, streams the answer as it is produced, and ends with exactly the answer, once', async () => {
    const { ts } = await ask({ channel: 'C0LIVE' });
    // The sign of life: the thread's agent session, processing before the answer, active after it.
    expect(slack.requests[0]).toMatchObject({ method: 'agents.sessions.setStatus', body: { status: 'processing' } });
    expect(slack.sessionOf('C0LIVE', ts)?.history).toEqual(['processing', 'active']);
    // One stream, in the thread, for the user who asked (channels need the recipient), grown in several steps.
    expect(slack.streams).toHaveLength(1);
    const [stream] = slack.streams;
    expect(stream).toMatchObject({ channel: 'C0LIVE', thread_ts: ts, recipient_user_id: 'U0ALICE', recipient_team_id: TEAM, state: 'stopped' });
    expect(stream!.appends.length).toBeGreaterThanOrEqual(2);
    // Exactly one message of the bot in the thread, holding exactly the answer.
    expect(await botMessages('C0LIVE', ts)).toEqual([ANSWER]);
    expect(slack.posts).toEqual([]);
  });

  it('shows the thread’s status as the sign of life where Slack opens no agent session', async () => {
    slack.failWhen('agents.sessions.setStatus', () => true, { error: 'not_allowed_token_type', times: Infinity });
    const { ts } = await ask({ channel: 'C0NOSESSION' });
    expect(slack.statuses.map((status) => status.status)).toEqual(['is working on it…']);
    expect(slack.sessions).toEqual([]);
    expect(await botMessages('C0NOSESSION', ts)).toEqual([ANSWER]);
  });

  it('falls back to one posted message that is updated where Slack refuses the stream', async () => {
    slack.failWhen('chat.startStream', () => true, { error: 'missing_recipient_team_id', times: Infinity });
    const { ts } = await ask({ channel: 'C0NOSTREAM' });
    expect(slack.streams).toEqual([]);
    expect(slack.posts).toHaveLength(1);
    expect(slack.updates.length).toBeGreaterThanOrEqual(2);
    expect(await botMessages('C0NOSTREAM', ts)).toEqual([ANSWER]);
  });

  it('still ends with exactly the answer when Slack ends the stream early (message_not_in_streaming_state)', async () => {
    // Slack ends the stream (it timed out) as soon as it starts: the appends and the stop that
    // follow are refused, and the answer must still end up in that message, once.
    const asked = ask({ channel: 'C0EXPIRED' });
    const [started] = await slack.waitForStreams(1, { timeoutMs: 10_000 });
    slack.expireStream(started!.ts);
    const { ts } = await asked;

    expect(slack.streams).toHaveLength(1);
    expect(slack.streams[0]).toMatchObject({ state: 'expired', thread_ts: ts });
    const refused = slack.requests.filter((request) => (request.method === 'chat.appendStream' || request.method === 'chat.stopStream') && request.answer?.error === 'message_not_in_streaming_state');
    expect(refused.map((request) => request.method)).toContain('chat.stopStream');
    expect(await botMessages('C0EXPIRED', ts)).toEqual([ANSWER]);
    expect(slack.posts).toEqual([]);
  });

  it('answers a task that does not stream as before: one message, no stream', async () => {
    const { ts } = await ask({ channel: 'C0QUICK', text: 'quick one' });
    expect(slack.streams).toEqual([]);
    expect(await botMessages('C0QUICK', ts)).toEqual(['echo: quick one']);
  });

  it('in a DM, streams the answer to the user who asked, named as in channels (Slack requires it only outside DMs)', async () => {
    const { ts } = await ask({ channel: 'D0DIRECT', kind: 'dm' });
    expect(slack.streams).toHaveLength(1);
    expect(slack.streams[0]).toMatchObject({ channel: 'D0DIRECT', thread_ts: ts, recipient_user_id: 'U0ALICE', recipient_team_id: TEAM, state: 'stopped' });
    expect(await botMessages('D0DIRECT', ts)).toEqual([ANSWER]);
  });

  it('never shows a preview twice that Slack answered with a server error after it landed; the answer ends exactly as written', async () => {
    // The second append lands, then Slack answers 500: it must not be sent again.
    let appends = 0;
    slack.failWhen('chat.appendStream', () => (appends += 1) === 2, { status: 500, afterEffect: true });
    const { ts } = await ask({ channel: 'C0LANDED' });

    const [stream] = slack.streams;
    const failed = slack.requests.findIndex((request) => request.method === 'chat.appendStream' && request.answer?.status === 500);
    expect(failed).toBeGreaterThan(0);
    // What it appended is in the stream once; no append after it (the record is dirty: previews stop).
    expect(stream!.appends.length).toBe(2);
    expect(slack.requests.slice(failed + 1).filter((request) => request.method === 'chat.appendStream')).toEqual([]);
    expect(await botMessages('C0LANDED', ts)).toEqual([ANSWER]);
    expect(slack.posts).toEqual([]);
  });

  it('carries on with a stream whose start landed but was answered 503: no orphan "streaming" message, no second message', async () => {
    // Slack (or a proxy before it) starts the stream, then answers 503: the client is not told its ts.
    slack.failNext('chat.startStream', { status: 503, afterEffect: true });
    const { ts } = await ask({ channel: 'C0STARTLOST' });

    expect(slack.requests.filter((request) => request.method === 'chat.startStream').map((request) => request.answer?.status)).toEqual([503]);
    // The stream was found in the thread and carried on: appended to, and stopped with the answer.
    expect(slack.streams).toHaveLength(1);
    expect(slack.streams[0]).toMatchObject({ thread_ts: ts, state: 'stopped' });
    expect(slack.streams[0]!.appends.length).toBeGreaterThan(0);
    expect(await botMessages('C0STARTLOST', ts)).toEqual([ANSWER]);
    expect(slack.posts).toEqual([]);
  });
});
