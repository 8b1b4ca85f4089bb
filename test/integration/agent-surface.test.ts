import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { appContextChangedEnvelope, appHomeOpenedEnvelope, postSignedEvent, slackEventEnvelope, type SlackEventKind } from '../../src/local/slack-event-builder';
import { feedbackClickPayload, feedbackFormSubmission, postSignedInteraction } from '../../src/local/slack-interaction-builder';
import { DEFAULT_AGENT_PROMPTS } from '../../src/verification/surface/suggested-prompts';
import { listFeedback } from '../../src/verification/surface/feedback-records';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { eventually } from '../support/http';
import { capturingLog, feedbackButtons, requestIdOfButton } from '../support/slack-surface';

/**
 * The agent surface end to end (docs/architecture.md §2.6): the local stack's four verification
 * functions over the in-process transport to a real execution runtime (echo), the real
 * @slack/web-api client against the fake Slack API — an agent app's workspace, with sessions,
 * prompts, ephemeral messages and modals — and every Slack request signed and posted to the one
 * /slack/events URL, events as JSON and interactivity as a form.
 */
const SIGNING_SECRET = 'agent-surface-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const ALICE = 'U0ALICE';

let slack: FakeSlackApi;
let stack: LocalStack;
const log = capturingLog();

beforeAll(async () => {
  slack = await startFakeSlackApi();
  stack = await startLocalStack({
    env: {
      ...slackAppEnv(slack, SIGNING_SECRET),
      TRANSPORT: 'in-process',
      // A task longer than this is `accepted` and polled; a streaming one answers with its first words.
      SYNC_BUDGET_MS: '300',
      STREAM_FIRST_TEXT_MS: '100',
      STREAM_POLL_DELAY_S: '1',
      POLL_FIRST_DELAY_S: '1',
      // Streams are held by default; a task quiet for a second is let go to polling.
      STREAM_QUIET_S: '1',
    },
    verificationPort: 0,
    executionPort: 0,
    timeScale: 0.05,
    log,
  });
});

afterAll(async () => {
  await stack?.stop();
  await slack?.close();
});

beforeEach(() => {
  slack.reset();
  log.lines.length = 0;
});

const idle = () => stack.pipeline.whenIdle({ timeoutMs: 20_000 });

/** A message to the bot (a mention, or a DM), answered before this resolves. */
async function ask(text: string, options: { channel: string; kind?: SlackEventKind }): Promise<{ ts: string; requestId: string }> {
  const ts = slack.addMessage({ channel: options.channel, user: ALICE, text });
  const { body, eventId } = slackEventEnvelope(options.kind ?? 'mention', { text, ts, channel: options.channel, teamId: TEAM, userId: ALICE, botUserId: FAKE_BOT_USER_ID });
  expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
  await idle();
  const requestId = stack.traces.byEventId(eventId)?.requestId;
  if (!requestId) throw new Error(`no request for ${eventId}`);
  return { ts, requestId };
}

/** Posts a signed event (not a message) to the ingress. */
async function sendEvent({ body }: { body: string }): Promise<number> {
  const { status } = await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET);
  await idle();
  return status;
}

/** The feedback recorded on one answer (records outlive a test). */
const feedbackOn = async (requestId: string) => (await listFeedback(stack.pipeline.records)).filter((record) => record.request_id === requestId);

/** Posts an interactivity payload, signed like Slack signs it (or with another secret). */
async function interact(payload: Record<string, unknown>, secret = SIGNING_SECRET): Promise<number> {
  const { status } = await postSignedInteraction(stack.ingressUrl, payload, secret);
  await idle();
  return status;
}

describe('agent sessions', () => {
  it('a quick task opens the thread’s session as processing, titled from the question and started by the asker, and leaves it active', async () => {
    const { ts } = await ask('what is the capital of France?', { channel: 'C0QUICK' });

    expect(slack.sessions).toEqual([{ channel: 'C0QUICK', thread_ts: ts, status: 'active', history: ['processing', 'active'], title: 'what is the capital of France?', initiator_user_id: ALICE }]);
    // The session was the sign of life, set before the answer; no thread status besides it.
    const methods = slack.requests.map((request) => request.method);
    expect(methods.indexOf('agents.sessions.setStatus')).toBeLessThan(methods.indexOf('chat.postMessage'));
    expect(slack.statuses).toEqual([]);
    expect(slack.posts.map((post) => post.text)).toEqual(['echo: what is the capital of France?']);
  });

  it('a slow task that goes accepted and is polled keeps its session processing until the answer is out', async () => {
    const { ts, requestId } = await ask('take your time #sleep=2000', { channel: 'C0SLOW' });

    const hops = stack.traces.byRequestId(requestId)!.events.map((hop) => hop.hop);
    expect(hops).toContain('accepted');
    expect(hops.filter((hop) => hop === 'poll').length).toBeGreaterThanOrEqual(1);
    expect(slack.sessionOf('C0SLOW', ts)).toEqual({ channel: 'C0SLOW', thread_ts: ts, status: 'active', history: ['processing', 'active'], title: 'take your time #sleep=2000', initiator_user_id: ALICE });
    // processing until the answer: the move to active came after the post.
    const moves = slack.requests.filter((request) => request.method === 'agents.sessions.setStatus').map((request) => request.body.status);
    expect(moves).toEqual(['processing', 'active']);
    const activeAt = slack.requests.findIndex((request) => request.method === 'agents.sessions.setStatus' && request.body.status === 'active');
    const postedAt = slack.requests.findIndex((request) => request.method === 'chat.postMessage');
    expect(postedAt).toBeLessThan(activeAt);
    expect(slack.posts.map((post) => post.text)).toEqual(['echo: take your time #sleep=2000']);
  });
});

