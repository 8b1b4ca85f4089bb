import type { ExecutionRuntime } from '../../src/execution/runtime';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { agentSessionStoppedEnvelope, postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { buttonClickPayload, feedbackFormSubmission, postSignedInteraction } from '../../src/local/slack-interaction-builder';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { eventually } from '../support/http';
import { capturingLog, questionButtons, type QuestionButton } from '../support/slack-surface';
import { SIGN_IN_URL, startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { SIGNED_IN_TEXT } from '../../src/verification/questions/answer-rules';

/**
 * A question to a person (docs/architecture.md, "Questions"), through the local stack with the
 * real @slack/web-api client against the fake Slack API and the real execution runtime (the
 * echo's `#ask=`): the question is posted with buttons and the session suspended; the asker's
 * click resumes the same task once; anyone else is refused; an approver may answer; it expires;
 * Stop cancels it while it waits.
 */
const SIGNING_SECRET = 'questions-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const CAROL = 'U0CAROL';

function env(slack: FakeSlackApi, transport: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { POWERTOOLS_LOG_LEVEL: 'SILENT', ...slackAppEnv(slack, SIGNING_SECRET), TRANSPORT: transport, SYNC_BUDGET_MS: '3000', POLL_FIRST_DELAY_S: '1', STREAM_POLL_DELAY_S: '1', ...extra };
}

/** Counts the execution zone's task starts and resumes, whichever transport carried them. */
function countCalls(runtime: ExecutionRuntime): { executes: string[]; resumes: string[]; cancels: string[] } {
  const calls = { executes: [] as string[], resumes: [] as string[], cancels: [] as string[] };
  const service = runtime.service;
  const execute = service.executeTask.bind(service);
  const executeStreamed = service.executeTaskStreamed.bind(service);
  const resume = service.resumeTask.bind(service);
  const cancel = service.cancelTask.bind(service);
  jest.spyOn(service, 'executeTask').mockImplementation(async (params, id) => (calls.executes.push(String(id)), execute(params, id)));
  jest.spyOn(service, 'executeTaskStreamed').mockImplementation(async (params, id, hold) => (calls.executes.push(String(id)), executeStreamed(params, id, hold)));
  jest.spyOn(service, 'resumeTask').mockImplementation(async (params) => (calls.resumes.push(params.task_id), resume(params)));
  jest.spyOn(service, 'cancelTask').mockImplementation(async (taskId) => (calls.cancels.push(taskId), cancel(taskId)));
  return calls;
}

type Asked = { ts: string; questionTs: string; buttons: Record<string, QuestionButton>; eventId: string };

/** Mentions the bot with `text` in `channel`; resolves once the question is posted with its buttons. */
async function ask(stack: LocalStack, slack: FakeSlackApi, channel: string, text: string, user = ALICE): Promise<Asked> {
  const ts = slack.addMessage({ channel, user, text });
  const { body, eventId } = slackEventEnvelope('mention', { text, ts, channel, teamId: TEAM, userId: user, botUserId: FAKE_BOT_USER_ID });
  expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
  const question = await eventually(() => slack.posts.find((post) => post.thread_ts === ts && questionButtons(slack.messageBlocks(post.ts))), 15_000);
  return { ts, questionTs: question.ts, buttons: questionButtons(slack.messageBlocks(question.ts))!, eventId };
}

async function click(stack: LocalStack, asked: Asked, channel: string, label: string, user: string): Promise<number> {
  const button = asked.buttons[label]!;
  const payload = buttonClickPayload({ teamId: TEAM, userId: user, actionId: button.action_id, value: button.value, channel, messageTs: asked.questionTs, threadTs: asked.ts });
  return (await postSignedInteraction(stack.ingressUrl, payload, SIGNING_SECRET)).status;
}

/**
 * The tasks and replies queues idle: what a click or a question set off is done. (The polls queue
 * holds each waiting question's timer, delayed for up to 15 minutes: never idle while one waits.)
 */
async function quiet(stack: LocalStack): Promise<void> {
  await stack.pipeline.queues.tasks.whenIdle({ timeoutMs: 10_000 });
  await stack.pipeline.queues.replies.whenIdle({ timeoutMs: 10_000 });
  await stack.pipeline.queues.tasks.whenIdle({ timeoutMs: 10_000 });
}

/** The thread's bot messages (posted, streamed or edited), as they read now. */
function threadTexts(slack: FakeSlackApi, ts: string): string[] {
  const posted = slack.posts.filter((post) => post.thread_ts === ts).map((post) => post.ts);
  const streamed = slack.streams.filter((stream) => stream.thread_ts === ts).map((stream) => stream.ts);
  return [...posted, ...streamed].map((messageTs) => slack.messageText(messageTs) ?? '');
}

describe.each(['in-process', 'https', 'agentcore'])('a question to a person over %s', (transport) => {
  let slack: FakeSlackApi;
  let stack: LocalStack;

  beforeAll(async () => {
    slack = await startFakeSlackApi();
    stack = await startLocalStack({ env: env(slack, transport), verificationPort: 0, executionPort: 0, timeScale: 0.1, log: capturingLog() });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await stack?.stop();
    await slack?.close();
  });
  afterEach(() => jest.restoreAllMocks());

  it('posts the question with buttons and suspends the session; another user is refused; the asker’s clicks resume the same task once', async () => {
    const calls = countCalls(stack.runtime!);
    const channel = 'C0ASK1';
    const asked = await ask(stack, slack, channel, 'deploy it #ask=Deploy to production?');
    expect(Object.keys(asked.buttons)).toEqual(['Approve', 'Reject']);
    expect(slack.messageText(asked.questionTs)).toContain('Deploy to production?');
    // A button names the task and the option, never the answer alone.
    expect(asked.buttons.Approve!.value).not.toContain('approve');
    await eventually(() => (slack.sessionOf(channel, asked.ts)?.status === 'suspended' ? true : undefined), 10_000);

    // Someone else clicks: told so, to them alone; the question still waits.
    expect(await click(stack, asked, channel, 'Approve', CAROL)).toBe(200);
    await eventually(() => slack.ephemerals.find((ephemeral) => ephemeral.user === CAROL && ephemeral.text === DEFAULT_USER_MESSAGES.questionNotYours), 10_000);
    await quiet(stack);
    expect(questionButtons(slack.messageBlocks(asked.questionTs))).toBeDefined();
    expect(calls.resumes).toEqual([]);

    // The asker clicks twice (a double click): the task resumes once.
    const [first, second] = await Promise.all([click(stack, asked, channel, 'Approve', ALICE), click(stack, asked, channel, 'Approve', ALICE)]);
    expect([first, second]).toEqual([200, 200]);
    const answer = await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('\nanswer: Approve')), 15_000);
    expect(answer).toContain(`\nanswer: Approve (by slack:${TEAM}:${ALICE})`);
    await quiet(stack);
    expect(calls.executes).toHaveLength(1);
    expect(calls.resumes).toHaveLength(1);
    const taskId = stack.traces.byEventId(asked.eventId)!.events.find((hop) => hop.hop === 'asked')?.detail?.task_id;
    expect(calls.resumes).toEqual([taskId]);
    expect(threadTexts(slack, asked.ts).filter((text) => text.includes('\nanswer:'))).toHaveLength(1);
    // Its second click is not told that its own first one closed the question.
    expect(slack.ephemerals.filter((ephemeral) => ephemeral.user === ALICE)).toEqual([]);

    // The question shows who answered what, without buttons; the session went back to work, then rest.
    expect(questionButtons(slack.messageBlocks(asked.questionTs))).toBeUndefined();
    expect(JSON.stringify(slack.messageBlocks(asked.questionTs))).toContain(`*Approve* — answered by <@${ALICE}>`);
    expect(slack.sessionOf(channel, asked.ts)?.history).toEqual(['processing', 'suspended', 'processing', 'active']);
    // Who is asking rides on the resume as on the task: AgentCore's runtimeUserId, recorded by the emulator.
    const invocations = stack.agentCoreEmulator?.invocations.filter((invocation) => invocation.status === 200) ?? [];
    if (transport === 'agentcore') expect(new Set(invocations.map((invocation) => invocation.userId))).toEqual(new Set([`slack:${TEAM}:${ALICE}`]));
  });

  it('a Slack retry of the click and a redelivered answer message resume nothing more', async () => {
    const calls = countCalls(stack.runtime!);
    const channel = 'C0ASK2';
    const asked = await ask(stack, slack, channel, 'again #ask=Ship it?');
    const sent: string[] = [];
    const send = stack.pipeline.queues.tasks.send.bind(stack.pipeline.queues.tasks);
    jest.spyOn(stack.pipeline.queues.tasks, 'send').mockImplementation(async (message, options) => (sent.push(JSON.stringify(message)), send(message, options)));
    // Slack retries the click (the same payload, the same action_ts): it is the same click.
    const button = asked.buttons.Reject!;
    const payload = buttonClickPayload({ teamId: TEAM, userId: ALICE, actionId: button.action_id, value: button.value, channel, messageTs: asked.questionTs, threadTs: asked.ts });
    expect((await postSignedInteraction(stack.ingressUrl, payload, SIGNING_SECRET)).status).toBe(200);
    expect((await postSignedInteraction(stack.ingressUrl, payload, SIGNING_SECRET)).status).toBe(200);
    await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('\nanswer: Reject')), 15_000);
    await quiet(stack);
    const answers = sent.map((body) => JSON.parse(body) as { kind?: string }).filter((message) => message.kind === 'answer');
    expect(answers).toHaveLength(1);
    const answerMessage = answers[0];
    // SQS delivers it again.
    await send(answerMessage as never);
    await quiet(stack);
    expect(calls.resumes).toHaveLength(1);
    expect(threadTexts(slack, asked.ts).filter((text) => text.includes('\nanswer:'))).toHaveLength(1);
  });

  it('a second question in one task: round 2 is posted, answered and resumed once; round 1’s closed buttons answer nothing', async () => {
    const calls = countCalls(stack.runtime!);
    const channel = 'C0ASK5';
    const first = await ask(stack, slack, channel, 'two steps #ask=First?#ask=Second?');
    expect(slack.messageText(first.questionTs)).toContain('First?');
    expect(await click(stack, first, channel, 'Approve', ALICE)).toBe(200);
    const secondPost = await eventually(() => slack.posts.find((post) => post.thread_ts === first.ts && post.ts !== first.questionTs && questionButtons(slack.messageBlocks(post.ts))), 15_000);
    expect(slack.messageText(secondPost.ts)).toContain('Second?');
    const second: Asked = { ...first, questionTs: secondPost.ts, buttons: questionButtons(slack.messageBlocks(secondPost.ts))! };
    await quiet(stack);
    expect(calls.resumes).toHaveLength(1);

    // Round 1's Reject, clicked while round 2 waits (a stale button): it answers neither round.
    expect(await click(stack, first, channel, 'Reject', ALICE)).toBe(200);
    await eventually(() => slack.ephemerals.find((ephemeral) => ephemeral.user === ALICE && ephemeral.text === DEFAULT_USER_MESSAGES.questionClosed), 10_000);
    await quiet(stack);
    expect(calls.resumes).toHaveLength(1);
    expect(questionButtons(slack.messageBlocks(second.questionTs))).toBeDefined();

    expect(await click(stack, second, channel, 'Reject', ALICE)).toBe(200);
    const answer = await eventually(() => threadTexts(slack, first.ts).find((text) => text.includes('\nanswer: Approve') && text.includes('\nanswer: Reject')), 15_000);
    expect(answer).toContain(`\nanswer: Approve (by slack:${TEAM}:${ALICE})\nanswer: Reject (by slack:${TEAM}:${ALICE})`);
    await quiet(stack);
    // One task, asked twice and resumed twice — once a round.
    expect(calls.executes).toHaveLength(1);
    expect(calls.resumes).toHaveLength(2);
    expect(new Set(calls.resumes).size).toBe(1);
    expect(threadTexts(slack, first.ts).filter((text) => text.includes('\nanswer:'))).toHaveLength(1);
    expect(JSON.stringify(slack.messageBlocks(first.questionTs))).toContain(`*Approve* — answered by <@${ALICE}>`);
    expect(JSON.stringify(slack.messageBlocks(second.questionTs))).toContain(`*Reject* — answered by <@${ALICE}>`);
  });

  it('text the agent streams just before its question stays above it, whole, and the resumed answer follows, each shown once', async () => {
    const channel = 'C0ASK6';
    // Streamed a few milliseconds a word: the question comes before a stream's next read.
    const text = 'ship the release notes to everyone now #stream=5 #ask=Ship it?';
    const asked = await ask(stack, slack, channel, text);
    await quiet(stack);
    const before = threadTexts(slack, asked.ts).filter((shown) => shown.startsWith('echo: '));
    expect(before).toEqual([`echo: ${text}`]);
    expect(await click(stack, asked, channel, 'Approve', ALICE)).toBe(200);
    await eventually(() => threadTexts(slack, asked.ts).find((shown) => shown.includes('answer: Approve')), 15_000);
    await quiet(stack);
    const texts = threadTexts(slack, asked.ts);
    expect(texts.filter((shown) => shown.includes(`echo: ${text}`))).toHaveLength(1);
    expect(texts.filter((shown) => shown.includes('answer: Approve'))).toHaveLength(1);
  });

  it('Stop while the question waits cancels the task, closes the question and leaves the session', async () => {
    const calls = countCalls(stack.runtime!);
    const channel = 'C0ASK3';
    const asked = await ask(stack, slack, channel, 'wait #ask=Proceed?');
    await quiet(stack);
    const stop = agentSessionStoppedEnvelope({ teamId: TEAM, userId: ALICE, channel, threadTs: asked.ts });
    expect((await postSignedEvent(stack.ingressUrl, stop.body, SIGNING_SECRET)).status).toBe(200);
    await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes(DEFAULT_USER_MESSAGES.stopped)), 15_000);
    await quiet(stack);
    expect(calls.cancels).toHaveLength(1);
    expect(questionButtons(slack.messageBlocks(asked.questionTs))).toBeUndefined();
    expect(JSON.stringify(slack.messageBlocks(asked.questionTs))).toContain(DEFAULT_USER_MESSAGES.questionStopped);
    expect(slack.sessionOf(channel, asked.ts)?.status).toBe('active');
    // A click after the Stop answers nothing.
    expect(await click(stack, asked, channel, 'Approve', ALICE)).toBe(200);
    await eventually(() => slack.ephemerals.find((ephemeral) => ephemeral.user === ALICE && ephemeral.text === DEFAULT_USER_MESSAGES.questionClosed), 10_000);
    expect(calls.resumes).toEqual([]);
  });
});

