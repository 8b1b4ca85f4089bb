import { createHash, randomUUID } from 'node:crypto';
import type { FakeSqs, FakeSqsMessage } from '../../test/support/fake-sqs';
import type { Sandbox } from './lambda-sandbox';

/**
 * An SQS event source mapping as Lambda runs it, for one queue and one function: messages the
 * queue took (on the SQS stand-in) are delivered once their delay is over, in batches of the
 * mapping's BatchSize, as the `SQSEvent` Lambda builds (`Records` with messageId, receiptHandle,
 * attributes with ApproximateReceiveCount, md5OfBody, eventSourceARN…). With
 * ReportBatchItemFailures the function's `batchItemFailures` come back to the queue and only
 * they; an invocation error brings back the whole batch. A message received maxReceiveCount
 * times moves to the dead-letter queue instead.
 */
export type BatchResult = { messageIds: string[]; failedIds: string[]; invocationError?: string };

export type EventSourceMapping = {
  readonly name: string;
  /** The queue's name on the SQS stand-in (the last segment of its URL). */
  readonly queueName: string;
  /** Delivers every message that is due, until none is; returns each batch's outcome. */
  deliverDue(): Promise<BatchResult[]>;
  /** Messages moved to the dead-letter queue (their bodies). */
  deadLettered: string[];
  /** Messages taken but not yet delivered, or handed back. */
  pending(): number;
  /** Every batch delivered so far, in order. */
  batches: BatchResult[];
  /** Polls the queue as Lambda does, until `stop`. */
  start(): void;
  stop(): Promise<void>;
};

/** How often a started mapping looks for due messages (Lambda long-polls; this is loopback). */
const POLL_INTERVAL_MS = 100;

type Held = { message: FakeSqsMessage; messageId: string; receiveCount: number; visibleAt: number };

export function eventSourceMapping(options: {
  name: string;
  sqs: FakeSqs;
  queueName: string;
  queueArn: string;
  region: string;
  batchSize: number;
  reportsItemFailures: boolean;
  maxReceiveCount: number;
  sandbox: () => Sandbox;
}): EventSourceMapping {
  let cursor = 0;
  const held: Held[] = [];
  const deadLettered: string[] = [];
  const batches: BatchResult[] = [];
  let running: Promise<void> | undefined;
  let stopping = false;

  const take = () => {
    const taken = options.sqs.messages(options.queueName);
    for (; cursor < taken.length; cursor++) {
      const message = taken[cursor]!;
      held.push({ message, messageId: randomUUID(), receiveCount: 0, visibleAt: message.sentAt + (message.delaySeconds ?? 0) * 1000 });
    }
  };

  const due = (): Held[] => {
    take();
    const now = Date.now();
    return held.filter((h) => h.visibleAt <= now).slice(0, options.batchSize);
  };

  const deliver = async (batch: Held[]): Promise<BatchResult> => {
    for (const h of batch) h.receiveCount++;
    const event = { Records: batch.map((h) => record(h, options.queueArn, options.region)) };
    let failedIds: string[];
    let invocationError: string | undefined;
    try {
      const result = await options.sandbox().invokeJson<{ batchItemFailures?: Array<{ itemIdentifier: string }> } | null>(event);
      failedIds = options.reportsItemFailures ? (result?.batchItemFailures ?? []).map((f) => f.itemIdentifier) : [];
    } catch (error) {
      invocationError = (error as Error).message;
      failedIds = batch.map((h) => h.messageId);
    }
    for (const h of batch) {
      const index = held.indexOf(h);
      if (!failedIds.includes(h.messageId)) held.splice(index, 1);
      else if (h.receiveCount >= options.maxReceiveCount) deadLettered.push(...held.splice(index, 1).map((d) => d.message.body));
      else h.visibleAt = Date.now();
    }
    const result = { messageIds: batch.map((h) => h.messageId), failedIds, ...(invocationError ? { invocationError } : {}) };
    batches.push(result);
    return result;
  };

  const deliverDue = async (more: () => boolean = () => true) => {
    const results: BatchResult[] = [];
    for (let batch = due(); batch.length > 0 && more(); batch = due()) results.push(await deliver(batch));
    return results;
  };

  return {
    name: options.name,
    queueName: options.queueName,
    deadLettered,
    batches,
    pending: () => (take(), held.length),
    deliverDue,
    start() {
      stopping = false;
      running ??= (async () => {
        while (!stopping) {
          await deliverDue(() => !stopping);
          await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
        }
      })();
    },
    async stop() {
      stopping = true;
      await running;
      running = undefined;
    },
  };
}

function record(h: Held, queueArn: string, region: string) {
  const sentAt = String(h.message.sentAt);
  return {
    messageId: h.messageId,
    receiptHandle: Buffer.from(`${h.messageId}:${h.receiveCount}`).toString('base64'),
    body: h.message.body,
    attributes: { ApproximateReceiveCount: String(h.receiveCount), SentTimestamp: sentAt, SenderId: 'AROAREHEARSAL:sender', ApproximateFirstReceiveTimestamp: String(Date.now()) },
    messageAttributes: Object.fromEntries(Object.entries(h.message.attributes ?? {}).map(([name, value]) => [name, { stringValue: value, stringListValues: [], binaryListValues: [], dataType: 'String' }])),
    md5OfBody: createHash('md5').update(h.message.body, 'utf8').digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}
