import { SendMessageBatchCommand, SendMessageCommand, SQSClient, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { deliveryFromSqsRecord, SqsBatchSendError, SqsQueue } from '../../src/queue/sqs-queue';

// A unit test of one adapter: the SQS wire is stubbed so the exact requests can be asserted.
const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/tasks-queue';
const sqs = mockClient(SQSClient);
const makeQueue = () => new SqsQueue<{ n: number; text?: string }>({ client: new SQSClient({}), queueUrl: QUEUE_URL });
const batchInputs = () => sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input as SendMessageBatchCommandInput);

const allSucceed = (input: SendMessageBatchCommandInput) => ({ Successful: input.Entries!.map((e) => ({ Id: e.Id })), Failed: [] });

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  sqs.on(SendMessageBatchCommand).callsFake(allSucceed);
});

describe('SqsQueue', () => {
  it('is named after its queue URL', () => {
    expect(makeQueue().name).toBe('tasks-queue');
  });

  it('sends the JSON body with a clamped per-message delay and string attributes', async () => {
    await makeQueue().send({ n: 1, text: 'hi' }, { delaySeconds: 1200, attributes: { request_id: 'r-1', event_id: 'Ev1' } });

    expect(sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input)).toEqual([
      {
        QueueUrl: QUEUE_URL,
        MessageBody: '{"n":1,"text":"hi"}',
        DelaySeconds: 900, // SQS refuses anything above 15 minutes
        MessageAttributes: {
          request_id: { DataType: 'String', StringValue: 'r-1' },
          event_id: { DataType: 'String', StringValue: 'Ev1' },
        },
      },
    ]);
  });

  it('leaves DelaySeconds out when none is asked for, so the queue default applies', async () => {
    await makeQueue().send({ n: 2 }, { attributes: { empty: '' } });
    const input = sqs.commandCalls(SendMessageCommand)[0]!.args[0].input;
    expect(input).toEqual({ QueueUrl: QUEUE_URL, MessageBody: '{"n":2}' });
  });

  it('rounds a fractional delay to whole seconds', async () => {
    await makeQueue().send({ n: 3 }, { delaySeconds: 2.6 });
    expect(sqs.commandCalls(SendMessageCommand)[0]!.args[0].input.DelaySeconds).toBe(3);
  });

  it('sends a batch in calls of at most 10 entries, in order, with per-entry options', async () => {
    const messages = Array.from({ length: 23 }, (_, n) => ({ message: { n }, options: { delaySeconds: n, attributes: { i: String(n) } } }));
    await makeQueue().sendBatch(messages);

    const inputs = batchInputs();
    expect(inputs.map((input) => input.Entries!.length)).toEqual([10, 10, 3]);
    const entries = inputs.flatMap((input) => input.Entries!);
    expect(entries.map((entry) => entry.MessageBody)).toEqual(messages.map(({ message }) => JSON.stringify(message)));
    expect(entries[12]).toEqual({ Id: expect.any(String), MessageBody: '{"n":12}', DelaySeconds: 12, MessageAttributes: { i: { DataType: 'String', StringValue: '12' } } });
    for (const input of inputs) {
      expect(input.QueueUrl).toBe(QUEUE_URL);
      expect(new Set(input.Entries!.map((entry) => entry.Id)).size).toBe(input.Entries!.length);
    }
  });

  it('also splits a batch so no call carries more than 1 MiB', async () => {
    const big = 'x'.repeat(400 * 1024);
    await makeQueue().sendBatch([1, 2, 3].map((n) => ({ message: { n, text: big } })));
    expect(batchInputs().map((input) => input.Entries!.length)).toEqual([2, 1]);
  });

  it('makes no call for an empty batch', async () => {
    await makeQueue().sendBatch([]);
    expect(sqs.calls()).toHaveLength(0);
  });

  it('retries only the failed entries, once, and succeeds if they go through', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .callsFakeOnce((input: SendMessageBatchCommandInput) => ({
        Successful: input.Entries!.filter((_, i) => i !== 1 && i !== 3).map((e) => ({ Id: e.Id })),
        Failed: [input.Entries![1]!, input.Entries![3]!].map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false })),
      }))
      .callsFake(allSucceed);
    await makeQueue().sendBatch([0, 1, 2, 3, 4].map((n) => ({ message: { n } })));

    const inputs = batchInputs();
    expect(inputs).toHaveLength(2);
    expect(inputs[1]!.Entries!.map((entry) => entry.MessageBody)).toEqual(['{"n":1}', '{"n":3}']);
  });

  it('throws an error listing the entries that failed twice, and does not retry sender faults', async () => {
    sqs.on(SendMessageBatchCommand).callsFake((input: SendMessageBatchCommandInput) => ({
      Successful: [],
      Failed: input.Entries!.filter((e) => e.MessageBody !== '{"n":0}').map((e) => ({
        Id: e.Id,
        Code: e.MessageBody === '{"n":2}' ? 'InvalidParameterValue' : 'ServiceUnavailable',
        Message: 'nope',
        SenderFault: e.MessageBody === '{"n":2}',
      })),
    }));

    const error = await makeQueue()
      .sendBatch([0, 1, 2].map((n) => ({ message: { n } })))
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(SqsBatchSendError);
    expect((error as SqsBatchSendError).failed).toEqual([
      { index: 1, code: 'ServiceUnavailable', message: 'nope', senderFault: false },
      { index: 2, code: 'InvalidParameterValue', message: 'nope', senderFault: true },
    ]);
    expect((error as Error).message).toMatch(/2 of 3 messages were not sent to queue tasks-queue: #1 ServiceUnavailable.*#2 InvalidParameterValue/);
    // The retry carried only the retryable entry.
    expect(batchInputs().map((input) => input.Entries!.map((entry) => entry.MessageBody))).toEqual([['{"n":0}', '{"n":1}', '{"n":2}'], ['{"n":1}']]);
  });

  it('lets an SDK error surface', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('throttled'));
    await expect(makeQueue().send({ n: 1 })).rejects.toThrow('throttled');
  });
});

describe('deliveryFromSqsRecord', () => {
  const record = (overrides: Partial<SQSRecord> = {}): SQSRecord => ({
    messageId: 'msg-1',
    receiptHandle: 'rh',
    body: '{"n":1}',
    attributes: { ApproximateReceiveCount: '3', SentTimestamp: '1', SenderId: 's', ApproximateFirstReceiveTimestamp: '1' },
    messageAttributes: {
      request_id: { dataType: 'String', stringValue: 'r-1' },
      retries: { dataType: 'Number', stringValue: '2' },
      blob: { dataType: 'Binary', binaryValue: 'AAEC' },
    },
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:tasks-queue',
    awsRegion: 'us-east-1',
    ...overrides,
  });

  it('reads the receive count and the text-valued attributes', () => {
    expect(deliveryFromSqsRecord(record())).toEqual({ messageId: 'msg-1', body: '{"n":1}', receiveCount: 3, attributes: { request_id: 'r-1', retries: '2' } });
  });

  it('treats a missing receive count as a first receive', () => {
    const noCount = record({ attributes: {} as SQSRecord['attributes'], messageAttributes: {} });
    expect(deliveryFromSqsRecord(noCount)).toMatchObject({ receiveCount: 1, attributes: {} });
  });
});
