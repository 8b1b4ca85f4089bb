import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
// The SDK's own event-stream codec (@smithy/core, which the Bedrock client depends on): the frames
// below are what Bedrock sends, binary prelude, headers and CRCs included.
import { EventStreamCodec } from '@smithy/core/event-streams';
import { loadExecutionConfig } from '../../src/execution/config';
import { BedrockExecutor } from '../../src/execution/executors/bedrock-executor';
import { RpcError } from '../../src/execution/rpc-error';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { createLogger } from '../../src/observability/logger';
import { closeServer, listenOnLoopback } from '../support/http';

/**
 * BedrockExecutor with `onText`: ConverseStream through the real SDK client against a loopback
 * stand-in that answers in the AWS event-stream encoding, frame by frame, as Bedrock does.
 */
const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const header = (value: string) => ({ type: 'string' as const, value });
const frame = (kind: 'event' | 'exception', type: string, body: unknown) =>
  codec.encode({
    headers:
      kind === 'event'
        ? { ':message-type': header('event'), ':event-type': header(type), ':content-type': header('application/json') }
        : { ':message-type': header('exception'), ':exception-type': header(type), ':content-type': header('application/json') },
    body: new TextEncoder().encode(JSON.stringify(body)),
  });
const event = (type: string, body: unknown) => frame('event', type, body);
const exception = (type: string, body: unknown) => frame('exception', type, body);
const delta = (text: string, contentBlockIndex = 0) => event('contentBlockDelta', { contentBlockIndex, delta: { text } });

/** What the stand-in does with one request: frames to write (a function waits before its frames), or an HTTP error. */
type Step = Uint8Array | (() => Promise<void>);
type Script = { steps: Step[] } | { status: number; errorType: string; body: unknown };
let script: Script;
let seen: { path: string; body: any } | undefined;

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', async () => {
    seen = { path: decodeURIComponent(req.url ?? ''), body: JSON.parse(body) };
    if ('status' in script) {
      res.writeHead(script.status, { 'content-type': 'application/json', 'x-amzn-errortype': script.errorType }).end(JSON.stringify(script.body));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    for (const step of script.steps) {
      if (res.destroyed) return;
      if (typeof step === 'function') await step();
      else res.write(step);
    }
    res.end();
  });
});

let client: BedrockRuntimeClient;
let executor: BedrockExecutor;
const MODEL = 'anthropic.claude-test-v1:0';