describe('suggested prompts and context', () => {
  it('offers the prompts when the user opens the agent’s DM, without a thread (so Slack shows them)', async () => {
    expect(await sendEvent(appHomeOpenedEnvelope({ teamId: TEAM, userId: ALICE, channel: 'D0ALICE', tab: 'messages' }))).toBe(200);

    expect(slack.prompts).toEqual([{ channel: 'D0ALICE', title: DEFAULT_AGENT_PROMPTS.title, prompts: DEFAULT_AGENT_PROMPTS.home, dropped: false }]);
    expect(slack.requests.find((request) => request.method === 'assistant.threads.setSuggestedPrompts')?.body).not.toHaveProperty('thread_ts');
  });

  it('offers nothing when another tab opens', async () => {
    expect(await sendEvent(appHomeOpenedEnvelope({ teamId: TEAM, userId: ALICE, channel: 'D0ALICE', tab: 'home' }))).toBe(200);
    expect(slack.prompts).toEqual([]);
  });

  it('a channel in view offers the channel prompts, and the user’s next DM task tells the agent what they are looking at', async () => {
    const status = await sendEvent(appContextChangedEnvelope({ teamId: TEAM, userId: ALICE, channel: 'D0ALICE', entities: [{ type: 'slack#/types/channel_id', value: 'C0PROJECT' }] }));
    expect(status).toBe(200);
    expect(slack.prompts).toEqual([
      {
        channel: 'D0ALICE',
        title: DEFAULT_AGENT_PROMPTS.title,
        prompts: DEFAULT_AGENT_PROMPTS.channel.map((prompt) => ({ title: prompt.title, message: prompt.message.replaceAll('{channel}', '<#C0PROJECT>') })),
        dropped: false,
      },
    ]);

    // The echo agent's `#context` line says what the execution zone received in params.context.
    await ask('what is this about? #context', { channel: 'D0ALICE', kind: 'dm' });
    expect(slack.posts.map((post) => post.text)).toEqual(['echo: what is this about? #context\ncontext: 0 turns ()\nlooking at: channel C0PROJECT']);
  });
});

