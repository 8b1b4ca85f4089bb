import { createHash } from 'node:crypto';
import type { SendMessageBatchRequest, SendMessageRequest } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { deliveryFromSqsRecord, SqsBatchSendError, SqsQueue, sqsClient } from '../../src/queue/sqs-queue';
import { refusedBody, startFakeSqs, type FakeSqs } from '../support/fake-sqs';
import { startScriptedAws, type ScriptedAws, type ScriptedRequest } from '../support/scripted-aws';

// SqsQueue over real HTTP to a scripted SQS endpoint, so the exact requests can be asserted and
// answers SQS gives only under load (some entries of a batch refused) can be produced.
const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const allSucceed = (request: ScriptedRequest) => {
  if (request.operation === 'SendMessage') return { body: { MessageId: 'm-1', MD5OfMessageBody: md5(String(request.input.MessageBody)) } };
  const entries = (request.input as unknown as SendMessageBatchRequest).Entries!;
  return { body: { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody!) })), Failed: [] } };
};

let sqs: ScriptedAws;
let queueUrl: string;
beforeEach(async () => {
  sqs = await startScriptedAws(allSucceed);
  // As in AWS, the queue URL's host is where its calls go (no endpoint is configured here).
  queueUrl = `${sqs.endpoint}/123456789012/tasks-queue`;
});
afterEach(() => sqs.close());

const client = () => sqsClient({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, env: {} });
const makeQueue = () => new SqsQueue<{ n: number; text?: string }>({ client: client(), queueUrl });
const sendInputs = () => sqs.requests.filter((r) => r.operation === 'SendMessage').map((r) => r.input as unknown as SendMessageRequest);
const batchInputs = () => sqs.requests.filter((r) => r.operation === 'SendMessageBatch').map((r) => r.input as unknown as SendMessageBatchRequest);

