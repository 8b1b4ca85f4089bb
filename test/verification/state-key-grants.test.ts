import type { APIGatewayProxyResult, Context, SQSBatchResponse } from 'aws-lambda';
import { agentSessionStoppedEnvelope, appContextChangedEnvelope, LOCAL_DM_CHANNEL, slackEventEnvelope } from '../../src/local/slack-event-builder';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { buttonClickPayload, feedbackClickPayload } from '../../src/local/slack-interaction-builder';
import type { VerificationFunction } from '../../src/verification/pipeline-settings';
import { STATE_KEYS, stateKeyOf, statePrefixesOf } from '../../src/verification/stores/state-keys';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { keyOf } from '../support/dynamodb-fault-proxy';
import { feedbackButtons, questionButtons } from '../support/slack-surface';
import { apiGatewayEvent, SqsReplay, startFaultPipeline, type FaultPipeline } from '../faults/pipeline';
import { lambdaContext } from '../support/lambda-context';

/**
 * Each function writes and reads only the state keys its IAM grant names (docs/deploy.md, "Who
 * may touch which keys"). The four Lambda handlers run as deployed against dynalite behind a
 * recording proxy, through a day of everything that touches the state table — messages, an
 * answer with a file, a click, a Stop, a user not allowed, what a user looks at, a budget
 * refusal — and every key each function named is held against the grant CDK gives it
 * (src/verification/stores/state-keys.ts → `dynamodb:LeadingKeys`). A store that starts writing a
 * prefix the list does not give its function turns this red before IAM refuses it in a deployment.
 */
const SIGNING_SECRET = 'fault-suite-signing-secret';
const ALLOWED = 'ULOCALUSER';
const STRANGER = 'USTRANGER';

const FUNCTIONS: Record<'slackEvents' | 'agentInvoker' | 'asyncResult' | 'slackPoster', VerificationFunction> = {
  slackEvents: 'slackEvents',
  agentInvoker: 'agentInvoker',
  asyncResult: 'asyncResult',
  slackPoster: 'slackPoster',
};

/**
 * Granted for a path this day does not take: async-result reads the thread's latest task only to
 * end its AgentCore session (AGENTCORE_STOP_SESSION, with the agentcore transport).
 */
const NOT_TAKEN_TODAY: Partial<Record<VerificationFunction, string[]>> = {
  asyncResult: [STATE_KEYS.work.prefix],
};

/** Both on the pipeline's runtime (EXECUTION_URL): the default one, and one that answers a channel of its own. */
const AGENTS = [
  { name: 'main', protocol: 'execute-task', transport: 'https', default: true },
  { name: 'other', protocol: 'execute-task', transport: 'https', channels: ['C0OTHER'] },
];

let pipeline: FaultPipeline;
/** Every state-table key each function named, with the operation. */
const touched = new Map<VerificationFunction, Array<{ operation: string; key: string }>>();

beforeAll(async () => {
  // A small daily budget per user, so the day ends in a refusal; tasks answer in the sync budget
  // unless told to sleep or stream. Two agents (EXECUTION_AGENTS): a thread's follow-up goes to its agent.
  pipeline = await startFaultPipeline({ syncBudgetMs: 400, env: { ALLOWED_USER_IDS: ALLOWED, USER_DAILY_TOKEN_BUDGET: '150', INPUT_TIMEOUT_S: '60', STREAM_QUIET_S: '1', STREAM_HOLD_S: '1', EXECUTION_AGENTS: JSON.stringify(AGENTS) } });
  recordEachFunction(pipeline);
}, 60_000);
afterAll(() => pipeline?.close());

/** Wraps each handler: the requests the proxy forwards while it runs are its own (the replays run one function at a time). */
function recordEachFunction(running: FaultPipeline): void {
  for (const name of Object.keys(FUNCTIONS) as Array<keyof typeof FUNCTIONS>) {
    const handler = running.handlers[name] as (event: never, context: Context) => Promise<APIGatewayProxyResult | SQSBatchResponse>;
    (running.handlers as Record<string, unknown>)[name] = async (event: never, context: Context) => {
      const from = running.dynamo.forwarded.length;
      try {
        return await handler(event, context);
      } finally {
        const seen = running.dynamo.forwarded.slice(from).filter((request) => request.input.TableName === 'state');
        const list = touched.get(FUNCTIONS[name]) ?? [];
        list.push(...seen.map((request) => ({ operation: request.operation, key: keyOf(request) ?? '(no key)' })));
        touched.set(FUNCTIONS[name], list);
      }
    };
  }
}

/** Slack delivers a signed request once, answered in time: the clock stays on one day, so the day's budget and the threads' records hold. */
async function deliver(body: string, contentType?: string): Promise<number> {
  const headers = { ...slackSignatureHeaders(SIGNING_SECRET, body), ...(contentType ? { 'content-type': contentType } : {}) };
  const response = await pipeline.handlers.slackEvents(apiGatewayEvent(body, headers), lambdaContext(10_000, 'slack-events'));
  return response.statusCode;
}

const interact = (payload: Record<string, unknown>) => deliver(`payload=${encodeURIComponent(JSON.stringify(payload))}`, 'application/x-www-form-urlencoded');

