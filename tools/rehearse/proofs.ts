import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { appMentionEnvelope, postSignedEvent } from '../../src/local/slack-event-builder';
import type { FakeSlackApi } from '../../test/support/fake-slack-api';
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

const FUNCTIONS = { events: 'SlackEvents', invoker: 'AgentInvoker', poller: 'AsyncResult', poster: 'SlackPoster', url: 'FunctionUrl/UrlHandler', worker: 'FunctionUrl/Worker' } as const;

export async function runProofs(rehearsal: Context, options: { maxWaitMs: number; log: (line: string) => void }): Promise<Proof[]> {
  const { deployment, slack, signingSecret: SIGNING_SECRET } = rehearsal;
  const proofs: Proof[] = [];
  const prove = async (name: string, check: () => Promise<string>) => {
    try {
      const detail = await check();
      proofs.push({ name, passed: true, detail });
      options.log(`  ok   ${name}: ${detail}`);
    } catch (error) {
      proofs.push({ name, passed: false, detail: (error as Error).message });
      options.log(`  FAIL ${name}: ${(error as Error).message}`);
    }
  };
  const fn = (name: string): Sandbox => {
    const sandbox = deployment.functions.get(name);
    if (!sandbox) throw new Error(`the assembly has no function ${name} (it has ${[...deployment.functions.keys()].join(', ')})`);
    return sandbox;
  };
  const api = [...deployment.apis.values()][0];
  const eventsUrl = `${api?.url ?? 'http://no-rest-api'}/slack/events`;
  const tasksQueue = () => fn(FUNCTIONS.events).environment.TASK_QUEUE_URL!;
  const tasks = () => deployment.aws.sqs.sent.filter((m) => m.queueUrl === tasksQueue());
  for (const mapping of deployment.mappings.values()) mapping.start();

  await prove('slack-events answers a signed url_verification', async () => {
    const body = JSON.stringify({ token: 'rehearsal', challenge: 'rehearsal-challenge-3f1a', type: 'url_verification' });
    const answer = await postSignedEvent(eventsUrl, body, SIGNING_SECRET);
    expect(answer.status === 200 && answer.text.includes('rehearsal-challenge-3f1a'), `answered ${answer.status} ${answer.text}`);
    return `200 ${answer.text}`;
  });

  await prove('slack-events refuses a forged app_mention with 401 and queues nothing', async () => {
    const before = tasks().length;
    const { body } = appMentionEnvelope({ text: 'forged' });
    const answer = await postSignedEvent(eventsUrl, body, 'not-the-signing-secret');
    expect(answer.status === 401, `answered ${answer.status} ${answer.text}`);
    expect(tasks().length === before, 'a task was queued');
    return `401 ${answer.text}`;
  });

  const mention = appMentionEnvelope({ text: 'hello from the rehearsal' });
  await prove('slack-events acks a signed app_mention: the claim written, the task queued', async () => {
    const answer = await postSignedEvent(eventsUrl, mention.body, SIGNING_SECRET);
    expect(answer.status === 200, `answered ${answer.status} ${answer.text}`);
    const queued = tasks().filter((m) => m.body.includes('hello from the rehearsal'));
    expect(queued.length === 1, `${queued.length} tasks queued`);
    const claims = await itemsMentioning(deployment, fn(FUNCTIONS.events).environment.STATE_TABLE_NAME!, mention.eventId);
    expect(claims.length > 0, `no item of the state table names ${mention.eventId}`);
    return `200; 1 task on the tasks queue; ${claims.length} state item(s) for ${mention.eventId}`;
  });

  await prove('one Slack message becomes one reply in the thread (agent-invoker → function URL → slack-poster)', async () => {
    const text = await waitForReply(slack, mention.ts, 'rehearsed: hello from the rehearsal', options.maxWaitMs);
    const replies = botMessagesIn(slack, mention.ts);
    expect(replies.length === 1, `${replies.length} bot messages in the thread: ${JSON.stringify(replies)}`);
    return `"${text}"`;
  });

  await prove('the function URL streams SSE in RESPONSE_STREAM mode', async () => {
    const answers = deployment.urls.get(FUNCTIONS.url)?.answers ?? [];
    const streamed = answers.filter((a) => a.mode === 'streaming' && a.contentType?.startsWith('text/event-stream'));
    expect(streamed.length > 0, `answers: ${JSON.stringify(answers)}`);
    return `${streamed.length} of ${answers.length} answers streamed as text/event-stream`;
  });

  const slow = appMentionEnvelope({ text: 'a slow one #sleep=12000' });
  await prove('a slow task is handed to the worker, polled by async-result, and answered once', async () => {
    const answer = await postSignedEvent(eventsUrl, slow.body, SIGNING_SECRET);
    expect(answer.status === 200, `answered ${answer.status}`);
    await waitForReply(slack, slow.ts, 'rehearsed: a slow one', options.maxWaitMs + 30_000);
    const worker = deployment.mappings.get(FUNCTIONS.worker)!;
    const workerBatches = worker.batches.filter((b) => b.failedIds.length === 0 && !b.invocationError);
    expect(workerBatches.length > 0, `the worker ran no batch: ${JSON.stringify(worker.batches)}`);
    const polls = deployment.mappings.get(FUNCTIONS.poller)?.batches ?? [];
    const replies = botMessagesIn(slack, slow.ts);
    expect(replies.length === 1, `${replies.length} bot messages in the thread`);
    return `worker batches: ${workerBatches.length}; async-result batches: ${polls.length}`;
  });

  await prove('slack-poster takes a batch and hands back only the bad record (ReportBatchItemFailures)', async () => {
    const poster = deployment.mappings.get(FUNCTIONS.poster)!;
    await poster.stop();
    try {
      const third = appMentionEnvelope({ text: 'third message' });
      const answer = await postSignedEvent(eventsUrl, third.body, SIGNING_SECRET);
      expect(answer.status === 200, `answered ${answer.status}`);
      await waitFor(() => poster.pending() > 0, options.maxWaitMs, 'no reply reached the replies queue');
      await sendRaw(deployment, deployment.aws.sqs.queueUrl(poster.queueName), JSON.stringify({ not: 'a reply' }));
      const batches = await poster.deliverDue();
      const mixed = batches.find((b) => b.messageIds.length > 1);
      expect(mixed !== undefined, `no batch held both records: ${JSON.stringify(batches)}; queue: ${JSON.stringify(deployment.aws.sqs.messages(poster.queueName).map((m) => m.body.slice(0, 300)))}`);
      expect(mixed!.failedIds.length === 1 && !mixed!.invocationError, `the batch came back as ${JSON.stringify(mixed)}`);
      await waitForReply(slack, third.ts, 'rehearsed: third message', options.maxWaitMs);
      return `batch of ${mixed!.messageIds.length}: ${mixed!.failedIds.length} handed back, the reply posted`;
    } finally {
      poster.start();
    }
  });

  await prove('no function URL, API or event source mapping failed unexpectedly', async () => {
    const failures = [...deployment.urls.values(), ...deployment.apis.values()].flatMap((g) => g.failures);
    const errors = [...deployment.mappings.values()].flatMap((m) => m.batches.filter((b) => b.invocationError).map((b) => `${m.name}: ${b.invocationError}`));
    expect(failures.length === 0 && errors.length === 0, [...failures, ...errors].join('\n'));
    return 'none';
  });

  for (const mapping of deployment.mappings.values()) await mapping.stop();
  return proofs;
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