describe('a question to a person: expiry, approvers, a typed answer', () => {
  let slack: FakeSlackApi;
  let stack: LocalStack;

  beforeAll(async () => {
    slack = await startFakeSlackApi();
    const agents = [{ name: 'echo', protocol: 'execute-task', transport: 'in-process', approvers: [BOB] }];
    // 60 s to answer, at a hundredth of real time: 0.6 s.
    stack = await startLocalStack({ env: env(slack, 'in-process', { EXECUTION_AGENTS: JSON.stringify(agents), INPUT_TIMEOUT_S: '60' }), verificationPort: 0, executionPort: 0, timeScale: 0.01, log: capturingLog() });
  });
  afterAll(async () => {
    await stack?.stop();
    await slack?.close();
  });
  afterEach(() => jest.restoreAllMocks());

  it('an approver on the agent’s list may answer', async () => {
    const channel = 'C0ASK4';
    const asked = await ask(stack, slack, channel, 'approve #ask=Merge?');
    expect(await click(stack, asked, channel, 'Approve', BOB)).toBe(200);
    const answer = await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('\nanswer:')), 15_000);
    expect(answer).toContain(`\nanswer: Approve (by slack:${TEAM}:${BOB})`);
  });

  it('an answer whose delivery failed after it closed the question is resumed by the redelivery, once', async () => {
    const calls = countCalls(stack.runtime!);
    const channel = 'C0ASK9';
    const asked = await ask(stack, slack, channel, 'flaky #ask=Go?');
    // The first delivery closes the pause, then cannot queue the question's update (an SQS fault): it fails, and SQS delivers it again.
    const replies = stack.pipeline.queues.replies;
    const send = replies.send.bind(replies);
    let failed = 0;
    jest.spyOn(replies, 'send').mockImplementation(async (message, options) => {
      if ((message as { kind?: string }).kind === 'question-closed' && failed === 0) {
        failed += 1;
        throw new Error('SQS: connection reset');
      }
      return send(message, options);
    });
    expect(await click(stack, asked, channel, 'Approve', ALICE)).toBe(200);
    const answer = await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('\nanswer:')), 20_000);
    expect(answer).toContain(`\nanswer: Approve (by slack:${TEAM}:${ALICE})`);
    await quiet(stack);
    expect(failed).toBe(1);
    expect(calls.resumes).toHaveLength(1);
    expect(questionButtons(slack.messageBlocks(asked.questionTs))).toBeUndefined();
  });

  it('a slow task asks from a poll, and its resumed run is polled to its answer', async () => {
    // Quiet for 6 s: the held stream lets it go after 5 s (STREAM_QUIET_S) and a poll finds the question;
    // resumed, it is past the runtime's sync budget (3 s) again: accepted, then polled to the end.
    const channel = 'C0ASK8';
    const asked = await ask(stack, slack, channel, 'slow #sleep=6000 #ask=Go on?');
    const hops = () => stack.traces.byEventId(asked.eventId)!.events.map((hop) => hop.hop);
    expect(hops().indexOf('poll')).toBeGreaterThan(-1);
    expect(hops().indexOf('poll')).toBeLessThan(hops().indexOf('asked'));
    expect(await click(stack, asked, channel, 'Approve', ALICE)).toBe(200);
    const answer = await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('\nanswer:')), 30_000);
    expect(answer).toContain(`\nanswer: Approve (by slack:${TEAM}:${ALICE})`);
    expect(hops().lastIndexOf('poll')).toBeGreaterThan(hops().indexOf('answered'));
  });

  it('an unanswered question expires: the task is cancelled, the thread told, the buttons gone', async () => {
    const calls = countCalls(stack.runtime!);
    const channel = 'C0ASK5';
    const asked = await ask(stack, slack, channel, 'later #ask=Anyone there?');
    await eventually(() => threadTexts(slack, asked.ts).find((text) => text === DEFAULT_USER_MESSAGES.questionExpired), 15_000);
    await quiet(stack);
    expect(calls.cancels).toHaveLength(1);
    expect(questionButtons(slack.messageBlocks(asked.questionTs))).toBeUndefined();
    expect(JSON.stringify(slack.messageBlocks(asked.questionTs))).toContain(DEFAULT_USER_MESSAGES.questionExpired);
    expect(slack.sessionOf(channel, asked.ts)?.status).toBe('active');
    expect(calls.resumes).toEqual([]);
  });

  it('a question that takes text opens the answer form, whose text resumes the task', async () => {
    const channel = 'C0ASK6';
    const asked = await ask(stack, slack, channel, 'name it #ask-text=What should it be called?');
    expect(Object.keys(asked.buttons)).toEqual([DEFAULT_USER_MESSAGES.questionTypeAnswer]);
    const button = asked.buttons[DEFAULT_USER_MESSAGES.questionTypeAnswer]!;
    const triggerId = slack.mintTrigger();
    const payload = buttonClickPayload({ teamId: TEAM, userId: ALICE, actionId: button.action_id, value: button.value, channel, messageTs: asked.questionTs, threadTs: asked.ts, triggerId });
    expect((await postSignedInteraction(stack.ingressUrl, payload, SIGNING_SECRET)).status).toBe(200);
    const view = await eventually(() => slack.views.find((opened) => opened.trigger_id === triggerId), 10_000);
    const submitted = feedbackFormSubmission({ teamId: TEAM, userId: ALICE, view: view.view, text: 'Nightingale' });
    expect((await postSignedInteraction(stack.ingressUrl, submitted, SIGNING_SECRET)).status).toBe(200);
    const answer = await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('\nanswer:')), 15_000);
    expect(answer).toContain(`\nanswer: Nightingale (by slack:${TEAM}:${ALICE})`);
  });
});

