import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { LambdaFunctionURLEvent, SQSEvent } from 'aws-lambda';
import { HANDOFF_INLINE_MAX_BYTES } from '../../src/execution/handoff-message';
import { createTable, startLocalDynamoDb, type LocalDynamoDb } from '../support/dynalite';
import { startFakeSqs, type FakeSqs } from '../support/fake-sqs';
import { lambdaContext } from '../support/lambda-context';
import { FakeResponseStream, installAwsLambdaGlobal, invokeStreaming, sseData, type StreamingHandler } from '../support/lambda-response-stream';
import { echoSuccess } from '../support/echo-usage';

/**
 * The execution zone's Lambda handlers as deployed on the `https` transport: the function-URL
 * handler accepts a task past its sync budget and hands it to the worker queue, the worker
 * handler runs it from the queue message. Configuration from the environment, the task table
 * through the real SDK against dynalite, SQS through the real SDK against the loopback fake;
 * the test carries each queued message from one handler to the other, as Lambda's event source
 * would. The function URL streams its response (RESPONSE_STREAM): its handler is invoked as
 * Lambda's runtime invokes a streamified one, with a response stream.
 */
let db: LocalDynamoDb;
let sqs: FakeSqs;
const TABLE = 'lambda-exec-tasks';
const saved = { ...process.env };
type Handler<E, R> = (event: E, context: ReturnType<typeof lambdaContext>) => Promise<R>;
const SSE = { accept: 'text/event-stream, application/json' };
let functionUrl: StreamingHandler<LambdaFunctionURLEvent>;
let worker: Handler<SQSEvent, { batchItemFailures: Array<{ itemIdentifier: string }> }>;

beforeAll(async () => {
  db = await startLocalDynamoDb();
  await createTable(db.client, TABLE, 'task_id', 'expires_at');
  sqs = await startFakeSqs();
  Object.assign(process.env, {
    EXECUTOR: 'echo',
    TASK_STORE: 'dynamodb',
    TASK_TABLE_NAME: TABLE,
    SYNC_BUDGET_MS: '50',
    AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    WORKER_QUEUE_URL: sqs.queueUrl('execution-worker'),
  });
  installAwsLambdaGlobal();
  functionUrl = (await import('../../lambdas/execution/function-url')).handler as unknown as typeof functionUrl;
  worker = (await import('../../lambdas/execution/worker')).handler as unknown as typeof worker;
});
afterAll(async () => {
  process.env = saved;
  await Promise.all([db.close(), sqs.close()]);
});
beforeEach(() => sqs.reset());

function urlEvent(body: string, headers: Record<string, string> = {}): LambdaFunctionURLEvent {
  return {
    version: '2.0',
    rawPath: '/',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    requestContext: { http: { method: 'POST', path: '/' } },
    body,
    isBase64Encoded: false,
  } as unknown as LambdaFunctionURLEvent;
}

