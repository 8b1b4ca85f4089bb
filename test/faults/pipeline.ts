import { GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import type { Executor } from '../../src/execution/executors/executor';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { FUNCTION_TIMEOUT_SECONDS, QUEUE_SETTINGS, visibilityTimeoutSeconds, type PipelineQueue } from '../../src/verification/pipeline-settings';
import type { ReplyMessage } from '../../src/verification/queues/replies-queue';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import { installDateClock, type DateClock } from '../support/date-clock';
import { startDynamoDbFaultProxy, type DynamoDbFaultProxy } from '../support/dynamodb-fault-proxy';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { slackAppEnv, startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';
import { startFakeSqs, type FakeSqs } from '../support/fake-sqs';
import { lambdaContext } from '../support/lambda-context';

/**
 * The four verification Lambda handlers as deployed — configuration from the environment, the
 * real AWS SDK clients (with their request timeouts and retries), @slack/web-api — wired to
 * loopback stand-ins that can misbehave: dynalite behind a proxy that loses answers, an SQS
 * endpoint that stalls or fails sends, the fake Slack Web API, a real execution runtime over
 * https. Time is a fake `Date` (test/support/date-clock.ts): Slack's retries minutes apart and
 * SQS's visibility timeouts are replayed at once, while every timeout and abort stays real.
 */

const SECRET = 'fault-suite-signing-secret';
const TABLE = 'state';

type Handlers = {
  slackEvents: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  agentInvoker: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  asyncResult: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  slackPoster: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
};

export type FaultPipeline = {
  clock: DateClock;
  /** dynalite itself: what the test reads, never faulty. */
  db: LocalDynamoDb;
  /** What the handlers' DynamoDB client talks to. */
  dynamo: DynamoDbFaultProxy;
  sqs: FakeSqs;
  slack: FakeSlackApi;
  runtime: RunningRuntime;
  handlers: Handlers;
  /** How many times the execution zone ran a task (its executor was called). */
  readonly executions: number;
  /** Task messages on the tasks queue, in the order SQS took them. */
  tasks(): TaskMessage[];
  replies(): ReplyMessage[];
  /** The claim item under `key` in the state table, as stored. */
  claim(key: string): Promise<Record<string, AttributeValue> | undefined>;
  /** A Slack event body for a new mention of the bot (by `userId`, the allowed user by default). */
  mention(text: string, options?: { userId?: string }): { body: string; eventId: string; ts: string };
  /** Forgets what the stand-ins recorded and any fault not yet used; call it before each test. */
  reset(): void;
  close(): Promise<void>;
};

/**
 * Starts the stand-ins, points the environment at them and imports the handlers. Call it in
 * beforeAll, once per test file (the handlers keep their clients for the module's life).
 */
export async function startFaultPipeline(options: { syncBudgetMs?: number; env?: Record<string, string> } = {}): Promise<FaultPipeline> {
  const saved = { ...process.env };
  // Before any import of the code under test: it keeps the Date.now it finds.
  const clock = installDateClock();
  const db = await startLocalDynamoDb();
  await createTable(db.client, TABLE, 'pk', 'expires_at');
  const dynamo = await startDynamoDbFaultProxy(db.endpoint);
  const sqs = await startFakeSqs();
  const slack = await startFakeSlackApi();
  let executions = 0;
  const echo = new EchoExecutor();
  const counting: Executor = { name: 'counting-echo', execute: (params, context) => ((executions += 1), echo.execute(params, context)) };
  const runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: String(options.syncBudgetMs ?? 1_000) }, { executor: counting });

  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    STATE_TABLE_NAME: TABLE,
    TASK_QUEUE_URL: sqs.queueUrl('tasks'),
    POLL_QUEUE_URL: sqs.queueUrl('polls'),
    REPLY_QUEUE_URL: sqs.queueUrl('replies'),
    ...slackAppEnv(slack, SECRET),
    TRANSPORT: 'https',
    EXECUTION_URL: runtime.invocationsUrl,
    ...options.env,
  });
  const handlers: Handlers = {
    slackEvents: (await import('../../lambdas/verification/slack-events')).handler,
    agentInvoker: (await import('../../lambdas/verification/agent-invoker')).handler,
    asyncResult: (await import('../../lambdas/verification/async-result')).handler,
    slackPoster: (await import('../../lambdas/verification/slack-poster')).handler,
  };
  const bodies = <T>(queue: string) => sqs.messages(queue).map((message) => JSON.parse(message.body) as T);

  return {
    clock,
    db,
    dynamo,
    sqs,
    slack,
    runtime,
    handlers,
    get executions() {
      return executions;
    },
    tasks: () => bodies<TaskMessage>('tasks'),
    replies: () => bodies<ReplyMessage>('replies'),
    async claim(key) {
      const output = await db.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: key } }, ConsistentRead: true }));
      return output.Item;
    },
    mention: (text, mentionOptions = {}) => appMentionEnvelope({ text, ...mentionOptions }),
    reset() {
      sqs.reset();
      slack.reset();
      dynamo.reset();
      executions = 0;
    },
    async close() {
      process.env = saved;
      await Promise.all([dynamo.close(), sqs.close(), slack.close(), runtime.close()]);
      await db.close();
      jest.useRealTimers();
    },
  };
}

