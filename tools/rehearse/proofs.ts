import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { appMentionEnvelope, postSignedEvent } from '../../src/local/slack-event-builder';
import type { FakeSlackApi } from '../../test/support/fake-slack-api';
import type { FakeSqsMessage } from '../../test/support/fake-sqs';
import type { Deployment } from './deployment';
import type { Sandbox } from './lambda-sandbox';

/**
 * What the rehearsal proves of the deployed bundles, each step through the parts AWS would use:
 * Slack's signed requests through the REST API's proxy route, SQS messages through the event
 * source mappings (batches, partial failures), the execution zone through its function URL in
 * RESPONSE_STREAM mode, Slack through the fake Slack API. Each proof passes or fails with what
 * was seen; a failure names the function and the runtime's error where there is one.
 */
export type Proof = { name: string; passed: boolean; detail: string };

type Context = { deployment: Deployment; slack: FakeSlackApi; signingSecret: string };

const FUNCTIONS = { events: 'SlackEvents', poller: 'AsyncResult', poster: 'SlackPoster', url: 'FunctionUrl/UrlHandler', worker: 'FunctionUrl/Worker' } as const;

/** What every proof works with: the deployment, Slack, and the way to Slack's request URL. */
type Stage = Context & {
  maxWaitMs: number;
  fn(name: string): Sandbox;
  /** POSTs a Slack event to the REST API's /slack/events, signed with `secret` (the signing secret by default). */
  post(body: string, secret?: string): Promise<{ status: number; text: string }>;
  /** The messages the tasks queue took. */
  tasks(): FakeSqsMessage[];
  /** The mention the ack proof sent, whose reply the next proof waits for. */
  mention: ReturnType<typeof appMentionEnvelope>;
};

/** The proofs, in order: each returns what it saw, or throws what it saw instead. */
const PROOFS: ReadonlyArray<[string, (stage: Stage) => Promise<string>]> = [
  ['slack-events answers a signed url_verification', urlVerification],
  ['slack-events refuses a forged app_mention with 401 and queues nothing', forgedMention],
  ['slack-events acks a signed app_mention: the claim written, the task queued', signedMention],
  ['one Slack message becomes one reply in the thread (agent-invoker → function URL → slack-poster)', oneReply],
  ['the function URL streams SSE in RESPONSE_STREAM mode', streamedAnswers],
  ['a slow task is handed to the worker, polled by async-result, and answered once', slowTask],
  ['slack-poster takes a batch and hands back only the bad record (ReportBatchItemFailures)', partialBatch],
  ['no function URL, API or event source mapping failed unexpectedly', noUnexpectedFailures],
];

export async function runProofs(context: Context, options: { maxWaitMs: number; log: (line: string) => void }): Promise<Proof[]> {
  const { deployment } = context;
  const eventsUrl = `${[...deployment.apis.values()][0]?.url ?? 'http://no-rest-api'}/slack/events`;
  const stage: Stage = {
    ...context,
    maxWaitMs: options.maxWaitMs,
    fn: (name) => {
      const sandbox = deployment.functions.get(name);
      if (!sandbox) throw new Error(`the assembly has no function ${name} (it has ${[...deployment.functions.keys()].join(', ')})`);
      return sandbox;
    },
    post: (body, secret = context.signingSecret) => postSignedEvent(eventsUrl, body, secret),
    tasks: () => deployment.aws.sqs.sent.filter((m) => m.queueUrl === stage.fn(FUNCTIONS.events).environment.TASK_QUEUE_URL),
    mention: appMentionEnvelope({ text: 'hello from the rehearsal' }),
  };
  const proofs: Proof[] = [];
  for (const mapping of deployment.mappings.values()) mapping.start();
  try {
    for (const [name, check] of PROOFS) {
      try {
        const detail = await check(stage);
        proofs.push({ name, passed: true, detail });
        options.log(`  ok   ${name}: ${detail}`);
      } catch (error) {
        proofs.push({ name, passed: false, detail: (error as Error).message });
        options.log(`  FAIL ${name}: ${(error as Error).message}`);
      }
    }
  } finally {
    for (const mapping of deployment.mappings.values()) await mapping.stop();
  }
  return proofs;
}

async function urlVerification(stage: Stage): Promise<string> {
  const body = JSON.stringify({ token: 'rehearsal', challenge: 'rehearsal-challenge-3f1a', type: 'url_verification' });
  const answer = await stage.post(body);
  expect(answer.status === 200 && answer.text.includes('rehearsal-challenge-3f1a'), `answered ${answer.status} ${answer.text}`);
  return `200 ${answer.text}`;
}

async function forgedMention(stage: Stage): Promise<string> {
  const before = stage.tasks().length;
  const answer = await stage.post(appMentionEnvelope({ text: 'forged' }).body, 'not-the-signing-secret');
  expect(answer.status === 401, `answered ${answer.status} ${answer.text}`);
  expect(stage.tasks().length === before, 'a task was queued');
  return `401 ${answer.text}`;
}

async function signedMention(stage: Stage): Promise<string> {
  const answer = await stage.post(stage.mention.body);
  expect(answer.status === 200, `answered ${answer.status} ${answer.text}`);
  const queued = stage.tasks().filter((m) => m.body.includes('hello from the rehearsal'));
  expect(queued.length === 1, `${queued.length} tasks queued`);
  const claims = await itemsMentioning(stage.deployment, stage.fn(FUNCTIONS.events).environment.STATE_TABLE_NAME!, stage.mention.eventId);
  expect(claims.length > 0, `no item of the state table names ${stage.mention.eventId}`);
  return `200; 1 task on the tasks queue; ${claims.length} state item(s) for ${stage.mention.eventId}`;
}

