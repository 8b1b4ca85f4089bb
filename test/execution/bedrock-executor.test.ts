import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { BedrockExecutor } from '../../src/execution/executors/bedrock-executor';
import { RpcError } from '../../src/execution/rpc-error';
import { createLogger } from '../../src/observability/logger';
import { closeServer, listenOnLoopback } from '../support/http';

/** A loopback stand-in for Bedrock Runtime's Converse API, so the real SDK client is exercised. */
type Reply = { status: number; body: unknown; errorType?: string };
let nextReply: Reply;
let seen: { path: string; body: { system: Array<{ text: string }>; messages: Array<{ content: Array<{ text: string }> }> } } | undefined;
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    seen = { path: decodeURIComponent(req.url ?? ''), body: JSON.parse(body) };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (nextReply.errorType) headers['x-amzn-errortype'] = nextReply.errorType;
    res.writeHead(nextReply.status, headers).end(JSON.stringify(nextReply.body));
  });
});

let executor: BedrockExecutor;
const context = () => ({ taskId: 't', signal: new AbortController().signal, log: createLogger('test') });

beforeAll(async () => {
  const endpoint = await listenOnLoopback(server);
  const client = new BedrockRuntimeClient({ endpoint, region: 'us-east-1', maxAttempts: 1,
    // Bedrock Runtime defaults to HTTP/2 (for streaming); the loopback stand-in speaks HTTP/1.1.
    requestHandler: new NodeHttpHandler(),
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  executor = new BedrockExecutor({ client, modelId: 'anthropic.claude-test-v1:0', systemPrompt: 'Be brief.' });
});
afterAll(() => closeServer(server));

describe('BedrockExecutor', () => {
  it('sends one Converse call with the system prompt and the task text, and answers with the text blocks', async () => {
    nextReply = {
      status: 200,
      body: {
        output: { message: { role: 'assistant', content: [{ text: 'Hello' }, { text: 'there' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 },
        metrics: { latencyMs: 5 },
      },
    };
    const output = await executor.execute({ text: 'hi' }, context());
    expect(seen?.path).toBe('/model/anthropic.claude-test-v1:0/converse');
    expect(seen?.body.system).toEqual([{ text: 'Be brief.' }]);
    expect(seen?.body.messages[0]?.content).toEqual([{ text: 'hi' }]);
    expect(output).toEqual({
      response_text: 'Hello\nthere',
      model_id: 'anthropic.claude-test-v1:0',
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 3 },
    });
  });

  it.each([
    ['ThrottlingException', 429, -32010, true],
    ['ValidationException', 400, -32011, false],
    ['AccessDeniedException', 403, -32012, false],
  ])('maps %s to server-defined code %i', async (errorType, status, code, retryable) => {
    nextReply = { status, errorType, body: { message: 'provider detail that users must not see' } };
    const error = await executor.execute({ text: 'hi' }, context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe(code);
    expect((error as RpcError).data).toMatchObject({ retryable });
    expect((error as RpcError).message).not.toMatch(/provider detail/);
  });
});