/** Whether a claim item (as stored) is held by a live owner at `now`: a released claim is gone, or at least not held. */
export function isHeld(item: Record<string, AttributeValue> | undefined, now: number): boolean {
  return item?.claim_state?.S === 'pending' && item.owner?.S !== undefined && Number(item.lease_until?.N ?? 0) * 1000 > now;
}

/** Slack waits this long for the ack; then the delivery counts as failed (docs/architecture.md §10.1). */
export const SLACK_ACK_TIMEOUT_MS = 3_000;

/**
 * When Slack delivers one event, from the first delivery on: the first, then its three retries —
 * about at once (once the first has failed: Slack waited SLACK_ACK_TIMEOUT_MS for it), a minute
 * later, five minutes after that. Slack stops at the first delivery acknowledged in time.
 */
export const SLACK_DELIVERIES_AT_MS = [0, SLACK_ACK_TIMEOUT_MS, SLACK_ACK_TIMEOUT_MS + 60_000, SLACK_ACK_TIMEOUT_MS + 60_000 + 300_000] as const;

export type SlackDelivery = {
  /** 0 for the first delivery, then X-Slack-Retry-Num. */
  retryNum: number;
  /** Offset on the fake clock from the scenario's origin. */
  at: number;
  /** The function's Lambda timeout for this delivery. */
  timeoutMs: number;
  /** Whether Slack had its answer within SLACK_ACK_TIMEOUT_MS. */
  answeredInTime: boolean;
  /** The function's answer, or what ended it (its Lambda timeout: middy's TimeoutError). */
  result: { statusCode: number } | { error: Error };
};

export const statusOf = (delivery: SlackDelivery) => ('statusCode' in delivery.result ? delivery.result.statusCode : delivery.result.error.name);

/**
 * Replays Slack delivering one event: the first delivery, then a retry on Slack's schedule for as
 * long as no delivery was acknowledged (2xx) within Slack's 3 s. A delivery runs concurrently
 * with the retries that arrive while it is still running (real time), but a retry minutes later
 * only arrives after every earlier delivery's function has ended — answered, or stopped at its
 * Lambda timeout (middy's timeoutEarly, as the runtime would). Resolves once every delivery ended.
 *
 * `timeoutMsOf` gives each delivery's Lambda timeout (slack-events' own by default): a shorter one
 * models a function killed at its deadline mid-call. `beforeRetry` runs just before a retry
 * arrives (the clock not yet moved), to look at what the earlier deliveries left.
 */