describe('SqsQueue', () => {
  it('is named after its queue URL', () => {
    expect(makeQueue().name).toBe('tasks-queue');
  });

  it('sends the JSON body with a clamped per-message delay and string attributes, signed, to the queue URL\'s host', async () => {
    await makeQueue().send({ n: 1, text: 'hi' }, { delaySeconds: 1200, attributes: { request_id: 'r-1', event_id: 'Ev1' } });

    expect(sqs.requests[0]!.target).toBe('AmazonSQS.SendMessage');
    expect(sqs.requests[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/sqs\/aws4_request, /);
    expect(sendInputs()).toEqual([
      {
        QueueUrl: queueUrl,
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
    expect(sendInputs()).toEqual([{ QueueUrl: queueUrl, MessageBody: '{"n":2}' }]);
  });

  it('rounds a fractional delay to whole seconds', async () => {
    await makeQueue().send({ n: 3 }, { delaySeconds: 2.6 });
    expect(sendInputs()[0]!.DelaySeconds).toBe(3);
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
      expect(input.QueueUrl).toBe(queueUrl);
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
    expect(sqs.requests).toHaveLength(0);
  });

  it('retries only the failed entries, once, and succeeds if they go through', async () => {
    sqs.next({
      body: {
        Successful: [0, 2, 4].map((n) => ({ Id: `m${n}`, MessageId: `id-${n}`, MD5OfMessageBody: md5(`{"n":${n}}`) })),
        Failed: [1, 3].map((n) => ({ Id: `m${n}`, Code: 'InternalError', SenderFault: false })),
      },
    });
    await makeQueue().sendBatch([0, 1, 2, 3, 4].map((n) => ({ message: { n } })));

    const inputs = batchInputs();
    expect(inputs).toHaveLength(2);
    expect(inputs[1]!.Entries!.map((entry) => entry.MessageBody)).toEqual(['{"n":1}', '{"n":3}']);
  });

  it('throws an error listing the entries that failed twice, and does not retry sender faults', async () => {
    const refuse = (request: ScriptedRequest) => {
      const entries = (request.input as unknown as SendMessageBatchRequest).Entries!;
      return {
        body: {
          Successful: entries.filter((e) => e.MessageBody === '{"n":0}').map((e) => ({ Id: e.Id, MessageId: 'id', MD5OfMessageBody: md5(e.MessageBody!) })),
          Failed: entries
            .filter((e) => e.MessageBody !== '{"n":0}')
            .map((e) => ({ Id: e.Id, Code: e.MessageBody === '{"n":2}' ? 'InvalidParameterValue' : 'ServiceUnavailable', Message: 'nope', SenderFault: e.MessageBody === '{"n":2}' })),
        },
      };
    };
    sqs.next(refuse, refuse);

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

  it("lets SQS's error surface with its code", async () => {
    sqs.next({ status: 400, body: { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' } });
    await expect(makeQueue().send({ n: 1 })).rejects.toMatchObject({ name: 'QueueDoesNotExist', message: 'The specified queue does not exist.' });
    expect(sqs.requests).toHaveLength(1);
  });

  it('sends again after a throttle, and the message is queued once', async () => {
    sqs.next({ status: 400, body: { __type: 'com.amazonaws.sqs#ThrottlingException', message: 'Rate exceeded' } });
    await makeQueue().send({ n: 1 });
    expect(sendInputs().map((input) => input.MessageBody)).toEqual(['{"n":1}', '{"n":1}']);
  });

  it('refuses an answer whose MD5 does not match the body sent (damaged on the way)', async () => {
    sqs.next({ body: { MessageId: 'm-1', MD5OfMessageBody: md5('something else') } });
    await expect(makeQueue().send({ n: 1 })).rejects.toThrow(/MD5 of the message body does not match/);
  });

  it('sends a serialized body as it is (the execution zone hand-off)', async () => {
    await makeQueue().sendBody('{"task_id":"t-1"}');
    expect(sendInputs()).toEqual([{ QueueUrl: queueUrl, MessageBody: '{"task_id":"t-1"}' }]);
  });
});

/**
 * Issue 25: SQS refuses a body with a character outside #x9 | #xA | #xD | #x20-#xD7FF |
 * #xE000-#xFFFD | #x10000-#x10FFFF (InvalidMessageContents), and a Slack message may hold U+FFFE
 * or U+FFFF: the queue escapes them in the JSON, so the message goes and reads back the same.
 * Against the fake SQS, which refuses such bodies as SQS does.
 */
describe('SqsQueue: characters SQS refuses in a body', () => {
  let fake: FakeSqs;
  beforeAll(async () => {
    fake = await startFakeSqs();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const text = 'non-characters \uFFFE and \uFFFF, a \\\uFFFE after a backslash, and what SQS takes as it is: 😀 \uFFFD \u0085 é';
  const fakeQueue = () => new SqsQueue<{ n: number; text?: string }>({ client: client(), queueUrl: fake.queueUrl('tasks') });

  it('the fake refuses them as SQS does, and takes the rest', async () => {
    await expect(client().call('SendMessage', { QueueUrl: fake.queueUrl('tasks'), MessageBody: 'raw \uFFFE' }, { endpoint: fake.endpoint })).rejects.toMatchObject({ name: 'InvalidMessageContents' });
    for (const refused of ['\uFFFE', '\uFFFF', '\uD800 alone', 'bell \u0007']) expect(refusedBody(refused)).toMatch(/^Invalid binary character/);
    for (const taken of ['😀 \uFFFD \u0085 é', 'tab\tline\nreturn\r']) expect(refusedBody(taken)).toBeUndefined();
    expect(fake.sent).toEqual([]);
  });

  it('send: escapes them in the JSON (plain ASCII), and the body reads back as the message', async () => {
    await fakeQueue().send({ n: 1, text });
    const [sent] = fake.messages('tasks');
    expect(sent!.body).toContain('\\ufffe');
    expect(sent!.body).toContain('😀'); // nothing else is escaped: the size stays what it was
    expect(JSON.parse(sent!.body)).toEqual({ n: 1, text });
  });

  it('sendBatch: every entry goes, none refused', async () => {
    await fakeQueue().sendBatch([{ message: { n: 1, text } }, { message: { n: 2, text: 'plain' } }, { message: { n: 3, text: '\uFFFF' } }]);
    expect(fake.messages('tasks').map((message) => JSON.parse(message.body))).toEqual([{ n: 1, text }, { n: 2, text: 'plain' }, { n: 3, text: '\uFFFF' }]);
  });

  it('sendBody: a body serialized elsewhere is escaped the same way', async () => {
    const body = JSON.stringify({ task_id: 't-1', text });
    await fakeQueue().sendBody(body);
    expect(JSON.parse(fake.messages('tasks')[0]!.body)).toEqual(JSON.parse(body));
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
