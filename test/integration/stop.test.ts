import type { ExecutionRuntime } from '../../src/execution/runtime';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { loadExecutionConfig } from '../../src/execution/config';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import type { Executor } from '../../src/execution/executors/executor';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { agentSessionStoppedEnvelope, postSignedEvent, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { createSlackWebClient, WebApiSlackReplies } from '../../src/slack/slack-replies';
import { InProcessTransport } from '../../src/transport/in-process';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { MemoryRecords } from '../../src/verification/stores/memory-records';
import type { ListableRecords } from '../../src/verification/stores/records';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { FAKE_BOT_USER_ID, slackAppEnv, startFakeSlackApi, type FakeSlackApi, type FakeStopEvent } from '../support/fake-slack-api';
import { eventually } from '../support/http';
import { tokensOf, utcDay } from '../../src/verification/stores/usage-store';
import type { Usage } from '../../src/contract';
import { capturingLog } from '../support/slack-surface';

/**
 * Stop (docs/architecture.md §2.6, "Stop"): the user presses the Stop button of a thread's agent
 * session while the answer streams. Slack stops the app's stream and sends
 * `agent_session_stopped`; the pipeline cancels the task in the execution zone (`cancel_task`, so
 * the model call ends), ends the live message with what was shown and the stopped note, and moves
 * the session out of `processing`. Over every transport, with the real @slack/web-api client
 * against the fake Slack API and a real execution runtime (echo, streaming word by word).
 */
const SIGNING_SECRET = 'stop-signing-secret-0123456789';
const TEAM = 'T0FAKE';
const ALICE = 'U0ALICE';
/** 200 words at 50 ms each: ten seconds of answer, so a Stop always lands mid-stream. */
const LONG_QUESTION = `${Array.from({ length: 199 }, (_, i) => `word${i + 1}`).join(' ')} #stream=50`;

const STREAMING_ENV = { SYNC_BUDGET_MS: '5000', STREAM_FIRST_TEXT_MS: '100', STREAM_POLL_DELAY_S: '1', POLL_FIRST_DELAY_S: '1' };

/** Sends Slack's `agent_session_stopped` for a Stop the user pressed, signed, to the ingress. */
async function deliverStop(ingressUrl: string, event: FakeStopEvent): Promise<number> {
  const { body } = agentSessionStoppedEnvelope({ teamId: TEAM, userId: event.user, channel: event.channel, threadTs: event.thread_ts, streamingTs: event.streaming_message_ts });
  return (await postSignedEvent(ingressUrl, body, SIGNING_SECRET)).status;
}

/** What the execution zone has on record for a request's task. */
async function taskStatus(runtime: ExecutionRuntime, taskId: string): Promise<string | undefined> {
  return (await runtime.store.get(taskId))?.status;
}

describe.each(['in-process', 'https', 'agentcore'])('Stop mid-stream over %s', (transport) => {
  let slack: FakeSlackApi;
  let stack: LocalStack;

  beforeAll(async () => {
    slack = await startFakeSlackApi();
    stack = await startLocalStack({
      env: { POWERTOOLS_LOG_LEVEL: 'SILENT', ...slackAppEnv(slack, SIGNING_SECRET), TRANSPORT: transport, ...STREAMING_ENV },
      verificationPort: 0,
      executionPort: 0,
      timeScale: 0.1,
      log: capturingLog(),
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await slack?.close();
  });

  it('cancels the task in the execution zone, ends the stream once with what was shown and the stopped note, and leaves processing', async () => {
    // What the execution zone's task service was asked to cancel, whichever transport carried it.
    const received: string[] = [];
    const service = stack.runtime!.service;
    const cancelTask = service.cancelTask.bind(service);
    const answers: Array<Awaited<ReturnType<typeof cancelTask>>> = [];
    jest.spyOn(service, 'cancelTask').mockImplementation(async (taskId) => {
      received.push(taskId);
      const answer = await cancelTask(taskId);
      answers.push(answer);
      return answer;
    });
    const channel = 'C0STOP';
    const ts = slack.addMessage({ channel, user: ALICE, text: LONG_QUESTION });
    const { body, eventId } = slackEventEnvelope('mention', { text: LONG_QUESTION, ts, channel, teamId: TEAM, userId: ALICE, botUserId: FAKE_BOT_USER_ID });
    expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);

    // The answer streams: the first words, then at least one append.
    const stream = await eventually(() => slack.streams.find((candidate) => candidate.thread_ts === ts && candidate.appends.length > 0), 10_000);
    expect(slack.sessionOf(channel, ts)?.status).toBe('processing');

    // The user presses Stop: Slack stops the stream there and then, and tells the app.
    const stop = slack.pressStop(channel, ts, ALICE);
    expect(stop.streaming_message_ts).toEqual([stream.ts]);
    const shown = stream.text;
    expect(await deliverStop(stack.ingressUrl, stop)).toBe(200);
    await stack.pipeline.whenIdle({ timeoutMs: 20_000 });

    // The execution zone was told: the task ended cancelled, and its model call (the echo's stream) was aborted.
    const hops = stack.traces.byEventId(eventId)!.events;
    const taskId = hops.find((hop) => hop.hop === 'accepted')?.detail?.task_id;
    expect(typeof taskId).toBe('string');
    expect(await taskStatus(stack.runtime!, taskId as string)).toBe('cancelled');
    expect(received.length).toBeGreaterThan(0);
    expect(new Set(received)).toEqual(new Set([taskId]));
    expect(stack.runtime!.service.busy).toBe(false);
    expect(hops.filter((hop) => hop.hop === 'stop').map((hop) => hop.detail?.cancels)).toEqual(['cancel_task']);

    // Exactly one final message: the live one, showing what was shown and the stopped note.
    expect(slack.posts).toEqual([]);
    expect(slack.streams).toHaveLength(1);
    expect(slack.messageText(stream.ts)).toBe(`${shown}\n\n${DEFAULT_USER_MESSAGES.stopped}`);
    expect(shown.startsWith('echo: word1 word2')).toBe(true);
    // Once the note was out, nothing more was appended.
    const noteAt = slack.requests.find((request) => JSON.stringify(request.body).includes(DEFAULT_USER_MESSAGES.stopped) && request.answer?.ok)?.answer?.at;
    expect(noteAt).toBeDefined();
    expect(slack.requests.filter((request) => request.method === 'chat.appendStream' && request.at > noteAt!)).toEqual([]);
    // No feedback buttons under a stopped answer.
    expect(slack.messageBlocks(stream.ts)).toBeUndefined();

    // The Stop button goes: the session left processing.
    expect(slack.sessionOf(channel, ts)).toMatchObject({ status: 'active', history: ['processing', 'active'], initiator_user_id: ALICE });

    // A stopped task pays (docs/architecture.md §2.7): the echo's own count of what it read (the 200
    // words of the question) and wrote until the cancel (the words shown), never nothing — what the
    // cancel reported, not an estimate from characters.
    const reported = (answers[0] as { usage?: Usage }).usage;
    expect(reported).toBeDefined();
    const rows = await stack.pipeline.usage.day(utcDay(Date.now()));
    const alice = rows.find((candidate) => candidate.scope === 'user' && candidate.id === `${TEAM}/${ALICE}`);
    expect(alice).toMatchObject({ tasks: 1, tokens: tokensOf(reported) });
    expect(alice!.tokens).toBeGreaterThan(200);
  });

  it('a Stop pressed by someone other than the one who asked is refused with an ephemeral: the task runs on and the answer completes', async () => {
    const channel = 'C0NOTYOURS';
    const question = `${Array.from({ length: 30 }, (_, i) => `w${i + 1}`).join(' ')} #stream=40`;
    const ts = slack.addMessage({ channel, user: ALICE, text: question });
    const { body } = slackEventEnvelope('mention', { text: question, ts, channel, teamId: TEAM, userId: ALICE, botUserId: FAKE_BOT_USER_ID });
    expect((await postSignedEvent(stack.ingressUrl, body, SIGNING_SECRET)).status).toBe(200);
    const stream = await eventually(() => slack.streams.find((candidate) => candidate.thread_ts === ts && candidate.appends.length > 0), 10_000);

    // Bob presses Stop on Alice's answer: Slack stops the stream it showed; the app takes nothing from him.
    expect(await deliverStop(stack.ingressUrl, slack.pressStop(channel, ts, 'U0BOB'))).toBe(200);
    await stack.pipeline.whenIdle({ timeoutMs: 20_000 });

    expect(slack.ephemerals).toEqual([expect.objectContaining({ channel, user: 'U0BOB', text: DEFAULT_USER_MESSAGES.stopNotYours })]);
    // The whole answer, no stopped note: the task was neither marked stopped nor cancelled.
    expect(slack.messageText(stream.ts)).toContain('w30 #stream=40');
    expect(slack.messageText(stream.ts)).not.toContain(DEFAULT_USER_MESSAGES.stopped);
  });
});

describe('Stop before the task starts, and after it ended', () => {
  let slack: FakeSlackApi;
  let runtime: ExecutionRuntime;
  let pipeline: LocalPipeline;
  /** execute_task calls that reached the execution runtime. */
  let executeCalls = 0;
  /** The task ids of the cancel_task calls that reached the execution runtime, and how many get_task_result calls did. */
  let cancelled: string[] = [];
  let pollCalls = 0;
  /** The usage each cancel_task answer reported. */
  let cancelUsage: Array<Usage | undefined> = [];
  /** The task ids execute_task answered with. */
  let accepted: Array<string | undefined> = [];
  /** While set, the task's read of its thread's Stop waits for it: the task has not been picked up yet. */
  let holdTask: Promise<void> | undefined;
  const log = capturingLog();

  beforeAll(async () => {
    slack = await startFakeSlackApi();
    // The echo, reporting what it read as soon as it starts (as a model that thinks has read its
    // input): a task stopped while it thinks has a usage to report with its cancel.
    const echo = new EchoExecutor();
    const reading: Executor = {
      name: 'echo',
      execute: (params, context) => {
        context.used?.({ input_tokens: params.text.split(/\s+/).length, output_tokens: 0, model: 'echo' });
        return echo.execute(params, context);
      },
    };
    runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '300' }), log, executor: reading });
    const transport = new InProcessTransport(async (bytes) => {
      const request = JSON.parse(Buffer.from(bytes).toString()) as { method?: string; params?: { task_id?: string } };
      if (request.method === 'execute_task') executeCalls += 1;
      if (request.method === 'get_task_result') pollCalls += 1;
      if (request.method === 'cancel_task') cancelled.push(String(request.params?.task_id));
      const answer = await runtime.dispatch(bytes);
      if (request.method === 'execute_task' && answer !== undefined) accepted.push((JSON.parse(answer) as { result?: { task_id?: string } }).result?.task_id);
      if (request.method === 'cancel_task' && answer !== undefined) cancelUsage.push((JSON.parse(answer) as { result?: { usage?: Usage } }).result?.usage);
      return answer;
    });
    pipeline = createLocalPipeline({
      agent: new ExecutionAgent('default', createProtocol('execute-task'), transport),
      slack: new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl })),
      records: heldRecords(new MemoryRecords(), () => holdTask),
      signingSecret: SIGNING_SECRET,
      env: { ...slackAppEnv(slack, SIGNING_SECRET), STOP_ADMIN_USERS: 'U0ADMIN', ALLOWED_USER_IDS: `${ALICE},U0ADMIN,U0BOB` },
      timeScale: 0.05,
      log,
    });
  });
  afterAll(async () => {
    await pipeline?.stop();
    await slack?.close();
  });
  beforeEach(() => {
    slack.reset();
    executeCalls = 0;
    cancelled = [];
    cancelUsage = [];
    pollCalls = 0;
    accepted = [];
  });

  const send = async (body: string) => (await pipeline.ingress({ headers: { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) }, body })).statusCode;
  const mention = (channel: string, text: string) => {
    const ts = slack.addMessage({ channel, user: ALICE, text });
    return { ts, body: slackEventEnvelope('mention', { text, ts, channel, teamId: TEAM, userId: ALICE, botUserId: FAKE_BOT_USER_ID }).body };
  };
  /** The Stop event Slack sends for a button pressed now (it may be delivered late). */
  const stopEvent = (channel: string, threadTs: string, userId = ALICE): string => agentSessionStoppedEnvelope({ teamId: TEAM, userId, channel, threadTs }).body;

  it('a user on STOP_ADMIN_USERS stops anyone\'s task; a Stop from outside the allow-lists changes nothing, and is not even queued', async () => {
    const outsider = mention('C0ADMIN', 'outsider tries #sleep=1500');
    expect(await send(outsider.body)).toBe(200);
    await eventually(() => (executeCalls > 0 ? true : undefined), 10_000);
    const stopsQueued = () => log.lines.filter((line) => line.message === 'Stop queued').length;
    const queuedBefore = stopsQueued();
    expect(await send(stopEvent('C0ADMIN', outsider.ts, 'U0OUTSIDER'))).toBe(200);
    expect(stopsQueued()).toBe(queuedBefore);
    expect(log.lines).toContainEqual(expect.objectContaining({ message: 'ignored a request from outside the allow-lists' }));
    await pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(slack.posts.map((post) => post.text)).toEqual(['echo: outsider tries #sleep=1500']);

    const long = mention('C0ADMIN', 'the admin stops this #sleep=3000');
    expect(await send(long.body)).toBe(200);
    await eventually(() => (executeCalls > 1 ? true : undefined), 10_000);
    expect(await send(stopEvent('C0ADMIN', long.ts, 'U0ADMIN'))).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(slack.posts.filter((post) => post.thread_ts === long.ts || post.ts === long.ts).map((post) => post.text)).toEqual([DEFAULT_USER_MESSAGES.stopped]);
  });

  it('a Stop that comes before the task is picked up drops it with the stopped note: it never reaches the execution zone', async () => {
    let release!: () => void;
    holdTask = new Promise((resolve) => (release = resolve));
    try {
      const { ts, body } = mention('C0EARLY', 'never mind');
      expect(await send(body)).toBe(200);
      // The user presses Stop; agent-invoker takes it while the task still waits to be picked up.
      expect(await send(stopEvent('C0EARLY', ts))).toBe(200);
      await eventually(() => log.lines.find((line) => line.message === 'Stop acknowledged: nothing is working in this thread'), 10_000);
    } finally {
      holdTask = undefined;
      release();
    }
    await pipeline.whenIdle({ timeoutMs: 20_000 });

    expect(executeCalls).toBe(0);
    expect(slack.posts.map((post) => [post.channel, post.text])).toEqual([['C0EARLY', DEFAULT_USER_MESSAGES.stopped]]);
    expect(slack.streams).toEqual([]);
    // No session was opened for a task that never ran.
    expect(slack.sessions.filter((session) => session.history.includes('processing'))).toEqual([]);
  });

  it('a Stop while the task is polled sends the execution zone cancel_task for it: nothing else would (a poll that finds the Stop only ends)', async () => {
    // Prepare: a task that runs long, past execute_task's budget: accepted, then polled.
    const { ts, body } = mention('C0POLLED', 'think hard #sleep=30000');
    expect(await send(body)).toBe(200);
    await eventually(() => pollCalls > 0 || undefined, 10_000);
    const [taskId] = accepted;
    expect(typeof taskId).toBe('string');

    // Act: the user presses Stop.
    expect(await send(stopEvent('C0POLLED', ts))).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });

    // Assess: what the execution zone received, and what it did with it.
    expect(cancelled).toEqual([taskId]);
    expect((await runtime.store.get(taskId!))?.status).toBe('cancelled');
    expect(slack.posts.map((post) => post.text)).toEqual([DEFAULT_USER_MESSAGES.stopped]);
    // The task is charged what the cancel reported it used, not an estimate from characters (the
    // poll that found the Stop settled it with the usage the Stop kept).
    const [reported] = cancelUsage;
    expect(reported).toBeDefined();
    const [user] = (await pipeline.usage.day(utcDay(Date.now()))).filter((row) => row.scope === 'channel' && row.id === `${TEAM}/C0POLLED`);
    expect(user).toMatchObject({ tasks: 1, tokens: tokensOf(reported), input_tokens: reported!.input_tokens });
  });

  it('a Stop after the answer was queued (its first post refused, ratelimited) is acknowledged: the answer is posted whole, once, with no stopped note', async () => {
    slack.failNext('chat.postMessage', { retryAfterSeconds: 1 });
    const { ts, body } = mention('C0QUEUED', 'answered before the stop');
    expect(await send(body)).toBe(200);
    // The answer is settled and waits on the replies queue for Slack's Retry-After.
    await eventually(() => slack.requests.find((request) => request.method === 'chat.postMessage' && request.answer?.error === 'ratelimited'), 10_000);
    expect(await send(stopEvent('C0QUEUED', ts))).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });

    expect(slack.posts.map((post) => post.text)).toEqual(['echo: answered before the stop']);
    expect(log.lines).toContainEqual(expect.objectContaining({ message: 'Stop acknowledged: the task had already ended; its answer is posted whole' }));
    expect(slack.sessionOf('C0QUEUED', ts)?.status ?? 'active').toBe('active');
  });

  it('a Stop after the answer is out is acknowledged and changes nothing', async () => {
    const { ts, body } = mention('C0LATE', 'all done');
    expect(await send(body)).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(slack.posts.map((post) => post.text)).toEqual(['echo: all done']);
    const before = { posts: slack.posts.length, updates: slack.updates.length, streams: slack.streams.length, ephemerals: slack.ephemerals.length, executeCalls };

    expect(await send(stopEvent('C0LATE', ts))).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });

    expect({ posts: slack.posts.length, updates: slack.updates.length, streams: slack.streams.length, ephemerals: slack.ephemerals.length, executeCalls }).toEqual(before);
    expect(slack.requests.filter((request) => request.method.startsWith('chat.'))).toHaveLength(before.posts);
    expect(slack.sessionOf('C0LATE', ts)?.status).toBe('active');
    expect(log.lines).toContainEqual(expect.objectContaining({ message: 'Stop acknowledged: nothing is working in this thread' }));
  });

  it('40 Stops on an idle thread make one session-status call; the thread\'s next task still sets its own', async () => {
    const { ts, body } = mention('C0MANY', 'first question');
    expect(await send(body)).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });
    const statusCalls = () => slack.requests.filter((request) => request.method === 'agents.sessions.setStatus' && (request.body as { thread_ts?: string }).thread_ts === ts);
    const before = statusCalls().length;

    // The user presses Stop 40 times, all at once, on a thread with nothing working.
    const statuses = await Promise.all(Array.from({ length: 40 }, () => send(stopEvent('C0MANY', ts))));
    expect(statuses.every((status) => status === 200)).toBe(true);
    await pipeline.whenIdle({ timeoutMs: 30_000 });
    expect(log.lines.filter((line) => line.message === 'Stop acknowledged: nothing is working in this thread').length).toBeGreaterThanOrEqual(40);
    expect(statusCalls().length - before).toBeLessThanOrEqual(2);
    expect(slack.sessionOf('C0MANY', ts)?.status).toBe('active');

    // A follow-up in the thread: its task moves the session to processing and back, as any task does.
    const followUp = slack.addMessage({ channel: 'C0MANY', user: ALICE, text: 'and another', thread_ts: ts });
    const afterStops = statusCalls().length;
    expect(await send(slackEventEnvelope('mention', { text: 'and another', ts: followUp, threadTs: ts, channel: 'C0MANY', teamId: TEAM, userId: ALICE, botUserId: FAKE_BOT_USER_ID }).body)).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(statusCalls().slice(afterStops).map((request) => (request.body as { status?: string }).status)).toEqual(expect.arrayContaining(['processing']));
    expect(slack.sessionOf('C0MANY', ts)?.status).toBe('active');
    // And a Stop after that task is the first since it: its own call.
    const afterTask = statusCalls().length;
    expect(await send(stopEvent('C0MANY', ts))).toBe(200);
    await pipeline.whenIdle({ timeoutMs: 20_000 });
    expect(statusCalls().length - afterTask).toBe(1);
  }, 60_000);
});

/**
 * Records whose reads of a thread's Stop (`stop#…`) wait while `hold()` gives a promise: what
 * agent-invoker reads first when it picks a task up, so holding it keeps the task not yet picked
 * up while a Stop is handled.
 */
function heldRecords(records: ListableRecords, hold: () => Promise<void> | undefined): ListableRecords {
  return {
    get: async (key) => {
      const held = key.startsWith('stop#') ? hold() : undefined;
      if (held) await held;
      return records.get(key);
    },
    put: (key, value, ttl) => records.put(key, value, ttl),
    putIf: (key, value, ttl, when) => records.putIf(key, value, ttl, when),
    list: (prefix) => records.list(prefix),
  };
}