function sqsEvent(body: string): SQSEvent {
  return {
    Records: [
      {
        messageId: 'msg-0',
        receiptHandle: 'r',
        body,
        attributes: { ApproximateReceiveCount: '1' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:execution-worker',
        awsRegion: 'us-east-1',
      },
    ],
  } as unknown as SQSEvent;
}

async function rpc(method: string, params: unknown) {
  const answer = await invokeStreaming(functionUrl, urlEvent(JSON.stringify({ jsonrpc: '2.0', method, params, id: randomUUID() })), lambdaContext());
  expect(answer.statusCode).toBe(200);
  expect(answer.headers['Content-Type']).toBe('application/json');
  return JSON.parse(answer.body);
}

async function tableItems(): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await db.client.send(new ScanCommand({ TableName: TABLE, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Hands the one queued message to the worker and polls the task through the URL handler. */
async function runQueued(taskId: string) {
  const [message] = await sqs.waitForMessages('execution-worker', 1);
  const processed = await worker(sqsEvent(message!.body), lambdaContext(60_000, 'execution-worker'));
  expect(processed.batchItemFailures).toEqual([]);
  return { message: message!, result: await rpc('get_task_result', { task_id: taskId }) };
}

describe('lambdas/execution: function URL → worker queue → worker', () => {
  it('a task past the sync budget with 3 MB of attachments is handed off by reference and run by the worker', async () => {
    const files = [randomBytes(1_500_000), randomBytes(750_000)];
    const attachments = [
      { name: 'scan.pdf', mimetype: 'application/pdf', size: files[0]!.length, data: files[0]!.toString('base64') },
      { name: 'photo.png', mimetype: 'image/png', size: files[1]!.length, data: files[1]!.toString('base64') },
    ];
    const secret = `a private question ${randomUUID()} #sleep=300 #context`;
    const params = {
      text: secret,
      channel: 'C1',
      user_id: 'U1',
      bot_token: 'xoxb-lambda-credential',
      messages: [
        { role: 'user', text: 'earlier', user_id: 'U1', ts: '1.1' },
        { role: 'assistant', text: 'a reply', ts: '1.2' },
      ],
      attachments,
    };
    expect(JSON.stringify(params).length).toBeGreaterThan(3_000_000);

    const accepted = await rpc('execute_task', params);
    expect(accepted.result).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/) });
    const taskId = accepted.result.task_id as string;

    const { message, result } = await runQueued(taskId);
    expect(Buffer.byteLength(message.body)).toBeLessThan(HANDOFF_INLINE_MAX_BYTES);
    // The bot token rests in no queue message (nor in the table, below): the worker runs the task without it.
    expect(JSON.parse(message.body)).toEqual({ task_id: taskId, params_ref: true });
    expect(message.body).not.toContain('xoxb-lambda-credential');
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    expect(result.result).toEqual({
      status: 'success',
      response_text: [
        `echo: ${secret}`,
        'context: 2 turns (user, assistant)',
        `attachment: scan.pdf application/pdf ${files[0]!.length} bytes sha256=${sha(files[0]!)}`,
        `attachment: photo.png image/png ${files[1]!.length} bytes sha256=${sha(files[1]!)}`,
      ].join('\n'),
      usage: expect.objectContaining({ model: 'echo' }),
    });

    // Once the task is done its params are erased: the table keeps the answer, not the question's files.
    const items = await tableItems();
    expect(items.filter((item) => item.task_id?.S?.startsWith(`params-${taskId}`)).length).toBeGreaterThan(1);
    const stored = JSON.stringify(items, (_key, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value));
    expect(stored).not.toContain(attachments[1]!.data.slice(0, 64));
    expect(stored).not.toContain('xoxb-lambda-credential');
    expect(stored).not.toContain('"earlier"');
  });

  it('small params still travel inline in the message, exactly as before', async () => {
    const params = { text: 'small #sleep=300', channel: 'C2' };
    const accepted = await rpc('execute_task', params);
    const taskId = accepted.result.task_id as string;
    const { message, result } = await runQueued(taskId);
    expect(JSON.parse(message.body)).toEqual({ task_id: taskId, params });
    expect(result.result).toEqual(echoSuccess('small #sleep=300'));
    expect((await tableItems()).some((item) => item.task_id?.S?.startsWith(`params-${taskId}`))).toBe(false);
  });

  it('the same hand-off delivered to two workers at once runs once: the other hands the message back to the queue, whose next delivery finds the task done', async () => {
    const params = { text: 'twice #sleep=300', channel: 'C3' };
    const accepted = await rpc('execute_task', params);
    const taskId = accepted.result.task_id as string;
    const [message] = await sqs.waitForMessages('execution-worker', 1);

    const both = await Promise.all([0, 1].map(() => worker(sqsEvent(message!.body), lambdaContext(60_000, 'execution-worker'))));

    expect(both.map((answer) => answer.batchItemFailures).sort((a, b) => a.length - b.length)).toEqual([[], [{ itemIdentifier: 'msg-0' }]]);
    expect((await rpc('get_task_result', { task_id: taskId })).result).toEqual(echoSuccess('twice #sleep=300'));
    expect((await worker(sqsEvent(message!.body), lambdaContext(60_000, 'execution-worker'))).batchItemFailures).toEqual([]);
    // Any other failure of the whole batch is still an invocation error (the function's Errors alarm).
    await expect(worker(sqsEvent('not json'), lambdaContext(60_000, 'execution-worker'))).rejects.toThrow(/All records failed/);
  });

  it('a task with stream: true: the worker streams into the task item and polls through the URL follow it by cursor', async () => {
    // #sleep: the function URL's own attempt (which never streams: the worker runs the task again) passes its budget.
    const params = { text: '#sleep=100 #stream=20 one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty thirty-one thirty-two thirty-three thirty-four thirty-five thirty-six thirty-seven thirty-eight thirty-nine forty', stream: true };
    const accepted = await rpc('execute_task', params);
    expect(accepted.result).toEqual({ status: 'accepted', task_id: expect.stringMatching(/^task-/) });
    const taskId = accepted.result.task_id as string;
    const [message] = await sqs.waitForMessages('execution-worker', 1);
    expect(JSON.parse(message!.body)).toEqual({ task_id: taskId, params });

    const working = worker(sqsEvent(message!.body), lambdaContext(60_000, 'execution-worker'));
    const pieces: string[] = [];
    let cursor: string | undefined;
    let final: Record<string, unknown> | undefined;
    while (!final) {
      const { result } = await rpc('get_task_result', { task_id: taskId, ...(cursor === undefined ? {} : { cursor }) });
      if (result.status === 'success') final = result;
      // `accepted` until the worker takes the task (the function URL's own attempt leaves it so).
      else if (result.status === 'accepted') expect(result).toEqual({ status: 'accepted', task_id: taskId });
      else {
        expect(result).toMatchObject({ status: 'working', task_id: taskId, cursor: expect.any(String) });
        if (result.text !== undefined) pieces.push(result.text);
        cursor = result.cursor;
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    }
    expect((await working).batchItemFailures).toEqual([]);

    expect(final).toEqual(echoSuccess(params.text));
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect((final.response_text as string).startsWith(pieces.join(''))).toBe(true);
    const item = (await tableItems()).find((entry) => entry.task_id?.S === taskId);
    expect(item?.partial_text).toBeUndefined();
    expect(item?.partial_length).toBeUndefined();
  });

  it('a streamed execute_task (Accept: text/event-stream): the URL streams the text the worker writes to the task item, as events, and ends with the answer', async () => {
    // Prepare: the function URL's own attempt passes its budget (#sleep) and hands the task off; the worker streams it
    const params = { text: '#sleep=100 #stream=50 one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty', stream: true };
    const stream = new FakeResponseStream();
    const written: string[] = [];
    stream.onChunk((chunk) => written.push(chunk));
    // Act: the stream is open while the queued hand-off goes to the worker
    const streaming = invokeStreaming(functionUrl, urlEvent(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params, id: 'sse-1' }), SSE), lambdaContext(60_000), stream);
    const [message] = await sqs.waitForMessages('execution-worker', 1);
    const processed = await worker(sqsEvent(message!.body), lambdaContext(60_000, 'execution-worker'));
    const answer = await streaming;
    // Assess
    expect(processed.batchItemFailures).toEqual([]);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['Content-Type']).toBe('text/event-stream');
    const events = sseData(answer.body).map((data) => JSON.parse(data));
    // Text came in pieces, each written to the response as it was read: at least two before the answer.
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(written.length).toBe(events.length);
    const taskId = events[0].result.task_id as string;
    const last = events.at(-1);
    expect(last).toEqual({ jsonrpc: '2.0', result: echoSuccess(params.text), id: 'sse-1' });
    // The worker starts the task a moment later: the stream may first name the task, without text.
    const named = events[0].result.text === undefined ? [events[0]] : [];
    expect(named).toEqual(named.length ? [{ jsonrpc: '2.0', result: { status: 'working', task_id: taskId, cursor: '0' }, id: 'sse-1' }] : []);
    const progress = events.slice(named.length, -1);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    let cursor = 0;
    for (const event of progress) {
      expect(event).toEqual({ jsonrpc: '2.0', result: { status: 'working', task_id: taskId, text: expect.any(String), cursor: expect.any(String) }, id: 'sse-1' });
      cursor += event.result.text.length;
      expect(event.result.cursor).toBe(String(cursor));
    }
    expect(last.result.response_text.startsWith(progress.map((event) => event.result.text).join(''))).toBe(true);
  });

  it('a streamed answer ends before the invocation\'s time does: accepted with the cursor to poll from', async () => {
    // Prepare: 6 s left, of which the stream keeps 5 for its end: it lasts about a second; the task is never run by a worker here
    const params = { text: 'never run #sleep=100', stream: true };
    // Act
    const answer = await invokeStreaming(functionUrl, urlEvent(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params, id: 'sse-2' }), SSE), lambdaContext(6_000));
    // Assess
    expect(answer.headers['Content-Type']).toBe('text/event-stream');
    const events = sseData(answer.body).map((data) => JSON.parse(data));
    // A quiet task is named first (no text), then handed back with the cursor to poll from.
    const taskId = expect.stringMatching(/^task-/);
    expect(events).toEqual([
      { jsonrpc: '2.0', result: { status: 'working', task_id: taskId, cursor: '0' }, id: 'sse-2' },
      { jsonrpc: '2.0', result: { status: 'accepted', task_id: taskId, cursor: '0' }, id: 'sse-2' },
    ]);
    expect(events[0].result.task_id).toBe(events[1].result.task_id);
    await sqs.waitForMessages('execution-worker', 1);
  });

  it('a request that asks for a stream and is refused before it (invalid params) is answered with plain JSON', async () => {
    const answer = await invokeStreaming(functionUrl, urlEvent(JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: '', stream: true }, id: 'sse-3' }), SSE), lambdaContext());
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32602 }, id: 'sse-3' });
  });
});