beforeAll(async () => {
  const endpoint = await listenOnLoopback(server);
  client = new BedrockRuntimeClient({
    endpoint,
    region: 'us-east-1',
    maxAttempts: 1,
    // Bedrock Runtime defaults to HTTP/2 (for streaming); the loopback stand-in speaks HTTP/1.1.
    requestHandler: new NodeHttpHandler(),
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  executor = new BedrockExecutor({ client, modelId: MODEL, systemPrompt: 'Be brief.', maxTokens: 100 });
});
afterAll(async () => {
  client.destroy();
  await closeServer(server);
});

const context = (onText?: (delta: string) => void, signal = new AbortController().signal) => ({ taskId: 't', signal, log: createLogger('test'), ...(onText ? { onText } : {}) });

describe('BedrockExecutor with onText (ConverseStream)', () => {
  it('sends the Converse input to converse-stream and hands over each text delta as it arrives, then answers like Converse', async () => {
    // Prepare: the second delta is only sent once the first has reached onText, so it cannot pass by buffering
    let firstArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
    script = {
      steps: [
        event('messageStart', { role: 'assistant' }),
        delta('Hel'),
        () => arrived,
        delta('lo '),
        delta('there'),
        event('contentBlockStop', { contentBlockIndex: 0 }),
        event('messageStop', { stopReason: 'end_turn' }),
        event('metadata', { usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 }, metrics: { latencyMs: 5 } }),
      ],
    };
    const pieces: string[] = [];
    // Act
    const output = await executor.execute(
      { text: 'hi', messages: [{ role: 'assistant', text: 'dropped: before the first user turn', ts: '1' }] },
      context((piece) => {
        pieces.push(piece);
        firstArrived();
      }),
    );
    // Assess
    expect(seen?.path).toBe(`/model/${MODEL}/converse-stream`);
    expect(seen?.body).toEqual({ system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: 100 } });
    expect(pieces).toEqual(['Hel', 'lo ', 'there']);
    expect(output).toEqual({ response_text: 'Hello there', model_id: MODEL, stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 3, model: MODEL } });
  });

  it('joins text blocks with a newline, as Converse does, inside the deltas; other deltas and events are not text', async () => {
    // Prepare
    script = {
      steps: [
        event('messageStart', { role: 'assistant' }),
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'thinking…' } } }),
        delta('First.', 1),
        delta('', 1),
        event('contentBlockStop', { contentBlockIndex: 1 }),
        delta('Second', 2),
        delta('.', 2),
        event('messageStop', { stopReason: 'max_tokens' }),
        event('metadata', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 1 } }),
      ],
    };
    const pieces: string[] = [];
    // Act
    const output = await executor.execute({ text: 'hi' }, context((piece) => pieces.push(piece)));
    // Assess
    expect(pieces).toEqual(['First.', '\nSecond', '.']);
    expect(output.response_text).toBe('First.\nSecond.');
    expect(pieces.join('')).toBe(output.response_text);
    expect(output).toMatchObject({ stop_reason: 'max_tokens', usage: { input_tokens: 1, output_tokens: 2, model: MODEL } });
  });

  it.each([
    ['throttlingException', -32010, true],
    ['serviceUnavailableException', -32012, true],
    ['internalServerException', -32012, true],
    ['modelStreamErrorException', -32012, true],
    ['validationException', -32011, false],
  ])('maps an exception event %s in the middle of the stream to %i (retryable %s), after the text before it', async (type, code, retryable) => {
    // Prepare
    script = { steps: [event('messageStart', { role: 'assistant' }), delta('partial '), exception(type, { message: 'provider detail that users must not see', originalStatusCode: 500 })] };
    const pieces: string[] = [];
    // Act
    const error = await executor.execute({ text: 'hi' }, context((piece) => pieces.push(piece))).catch((e: unknown) => e);
    // Assess
    expect(pieces).toEqual(['partial ']);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code, data: { retryable, model_id: MODEL } });
    expect((error as RpcError).message).not.toMatch(/provider detail/);
  });

  it.each([
    ['ThrottlingException', 429, -32010, true],
    ['ValidationException', 400, -32011, false],
    ['AccessDeniedException', 403, -32012, false],
    ['ModelNotReadyException', 429, -32012, true],
  ])('maps %s answered before the stream starts (HTTP %i) as for Converse: %i', async (errorType, status, code, retryable) => {
    // Prepare
    script = { status, errorType, body: { message: 'provider detail that users must not see' } };
    // Act
    const error = await executor.execute({ text: 'hi' }, context(() => undefined)).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code, data: { retryable } });
  });

  it('stops reading when the task is aborted mid-stream, without mapping the abort to a model error', async () => {
    // Prepare
    const controller = new AbortController();
    script = { steps: [event('messageStart', { role: 'assistant' }), delta('a'), () => sleep(400), delta('b')] };
    const pieces: string[] = [];
    // Act
    const running = executor.execute({ text: 'hi' }, context((piece) => {
      pieces.push(piece);
      setTimeout(() => controller.abort(new RpcError(-32003, 'Task cancelled')), 20);
    }, controller.signal));
    const error = await running.catch((e: unknown) => e);
    // Assess
    expect(pieces).toEqual(['a']);
    // The task service reports the signal's reason (cancelled, timed out), not this error.
    expect(error).not.toBeInstanceOf(RpcError);
    expect(controller.signal.aborted).toBe(true);
  });

  it('through the runtime: execute_task with stream: true is answered with the first text, and polls carry the rest', async () => {
    // Prepare
    script = {
      steps: [
        event('messageStart', { role: 'assistant' }),
        delta('Streaming '),
        () => sleep(150),
        delta('works '),
        () => sleep(150),
        delta('end to end.'),
        () => sleep(50),
        event('messageStop', { stopReason: 'end_turn' }),
        event('metadata', { usage: { inputTokens: 4, outputTokens: 5, totalTokens: 21, cacheReadInputTokens: 8, cacheWriteInputTokens: 4 }, metrics: { latencyMs: 1 } }),
      ],
    };
    const runtime = createExecutionRuntime({ config: loadExecutionConfig({ STREAM_FIRST_TEXT_MS: '50' }), executor });
    const call = async (method: string, params: unknown) => JSON.parse((await runtime.dispatch(JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 })))!).result;
    // Act
    const started = await call('execute_task', { text: 'hi', stream: true });
    let cursor = started.cursor as string;
    let streamed = started.text as string;
    let final: Record<string, unknown> | undefined;
    while (!final) {
      await sleep(20);
      const answer = await call('get_task_result', { task_id: started.task_id, cursor });
      if (answer.status === 'success') final = answer;
      else {
        streamed += answer.text ?? '';
        cursor = answer.cursor;
      }
    }
    // Assess
    expect(started).toEqual({ status: 'accepted', task_id: expect.any(String), text: 'Streaming ', cursor: '10' });
    // The usage of ConverseStream's metadata event, cache counts included, survives the task store to the poll.
    expect(final).toEqual({
      status: 'success',
      response_text: 'Streaming works end to end.',
      model_id: MODEL,
      stop_reason: 'end_turn',
      usage: { input_tokens: 4, output_tokens: 5, cache_read_tokens: 8, cache_write_tokens: 4, model: MODEL },
    });
    expect(streamed).toBe('Streaming works end to end.');
  });

  it('without onText it still calls Converse, not ConverseStream', async () => {
    // Prepare: the stand-in answers this one as Converse would
    script = { status: 200, errorType: '', body: { output: { message: { role: 'assistant', content: [{ text: 'plain' }] } }, stopReason: 'end_turn', usage: {} } };
    // Act
    const output = await executor.execute({ text: 'hi' }, context());
    // Assess
    expect(seen?.path).toBe(`/model/${MODEL}/converse`);
    expect(output.response_text).toBe('plain');
    // Converse gave no counts: no usage rather than one of undefined counts.
    expect(output).not.toHaveProperty('usage');
  });

  it('a stream cut before its metadata event answers without usage', async () => {
    // Prepare
    script = { steps: [event('messageStart', { role: 'assistant' }), delta('no count'), event('messageStop', { stopReason: 'end_turn' })] };
    // Act
    const output = await executor.execute({ text: 'hi' }, context(() => undefined));
    // Assess
    expect(output).toEqual({ response_text: 'no count', model_id: MODEL, stop_reason: 'end_turn' });
  });
});