async function oneReply(stage: Stage): Promise<string> {
  const text = await waitForReply(stage.slack, stage.mention.ts, 'rehearsed: hello from the rehearsal', stage.maxWaitMs);
  const replies = botMessagesIn(stage.slack, stage.mention.ts);
  expect(replies.length === 1, `${replies.length} bot messages in the thread: ${JSON.stringify(replies)}`);
  return `"${text}"`;
}

async function streamedAnswers(stage: Stage): Promise<string> {
  const answers = stage.deployment.urls.get(FUNCTIONS.url)?.answers ?? [];
  const streamed = answers.filter((a) => a.mode === 'streaming' && a.contentType?.startsWith('text/event-stream'));
  expect(streamed.length > 0, `answers: ${JSON.stringify(answers)}`);
  return `${streamed.length} of ${answers.length} answers streamed as text/event-stream`;
}

/** Slower than SYNC_BUDGET_MS and than the invoker's quiet stream: the worker runs it, async-result follows it. */
async function slowTask(stage: Stage): Promise<string> {
  const slow = appMentionEnvelope({ text: 'a slow one #sleep=12000' });
  const answer = await stage.post(slow.body);
  expect(answer.status === 200, `answered ${answer.status}`);
  await waitForReply(stage.slack, slow.ts, 'rehearsed: a slow one', stage.maxWaitMs + 30_000);
  const worker = stage.deployment.mappings.get(FUNCTIONS.worker)!;
  const workerBatches = worker.batches.filter((b) => b.failedIds.length === 0 && !b.invocationError);
  expect(workerBatches.length > 0, `the worker ran no batch: ${JSON.stringify(worker.batches)}`);
  const polls = (stage.deployment.mappings.get(FUNCTIONS.poller)?.batches ?? []).filter((b) => b.failedIds.length === 0 && !b.invocationError);
  expect(polls.length > 0, 'async-result ran no batch: the invoker held the stream to the end');
  const replies = botMessagesIn(stage.slack, slow.ts);
  expect(replies.length === 1, `${replies.length} bot messages in the thread`);
  return `worker batches: ${workerBatches.length}; async-result batches: ${polls.length}`;
}

/** A real reply and a record that is not one, in one batch: only the bad one comes back. */
async function partialBatch(stage: Stage): Promise<string> {
  const poster = stage.deployment.mappings.get(FUNCTIONS.poster)!;
  await poster.stop();
  try {
    const third = appMentionEnvelope({ text: 'third message' });
    const answer = await stage.post(third.body);
    expect(answer.status === 200, `answered ${answer.status}`);
    await waitFor(() => poster.pending() > 0, stage.maxWaitMs, 'no reply reached the replies queue');
    await sendRaw(stage.deployment, stage.deployment.aws.sqs.queueUrl(poster.queueName), JSON.stringify({ not: 'a reply' }));
    const batches = await poster.deliverDue();
    const mixed = batches.find((b) => b.messageIds.length > 1);
    expect(mixed !== undefined, `no batch held both records: ${JSON.stringify(batches)}`);
    expect(mixed.failedIds.length === 1 && !mixed.invocationError, `the batch came back as ${JSON.stringify(mixed)}`);
    await waitForReply(stage.slack, third.ts, 'rehearsed: third message', stage.maxWaitMs);
    return `batch of ${mixed.messageIds.length}: ${mixed.failedIds.length} handed back, the reply posted`;
  } finally {
    poster.start();
  }
}

async function noUnexpectedFailures(stage: Stage): Promise<string> {
  const { deployment } = stage;
  const failures = [...deployment.urls.values(), ...deployment.apis.values()].flatMap((g) => g.failures);
  const errors = [...deployment.mappings.values()].flatMap((m) => m.batches.filter((b) => b.invocationError).map((b) => `${m.name}: ${b.invocationError}`));
  expect(failures.length === 0 && errors.length === 0, [...failures, ...errors].join('\n'));
  return 'none';
}

function expect(condition: boolean, otherwise: string): asserts condition {
  if (!condition) throw new Error(otherwise);
}

async function waitFor(ready: () => boolean, timeoutMs: number, otherwise: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${otherwise} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The bot's messages in a thread: posts and streams. */
function botMessagesIn(slack: FakeSlackApi, threadTs: string): Array<{ ts: string; text: string }> {
  return [...slack.posts.filter((p) => p.thread_ts === threadTs), ...slack.streams.filter((s) => s.thread_ts === threadTs)].map((m) => ({ ts: m.ts, text: slack.messageText(m.ts) ?? '' }));
}

async function waitForReply(slack: FakeSlackApi, threadTs: string, expected: string, timeoutMs: number): Promise<string> {
  let found: string | undefined;
  await waitFor(
    () => (found = botMessagesIn(slack, threadTs).find((m) => m.text.includes(expected))?.text) !== undefined && slack.streams.filter((s) => s.thread_ts === threadTs).every((s) => s.state !== 'streaming'),
    timeoutMs,
    `no finished reply "${expected}" in thread ${threadTs} (bot messages there: ${JSON.stringify(botMessagesIn(slack, threadTs))})`,
  );
  return found!;
}

async function itemsMentioning(deployment: Deployment, table: string, text: string): Promise<unknown[]> {
  const { Items = [] } = await deployment.aws.dynamodb.client.send(new ScanCommand({ TableName: table }));
  return Items.filter((item) => JSON.stringify(item).includes(text));
}

/** A message sent to a queue as another producer would (the SDK against the SQS stand-in). */
async function sendRaw(deployment: Deployment, queueUrl: string, body: string): Promise<void> {
  const client = new SQSClient({ endpoint: deployment.aws.sqs.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' } });
  try {
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  } finally {
    client.destroy();
  }
}