describe('feedback', () => {
  it('puts feedback buttons naming the request under a posted answer; a click is recorded once, a second click wins, and each is thanked', async () => {
    const { ts, requestId } = await ask('rate me', { channel: 'C0FEED' });
    const [answer] = slack.posts;
    const buttons = feedbackButtons(answer?.blocks);
    expect(buttons && [requestIdOfButton(buttons.positive), requestIdOfButton(buttons.negative)]).toEqual([requestId, requestId]);
    // The answer's text is the first block, so Slack shows it above the buttons.
    expect(answer?.blocks?.[0]).toEqual({ type: 'markdown', text: 'echo: rate me' });

    const click = { teamId: TEAM, userId: ALICE, channel: 'C0FEED', messageTs: answer!.ts, threadTs: ts };
    const positive = feedbackClickPayload({ ...click, value: buttons!.positive, triggerId: slack.mintTrigger() });
    expect(await interact(positive)).toBe(200);
    // Slack delivers the same click again: one record, one thank-you.
    expect(await interact(positive)).toBe(200);
    expect(await feedbackOn(requestId)).toEqual([expect.objectContaining({ request_id: requestId, agent: 'default', channel: 'C0FEED', message_ts: answer!.ts, thread_ts: ts, user: ALICE, value: 'positive' })]);
    expect(slack.ephemerals).toEqual([expect.objectContaining({ channel: 'C0FEED', user: ALICE, thread_ts: ts, text: DEFAULT_USER_MESSAGES.feedbackThanks })]);

    // A later click, with a trigger Slack issued over 3 s ago: recorded, and thanked (the form cannot open).
    const negative = feedbackClickPayload({ ...click, value: buttons!.negative, triggerId: slack.mintTrigger({ issuedAt: Date.now() - 5000 }) });
    expect(await interact(negative)).toBe(200);
    expect((await feedbackOn(requestId)).map((record) => record.value)).toEqual(['negative']);
    expect(slack.requests.filter((request) => request.method === 'views.open').map((request) => request.answer?.error)).toEqual(['expired_trigger_id']);
    expect(slack.views).toEqual([]);
    expect(slack.ephemerals).toHaveLength(2);
  });

  it('a thank-you that landed but was answered 5xx is not sent again when the click is redelivered', async () => {
    const { ts } = await ask('thank me once', { channel: 'C0THANKS' });
    const [answer] = slack.posts;
    const buttons = feedbackButtons(answer?.blocks)!;
    // Slack writes the ephemeral, then a proxy answers 503: the poster fails the message and the queue brings it back.
    slack.failNext('chat.postEphemeral', { status: 503, afterEffect: true });
    expect(await interact(feedbackClickPayload({ teamId: TEAM, userId: ALICE, channel: 'C0THANKS', messageTs: answer!.ts, threadTs: ts, value: buttons.positive }))).toBe(200);
    await eventually(() => (slack.requests.filter((request) => request.method === 'chat.postEphemeral').length >= 1 ? true : undefined), 10_000);
    await stack.pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(slack.ephemerals).toEqual([expect.objectContaining({ channel: 'C0THANKS', user: ALICE, text: DEFAULT_USER_MESSAGES.feedbackThanks })]);
    expect(slack.requests.filter((request) => request.method === 'chat.postEphemeral')).toHaveLength(1);
  });

  it('a negative click with a fresh trigger opens the form, and its text joins the record', async () => {
    const { ts, requestId } = await ask('be wrong', { channel: 'C0FORM' });
    const [answer] = slack.posts;
    const buttons = feedbackButtons(answer?.blocks)!;

    const trigger = slack.mintTrigger();
    expect(await interact(feedbackClickPayload({ teamId: TEAM, userId: ALICE, channel: 'C0FORM', messageTs: answer!.ts, threadTs: ts, value: buttons.negative, triggerId: trigger }))).toBe(200);
    expect(slack.views).toEqual([expect.objectContaining({ trigger_id: trigger, view: expect.objectContaining({ type: 'modal', title: { type: 'plain_text', text: DEFAULT_USER_MESSAGES.feedbackFormTitle.slice(0, 24) } }) })]);
    // The form opened instead of the thank-you.
    expect(slack.ephemerals).toEqual([]);

    const [opened] = slack.views;
    expect(await interact(feedbackFormSubmission({ teamId: TEAM, userId: ALICE, view: opened!.view, viewId: opened!.id, text: '  It answered a different question.  ' }))).toBe(200);
    expect(await feedbackOn(requestId)).toEqual([expect.objectContaining({ request_id: requestId, value: 'negative', comment: 'It answered a different question.' })]);
    expect(slack.ephemerals).toEqual([expect.objectContaining({ user: ALICE, text: DEFAULT_USER_MESSAGES.feedbackDetailsThanks })]);
  });

  it('puts the buttons under a streamed answer too, when the stream ends', async () => {
    const { requestId } = await ask('stream this answer to me word by word #stream=150', { channel: 'C0STREAM' });
    expect(slack.streams).toHaveLength(1);
    const [stream] = slack.streams;
    expect(stream!.state).toBe('stopped');
    const buttons = feedbackButtons(slack.messageBlocks(stream!.ts));
    expect(buttons && requestIdOfButton(buttons.positive)).toBe(requestId);
    expect(feedbackButtons(stream!.blocks)).toEqual(buttons);
    expect(slack.posts).toEqual([]);
  });

  it('refuses a forged click with 401 and records nothing', async () => {
    const { ts, requestId } = await ask('forge me', { channel: 'C0FORGED' });
    const [answer] = slack.posts;
    const click = feedbackClickPayload({ teamId: TEAM, userId: ALICE, channel: 'C0FORGED', messageTs: answer!.ts, threadTs: ts, value: feedbackButtons(answer?.blocks)!.positive, triggerId: slack.mintTrigger() });

    expect(await interact(click, 'not-the-signing-secret')).toBe(401);
    expect(await feedbackOn(requestId)).toEqual([]);
    expect(slack.ephemerals).toEqual([]);
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 'warn', message: 'refused a request with a bad Slack signature' }));
  });

  it('acknowledges an interactivity payload of a type it does not take, and says so in the log', async () => {
    const shortcut = { type: 'shortcut', team: { id: TEAM }, user: { id: ALICE, team_id: TEAM }, callback_id: 'do_something', trigger_id: slack.mintTrigger() };
    expect(await interact(shortcut)).toBe(200);

    expect(log.lines).toContainEqual({ level: 'warn', message: 'acknowledged an interactivity payload of a type the intake does not take', extra: { type: 'shortcut' } });
    expect(slack.requests).toEqual([]);
  });
});