export async function replaySlackEvent(
  pipeline: FaultPipeline,
  body: string,
  options: { timeoutMsOf?: (retryNum: number) => number; beforeRetry?: (retryNum: number) => Promise<void> } = {},
): Promise<SlackDelivery[]> {
  const timeoutMsOf = options.timeoutMsOf ?? (() => FUNCTION_TIMEOUT_SECONDS.slackEvents * 1000);
  const running: Array<{ delivery: Omit<SlackDelivery, 'result'>; ended: Promise<SlackDelivery['result']> }> = [];
  let reason = '';
  for (const [retryNum, at] of SLACK_DELIVERIES_AT_MS.entries()) {
    for (const earlier of running) if (earlier.delivery.at + earlier.delivery.timeoutMs <= at) await earlier.ended;
    if (retryNum > 0) await options.beforeRetry?.(retryNum);
    pipeline.clock.at(at);
    const delivery = { retryNum, at, timeoutMs: timeoutMsOf(retryNum), answeredInTime: false };
    const headers = { ...slackSignatureHeaders(SECRET, body), ...(retryNum > 0 ? { 'X-Slack-Retry-Num': String(retryNum), 'X-Slack-Retry-Reason': reason } : {}) };
    const ended = pipeline.handlers.slackEvents(apiGatewayEvent(body, headers), lambdaContext(delivery.timeoutMs, 'slack-events')).then(
      (response): SlackDelivery['result'] => ({ statusCode: response.statusCode }),
      (error: unknown): SlackDelivery['result'] => ({ error: error as Error }),
    );
    running.push({ delivery, ended });
    const answer = await within(ended, SLACK_ACK_TIMEOUT_MS);
    delivery.answeredInTime = answer !== undefined;
    if (answer && 'statusCode' in answer && answer.statusCode >= 200 && answer.statusCode < 300) break;
    reason = answer ? 'http_error' : 'http_timeout';
  }
  return Promise.all(running.map(async ({ delivery, ended }) => ({ ...delivery, result: await ended })));
}

/** Resolves with the promise's value if it settles within `ms` of real time, else undefined. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Slack interactivity payload (a click, a form) as API Gateway hands it to slack-events: signed, form-encoded. */
export function interactionEvent(payload: Record<string, unknown>): APIGatewayProxyEvent {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return apiGatewayEvent(body, { ...slackSignatureHeaders(SECRET, body), 'content-type': 'application/x-www-form-urlencoded' });
}

export function apiGatewayEvent(body: string, headers: Record<string, string>): APIGatewayProxyEvent {
  return { body, headers, isBase64Encoded: false, httpMethod: 'POST', path: '/slack/events' } as unknown as APIGatewayProxyEvent;
}

/** One SQS message as the queue holds it: its id, body and how often it was received. */
export type QueuedMessage = { id: string; queue: PipelineQueue; body: string; visibleAt: number; receiveCount: number };