async function day(): Promise<void> {
  const replay = new SqsReplay(pipeline);
  pipeline.clock.begin();

  // An answer with a file, shared in the thread.
  const first = pipeline.mention('hello there #file=notes.txt');
  await deliver(first.body);
  await replay.drain();
  const answer = pipeline.slack.posts.find((post) => post.thread_ts === first.ts && post.text?.startsWith('echo: hello there'));
  expect(answer).toBeDefined();

  // Its feedback buttons clicked.
  const buttons = feedbackButtons(answer!.blocks);
  expect(buttons).toBeDefined();
  expect(await interact(feedbackClickPayload({ userId: ALLOWED, channel: answer!.channel, messageTs: answer!.ts, threadTs: first.ts, value: buttons!.positive }))).toBe(200);
  await replay.drain();

  // A follow-up in the thread without a mention (the answered thread is looked up).
  const followUp = slackEventEnvelope('thread-reply', { text: 'and another thing', threadTs: first.ts, userId: ALLOWED });
  await deliver(followUp.body);
  await replay.drain();

  // A task that outlasts the sync budget, stopped while it works.
  const slow = pipeline.mention('take your time #sleep=8000');
  await deliver(slow.body);
  await replay.deliverVisible();
  await deliver(agentSessionStoppedEnvelope({ threadTs: slow.ts, userId: ALLOWED }).body);
  await replay.drain();
  // Stop pressed again once nothing runs there: the session is moved out of processing once.
  await deliver(agentSessionStoppedEnvelope({ threadTs: slow.ts, userId: ALLOWED }).body);
  await replay.drain();

  // A streamed answer that outlasts the stream's hold: polled to its end, shown live, with a file.
  const polled = pipeline.mention('slowly now one word at a time #stream=300 #file=later.txt');
  await deliver(polled.body);
  await replay.deliverVisible();
  await replay.drain();
  expect(pipeline.slack.streams.length + pipeline.slack.posts.length).toBeGreaterThan(0);

  // Someone not on the allow-list, told so once.
  await deliver(pipeline.mention('let me in', { userId: STRANGER }).body);
  await replay.drain();

  // What the user looks at, then a DM that carries it.
  await deliver(appContextChangedEnvelope({ userId: ALLOWED, entities: [{ type: 'slack#/types/channel_id', value: 'C0LOOKED' }] }).body);
  await deliver(slackEventEnvelope('dm', { text: 'what am I looking at', userId: ALLOWED, channel: LOCAL_DM_CHANNEL }).body);
  await replay.drain();

  // A question to a person: posted with buttons; the asker's click resumes the same task.
  const asking = pipeline.mention('ship it #ask=Deploy to production?');
  await deliver(asking.body);
  while ((await replay.deliverVisible()) > 0);
  const question = pipeline.slack.posts.find((post) => post.thread_ts === asking.ts && questionButtons(pipeline.slack.messageBlocks(post.ts)));
  expect(question).toBeDefined();
  const approve = questionButtons(pipeline.slack.messageBlocks(question!.ts))!.Approve!;
  expect(await interact(buttonClickPayload({ userId: ALLOWED, actionId: approve.action_id, value: approve.value, channel: question!.channel, messageTs: question!.ts, threadTs: asking.ts }))).toBe(200);
  while ((await replay.deliverVisible()) > 0);
  expect(pipeline.slack.posts.some((post) => post.thread_ts === asking.ts && /approve/i.test(post.text ?? '') && post.ts !== question!.ts)).toBe(true);
  // Another left unanswered: it expires after INPUT_TIMEOUT_S (60 s here), and the task is cancelled.
  const unanswered = pipeline.mention('hold on #ask=Proceed?');
  await deliver(unanswered.body);
  await replay.drain();
  expect(pipeline.slack.posts.some((post) => post.thread_ts === unanswered.ts && post.text === DEFAULT_USER_MESSAGES.questionExpired)).toBe(true);

  // The day's budget spent: the next message is refused with a notice.
  const words = Array.from({ length: 120 }, (_, index) => `word${index}`).join(' ');
  await deliver(pipeline.mention(words).body);
  await replay.drain();
  await deliver(pipeline.mention('one more please').body);
  await replay.drain();
}

describe('the state keys each function touches', () => {
  beforeAll(async () => {
    await day();
  }, 120_000);

  it.each(Object.values(FUNCTIONS))('%s names only keys under its granted prefixes', (fn) => {
    const granted = statePrefixesOf(fn);
    const outside = (touched.get(fn) ?? []).filter(({ key }) => !granted.some((prefix) => key.startsWith(prefix)));
    expect(outside).toEqual([]);
    expect(touched.get(fn)?.length).toBeGreaterThan(0);
  });

  it('each function is granted no prefix beyond what it touched, but for the paths this day does not take', () => {
    for (const fn of Object.values(FUNCTIONS)) {
      const reached = new Set((touched.get(fn) ?? []).map(({ key }) => stateKeyOf(key)?.prefix));
      expect([fn, statePrefixesOf(fn).filter((prefix) => !reached.has(prefix))]).toEqual([fn, NOT_TAKEN_TODAY[fn] ?? []]);
    }
  });

  it('every key any function names is of a kind the list knows', () => {
    const unknown = [...touched.values()].flat().filter(({ key }) => stateKeyOf(key) === undefined);
    expect(unknown).toEqual([]);
  });

  it('the day reached every kind of key in the list (an entry no function writes any more is stale)', () => {
    const reached = new Set([...touched.values()].flat().map(({ key }) => stateKeyOf(key)?.prefix));
    expect(Object.values(STATE_KEYS).map((key) => key.prefix).filter((prefix) => !reached.has(prefix))).toEqual([]);
  });
});