describe.each(['1.0', '0.3'])('a question from an A2A %s agent (@a2a-js/sdk, input-required)', (dialect) => {
  let slack: FakeSlackApi;
  let stack: LocalStack;
  let agent: A2aTestAgent;

  beforeAll(async () => {
    slack = await startFakeSlackApi();
    agent = await startSdkA2aAgent({ legacyCompat: true });
    const agents = [{ name: 'a2a', protocol: 'a2a', a2aVersion: dialect, transport: 'https', url: agent.url }];
    stack = await startLocalStack({ env: env(slack, 'https', { EXECUTION_AGENTS: JSON.stringify(agents) }), verificationPort: 0, timeScale: 0.1, log: capturingLog() });
  });
  afterAll(async () => {
    await stack?.stop();
    await slack?.close();
    await agent?.close();
  });

  it('asks in the thread, and the typed answer goes back on the same task, which completes', async () => {
    const channel = 'C0ASK7';
    const asked = await ask(stack, slack, channel, 'the release #confirm');
    expect(slack.messageText(asked.questionTs)).toContain('Deploy the release?');
    // A2A gives no options: the answer is typed.
    const button = asked.buttons[DEFAULT_USER_MESSAGES.questionTypeAnswer]!;
    const triggerId = slack.mintTrigger();
    const payload = buttonClickPayload({ teamId: TEAM, userId: ALICE, actionId: button.action_id, value: button.value, channel, messageTs: asked.questionTs, threadTs: asked.ts, triggerId });
    expect((await postSignedInteraction(stack.ingressUrl, payload, SIGNING_SECRET)).status).toBe(200);
    const view = await eventually(() => slack.views.find((opened) => opened.trigger_id === triggerId), 10_000);
    expect((await postSignedInteraction(stack.ingressUrl, feedbackFormSubmission({ teamId: TEAM, userId: ALICE, view: view.view, text: 'yes, go' }), SIGNING_SECRET)).status).toBe(200);
    const answer = await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('a2a confirmed')), 15_000);
    expect(answer).toContain('a2a confirmed: yes, go');
    // One task at the agent: the answer went back with the task's own id.
    const sent = agent.requests.map((request) => request.body.params as { message?: { taskId?: string } } | undefined).filter((params) => params?.message);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.message!.taskId).toBeUndefined();
    expect(typeof sent[1]!.message!.taskId).toBe('string');
    // Each dialect on its own wire: 0.3's methods are `message/send`, `message/stream`; 1.0's `SendMessage`, `SendStreamingMessage`.
    expect(agent.requests.every((request) => String(request.body.method).startsWith('message/') === (dialect === '0.3'))).toBe(true);
    expect(questionButtons(slack.messageBlocks(asked.questionTs))).toBeUndefined();
  });

  it('auth-required: the sign-in link goes to the asker alone, and "I have signed in" resumes the same task', async () => {
    const channel = 'C0ASK8';
    const before = agent.requests.length;
    const asked = await ask(stack, slack, channel, 'the report #signin');
    expect(Object.keys(asked.buttons)).toEqual([DEFAULT_USER_MESSAGES.questionSignedIn]);
    const link = await eventually(() => slack.ephemerals.find((ephemeral) => ephemeral.text.includes(SIGN_IN_URL)), 10_000);
    expect(link.user).toBe(ALICE);
    // Nothing anyone else can read carries the link: not the question, not the thread.
    expect(slack.ephemerals.filter((ephemeral) => ephemeral.text.includes(SIGN_IN_URL)).map((ephemeral) => ephemeral.user)).toEqual([ALICE]);
    expect(threadTexts(slack, asked.ts).filter((text) => text.includes(SIGN_IN_URL))).toEqual([]);
    expect(JSON.stringify(slack.messageBlocks(asked.questionTs))).not.toContain(SIGN_IN_URL);

    expect(await click(stack, asked, channel, DEFAULT_USER_MESSAGES.questionSignedIn, ALICE)).toBe(200);
    const answer = await eventually(() => threadTexts(slack, asked.ts).find((text) => text.includes('a2a confirmed')), 15_000);
    expect(answer).toContain(`a2a confirmed: ${SIGNED_IN_TEXT}`);
    // The same task at the agent: the second message carries the first one's task id.
    const sent = agent.requests.slice(before).map((request) => request.body.params as { message?: { taskId?: string } } | undefined).filter((params) => params?.message);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.message!.taskId).toBeUndefined();
    expect(link.text).toContain(`task=${sent[1]!.message!.taskId}`);
    expect(questionButtons(slack.messageBlocks(asked.questionTs))).toBeUndefined();
  });
});