export function sqsEvent(messages: ReadonlyArray<Pick<QueuedMessage, 'id' | 'body' | 'receiveCount'>>): SQSEvent {
  return {
    Records: messages.map((message) => ({
      messageId: message.id,
      receiptHandle: `receipt-${message.id}-${message.receiveCount}`,
      body: message.body,
      attributes: { ApproximateReceiveCount: String(message.receiveCount) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:faults',
      awsRegion: 'us-east-1',
    })),
  } as unknown as SQSEvent;
}

const CONSUMERS: Record<PipelineQueue, Exclude<keyof Handlers, 'slackEvents'>> = { tasks: 'agentInvoker', polls: 'asyncResult', replies: 'slackPoster' };

/**
 * SQS between the functions, on the fake clock: every message the fake SQS took is delivered to
 * its queue's consumer once it is visible (after its DelaySeconds); a record the batch reports as
 * failed comes back after the queue's visibility timeout with its receive count raised, and goes
 * to the dead letters after maxReceiveCount receives — as pipeline-settings.ts deploys them.
 */
export class SqsReplay {
  readonly deadLetters: QueuedMessage[] = [];
  /** Every record delivered, in order, and whether its consumer failed it. */
  readonly deliveries: Array<{ queue: PipelineQueue; id: string; receiveCount: number; failed: boolean }> = [];
  private readonly queued: QueuedMessage[] = [];
  private taken = 0;
  private puts = 0;

  constructor(private readonly pipeline: FaultPipeline) {}

  /** Puts a message on a queue directly (a copy of one already there: SQS delivers at least once). */
  put(queue: PipelineQueue, body: string): void {
    this.pickUp();
    this.queued.push({ id: `put-${(this.puts += 1)}`, queue, body, visibleAt: this.pipeline.clock.now(), receiveCount: 0 });
  }

  /**
   * Delivers what is visible now, one batch per queue; returns how many records were delivered.
   * Each consumer gets its deployed Lambda timeout, or `timeoutMs`; a consumer killed at it fails its whole batch.
   */
  async deliverVisible(options: { timeoutMs?: number } = {}): Promise<number> {
    this.pickUp();
    let delivered = 0;
    for (const queue of Object.keys(CONSUMERS) as PipelineQueue[]) {
      const now = this.pipeline.clock.now();
      const batch = this.queued.filter((message) => message.queue === queue && message.visibleAt <= now);
      if (batch.length === 0) continue;
      for (const message of batch) message.receiveCount += 1;
      const handler = this.pipeline.handlers[CONSUMERS[queue]];
      const result = await handler(sqsEvent(batch), lambdaContext(options.timeoutMs ?? FUNCTION_TIMEOUT_SECONDS[QUEUE_SETTINGS[queue].consumer] * 1000, CONSUMERS[queue])).catch(
        // Killed at its deadline (middy's TimeoutError) or crashed: Lambda gives the whole batch back to the queue.
        (): SQSBatchResponse => ({ batchItemFailures: batch.map((message) => ({ itemIdentifier: message.id })) }),
      );
      const failed = new Set(result.batchItemFailures.map((failure) => failure.itemIdentifier));
      for (const message of batch) {
        this.deliveries.push({ queue, id: message.id, receiveCount: message.receiveCount, failed: failed.has(message.id) });
        this.queued.splice(this.queued.indexOf(message), 1);
        if (!failed.has(message.id)) continue;
        if (message.receiveCount >= QUEUE_SETTINGS[queue].maxReceiveCount) this.deadLetters.push(message);
        else this.queued.push({ ...message, visibleAt: now + visibilityTimeoutSeconds(queue) * 1000 });
      }
      delivered += batch.length;
    }
    return delivered;
  }

  /**
   * Runs the queues until they are empty: what is visible is delivered; when nothing is, the clock
   * moves on to the next message's visibility (a little real time passes too, for work the
   * execution zone does in the background).
   */
  async drain(maxRounds = 60): Promise<void> {
    for (let round = 0; round < maxRounds; round += 1) {
      if ((await this.deliverVisible()) > 0) continue;
      this.pickUp();
      if (this.queued.length === 0) return;
      const next = Math.min(...this.queued.map((message) => message.visibleAt));
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (next > this.pipeline.clock.now()) this.pipeline.clock.advance(next - this.pipeline.clock.now());
    }
    throw new Error(`SQS replay: messages still queued after ${maxRounds} rounds: ${JSON.stringify(this.queued.map((m) => [m.queue, m.receiveCount]))}`);
  }

  /** Takes the messages the fake SQS has accepted since the last look. */
  private pickUp(): void {
    const sent = this.pipeline.sqs.sent;
    for (; this.taken < sent.length; this.taken += 1) {
      const message = sent[this.taken]!;
      const queue = message.queueUrl.split('/').pop() as PipelineQueue;
      this.queued.push({ id: `msg-${this.taken}`, queue, body: message.body, visibleAt: message.sentAt + (message.delaySeconds ?? 0) * 1000, receiveCount: 0 });
    }
  }
}
