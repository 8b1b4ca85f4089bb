import { createHash } from 'node:crypto';
import type {
  MessageAttributeValue,
  SendMessageBatchCommandOutput,
  SendMessageBatchRequestEntry,
  SendMessageCommandOutput,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { AwsJsonClient, SQS, type AwsJsonClientOptions } from '../aws/aws-json-client';
import { clampDelaySeconds, type Delivery, type EnqueueOptions, type Queue } from './queue';

/** SQS takes at most 10 entries per SendMessageBatch. */
export const SQS_BATCH_MAX_ENTRIES = 10;
/** SQS caps one message, and also the sum of one batch's messages, at 1 MiB. */
export const SQS_MAX_PAYLOAD_BYTES = 1_048_576;

export type SqsQueueOptions = {
  /** The SQS client (src/aws/aws-json-client.ts), shared by a function's queues. */
  client: AwsJsonClient;
  queueUrl: string;
  /** For logs and errors; defaults to the last segment of the queue URL. */
  name?: string;
};

export type FailedBatchEntry = {
  /** Position of the message in the array given to sendBatch. */
  index: number;
  code: string;
  message?: string;
  /** SQS says the request itself was wrong (e.g. too large): retrying cannot help. */
  senderFault: boolean;
};

/** Some messages of a sendBatch were not queued, even after one retry; the others were. */
export class SqsBatchSendError extends Error {
  override name = 'SqsBatchSendError';
  constructor(
    readonly queueName: string,
    readonly failed: readonly FailedBatchEntry[],
    readonly total: number,
  ) {
    super(
      `${failed.length} of ${total} messages were not sent to queue ${queueName}: ` +
        failed.map((entry) => `#${entry.index} ${entry.code}${entry.message ? ` (${entry.message})` : ''}${entry.senderFault ? ' [sender fault]' : ''}`).join('; '),
    );
  }
}

type Prepared = { index: number; body: string; attributes?: Record<string, MessageAttributeValue>; delaySeconds?: number; bytes: number };

/** An SQS client: the JSON protocol client for SQS, with the environment's region, endpoint and credentials. */
export function sqsClient(options: Omit<AwsJsonClientOptions, 'service'> = {}): AwsJsonClient {
  return new AwsJsonClient({ ...options, service: SQS });
}

/**
 * The Queue port on Amazon SQS (standard queue). The client is injected so the Lambda wiring
 * owns its configuration. Calls go to the queue URL's host, as the SDK sends them, unless an
 * endpoint is configured (AWS_ENDPOINT_URL_SQS). Each answer's MD5 of the body is checked, as the
 * SDK does: a body damaged on the way is an error, not a silently wrong message.
 */
export class SqsQueue<T> implements Queue<T> {
  readonly name: string;
  private readonly client: AwsJsonClient;
  private readonly queueUrl: string;
  private readonly endpoint: string | undefined;

  constructor(options: SqsQueueOptions) {
    if (!options.queueUrl) throw new Error('SqsQueue needs a queueUrl');
    this.client = options.client;
    this.queueUrl = options.queueUrl;
    this.name = options.name ?? options.queueUrl.split('/').filter(Boolean).pop() ?? options.queueUrl;
    this.endpoint = URL.canParse(options.queueUrl) ? new URL(options.queueUrl).origin : undefined;
  }

  async send(message: T, options?: EnqueueOptions): Promise<void> {
    await this.sendPrepared(prepare(message, options, 0));
  }

  /**
   * A JSON body serialized already: the execution zone's hand-off, whose size was judged as text.
   * Characters SQS refuses are escaped as in `send` (sqsSafeJson).
   */
  async sendBody(body: string): Promise<void> {
    const safe = sqsSafeJson(body);
    await this.sendPrepared({ index: 0, body: safe, bytes: Buffer.byteLength(safe) });
  }

  private async sendPrepared(prepared: Prepared): Promise<void> {
    const output = await this.client.call<SendMessageCommandOutput>(
      'SendMessage',
      {
        QueueUrl: this.queueUrl,
        MessageBody: prepared.body,
        ...(prepared.delaySeconds !== undefined ? { DelaySeconds: prepared.delaySeconds } : {}),
        ...(prepared.attributes ? { MessageAttributes: prepared.attributes } : {}),
      },
      this.callOptions(),
    );
    checkBodyDigest(output.MD5OfMessageBody, prepared.body, this.name);
  }

  /**
   * Sends in as few SendMessageBatch calls as SQS allows (10 entries and 1 MiB per call). Entries
   * SQS reports as failed are retried once — only those, so nothing already queued is sent twice;
   * any still failing are listed in an SqsBatchSendError. Chunks go one after another, so a thrown
   * error (network, throttling) leaves the later chunks unsent rather than in an unknown state.
   */
  async sendBatch(messages: ReadonlyArray<{ message: T; options?: EnqueueOptions }>): Promise<void> {
    const prepared = messages.map(({ message, options }, index) => prepare(message, options, index));
    const failed: FailedBatchEntry[] = [];
    for (const chunk of chunksOf(prepared)) {
      const first = await this.sendChunk(chunk);
      // A sender fault (bad request) fails the same way again; only the rest are worth a retry.
      const retryable = first.filter((entry) => !entry.senderFault);
      failed.push(...first.filter((entry) => entry.senderFault));
      if (retryable.length > 0) {
        const again = new Set(retryable.map((entry) => entry.index));
        failed.push(...(await this.sendChunk(chunk.filter((entry) => again.has(entry.index)))));
      }
    }
    if (failed.length > 0) throw new SqsBatchSendError(this.name, failed.sort((a, b) => a.index - b.index), messages.length);
  }

  private async sendChunk(chunk: readonly Prepared[]): Promise<FailedBatchEntry[]> {
    const entries: SendMessageBatchRequestEntry[] = chunk.map((entry) => ({
      // Ids only need to be unique within one call; the input position lets failures be reported.
      Id: `m${entry.index}`,
      MessageBody: entry.body,
      ...(entry.delaySeconds !== undefined ? { DelaySeconds: entry.delaySeconds } : {}),
      ...(entry.attributes ? { MessageAttributes: entry.attributes } : {}),
    }));
    const output = await this.client.call<SendMessageBatchCommandOutput>('SendMessageBatch', { QueueUrl: this.queueUrl, Entries: entries }, this.callOptions());
    const byIndex = new Map(chunk.map((entry) => [`m${entry.index}`, entry.body]));
    for (const sent of output.Successful ?? []) checkBodyDigest(sent.MD5OfMessageBody, byIndex.get(sent.Id ?? '') ?? '', this.name);
    return (output.Failed ?? []).map((failure) => ({
      index: Number((failure.Id ?? '').slice(1)),
      code: failure.Code ?? 'Unknown',
      ...(failure.Message ? { message: failure.Message } : {}),
      senderFault: failure.SenderFault === true,
    }));
  }

  private callOptions(): { endpoint?: string } {
    return this.endpoint ? { endpoint: this.endpoint } : {};
  }
}

function checkBodyDigest(digest: string | undefined, body: string, queueName: string): void {
  if (digest === undefined) return;
  if (digest !== createHash('md5').update(body).digest('hex')) throw new Error(`queue ${queueName}: SQS's MD5 of the message body does not match the body sent (damaged on the way)`);
}

/**
 * SQS refuses a message whose body has a character outside #x9 | #xA | #xD | #x20-#xD7FF |
 * #xE000-#xFFFD | #x10000-#x10FFFF (InvalidMessageContents) — and a user's message may have one.
 * JSON.stringify already escapes control characters and lone surrogates; U+FFFE and U+FFFF it
 * leaves as they are. In valid JSON such a character can only be inside a string, where its
 * escape (`\ufffe`, plain ASCII) is the same character to JSON.parse: the consumer reads the
 * message unchanged. A lone surrogate in a body serialized elsewhere is escaped the same way.
 */
const SQS_REFUSED_IN_JSON = /[\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A JSON text SQS takes as a message body, meaning the same JSON (see SQS_REFUSED_IN_JSON). */
export function sqsSafeJson(json: string): string {
  return json.replace(SQS_REFUSED_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16)}`);
}

function prepare<T>(message: T, options: EnqueueOptions | undefined, index: number): Prepared {
  const json = JSON.stringify(message);
  if (json === undefined) throw new TypeError(`message #${index} cannot be represented as JSON`);
  const body = sqsSafeJson(json);
  const attributes = toMessageAttributes(options?.attributes);
  let bytes = Buffer.byteLength(body);
  for (const [name, value] of Object.entries(attributes ?? {})) bytes += Buffer.byteLength(name) + Buffer.byteLength(value.StringValue ?? '') + 'String'.length;
  return {
    index,
    body,
    bytes,
    // Omitted rather than 0 so the queue's own default delay still applies.
    ...(options?.delaySeconds !== undefined ? { delaySeconds: clampDelaySeconds(options.delaySeconds) } : {}),
    ...(attributes ? { attributes } : {}),
  };
}

function toMessageAttributes(attributes: Readonly<Record<string, string>> | undefined): Record<string, MessageAttributeValue> | undefined {
  if (!attributes) return undefined;
  const result: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) {
    // SQS rejects the whole message for an empty attribute value; an absent one says the same.
    if (value === '') continue;
    result[name] = { DataType: 'String', StringValue: value };
  }
  return Object.keys(result).length > 0 ? result : undefined;
}

function* chunksOf(prepared: readonly Prepared[]): Generator<Prepared[]> {
  let chunk: Prepared[] = [];
  let bytes = 0;
  for (const entry of prepared) {
    if (chunk.length > 0 && (chunk.length === SQS_BATCH_MAX_ENTRIES || bytes + entry.bytes > SQS_MAX_PAYLOAD_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(entry);
    bytes += entry.bytes;
  }
  if (chunk.length > 0) yield chunk;
}

/** The Delivery a Lambda SQS record stands for (receive count and string-valued message attributes). */
export function deliveryFromSqsRecord(record: SQSRecord): Delivery {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    // String and Number attributes both carry their value as text; Binary ones are not ours.
    if (typeof value?.stringValue === 'string') attributes[name] = value.stringValue;
  }
  const receiveCount = Number.parseInt(record.attributes?.ApproximateReceiveCount ?? '', 10);
  return {
    messageId: record.messageId,
    body: record.body,
    // An unparsable count is treated as a first receive: the message is then not dead-letter-bound.
    receiveCount: Number.isFinite(receiveCount) && receiveCount > 0 ? receiveCount : 1,
    attributes,
  };
}