describe('a question in the playground (the terminal workspace)', () => {
  it('shows the question’s buttons, and a click posted through the playground answers it', async () => {
    const stack = await startLocalStack({ env: { TRANSPORT: 'in-process', POWERTOOLS_LOG_LEVEL: 'SILENT' }, verificationPort: 0, executionPort: 0, timeScale: 0.05, replyWriter: () => undefined, log: capturingLog() });
    try {
      await stack.say('ship #ask=Ship it now?');
      const question = await eventually(() => stack.consoleReplies!.posted.find((reply) => reply.buttons?.length), 15_000);
      expect(question.buttons!.map((button) => button.label)).toEqual(['Approve', 'Reject']);
      const post = (path: string, body: unknown) => fetch(new URL(path, stack.playgroundUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const click = await post('/api/button/click', { message_ts: question.ts, action_id: question.buttons![1]!.actionId });
      expect(click.status).toBe(200);
      const answer = await eventually(() => stack.consoleReplies!.posted.find((reply) => reply.text.includes('\nanswer: Reject')), 15_000);
      expect(answer.text).toContain('answer: Reject (by slack:');
      // Answered: the question keeps its text and loses its buttons.
      expect(question.buttons).toBeUndefined();
      expect(question.text).toContain('answered by');
      expect((await post('/api/button/click', { message_ts: question.ts, action_id: 'question_answer_0' })).status).toBe(400);
    } finally {
      await stack.stop();
    }
  });
});
