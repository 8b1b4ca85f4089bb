import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { BedrockExecutor } from '../../src/execution/executors/bedrock-executor';
import { RpcError } from '../../src/execution/rpc-error';
import { createLogger, type Log, type LogExtra } from '../../src/observability/logger';
import { closeServer, listenOnLoopback } from '../support/http';

/** A loopback stand-in for Bedrock Runtime's Converse API, so the real SDK client is exercised. */
type Reply = { status: number; body: unknown; errorType?: string };
let nextReply: Reply;
/** When set, the reply for a request by what it carries (e.g. refuse only requests with images). */
let replyFor: ((body: { messages: Array<{ content: SeenBlock[] }> }) => Reply) | undefined;
const requestsSeen: Array<{ messages: Array<{ content: SeenBlock[] }> }> = [];
type SeenBlock = {
  text?: string;
  image?: { format: string; source: { bytes: string } };
  document?: { format: string; name: string; source: { bytes: string } };
};
let seen: { path: string; body: { system: Array<{ text: string }>; messages: Array<{ role: string; content: SeenBlock[] }> } } | undefined;
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    seen = { path: decodeURIComponent(req.url ?? ''), body: JSON.parse(body) };
    requestsSeen.push(seen.body);
    const reply = replyFor ? replyFor(seen.body) : nextReply;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (reply.errorType) headers['x-amzn-errortype'] = reply.errorType;
    res.writeHead(reply.status, headers).end(JSON.stringify(reply.body));
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
      usage: { input_tokens: 10, output_tokens: 3, model: 'anthropic.claude-test-v1:0' },
    });
  });

  it("reports Converse's prompt-cache counts in its usage", async () => {
    nextReply = {
      status: 200,
      body: {
        output: { message: { role: 'assistant', content: [{ text: 'cached' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 3, outputTokens: 1, totalTokens: 1204, cacheReadInputTokens: 1000, cacheWriteInputTokens: 200 },
        metrics: { latencyMs: 5 },
      },
    };
    const output = await executor.execute({ text: 'hi' }, context());
    expect(output.usage).toEqual({ input_tokens: 3, output_tokens: 1, cache_read_tokens: 1000, cache_write_tokens: 200, model: 'anthropic.claude-test-v1:0' });
  });

  it('sends the thread as alternating turns and the attachments as blocks of the last one, bytes intact', async () => {
    nextReply = { status: 200, body: { output: { message: { role: 'assistant', content: [{ text: 'ok' }] } }, stopReason: 'end_turn', usage: {} } };
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 254, 255]);
    const pdf = Buffer.from('%PDF-1.7 \u0000\u00ff binary');
    const zip = Buffer.from('PK\u0003\u0004 secret zip content');
    const warnings: Array<[string, LogExtra[]]> = [];
    const log: Log = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (message, ...extra) => warnings.push([message, extra]) };
    await executor.execute(
      {
        text: 'what about these?',
        user_id: 'U2',
        messages: [
          { role: 'assistant', text: 'Hi, I am the bot', ts: '1.0' },
          { role: 'user', text: 'plan A', user_id: 'U1', ts: '1.1' },
          { role: 'assistant', text: 'A is fine', ts: '1.2' },
          { role: 'user', text: 'plan B', user_id: 'U2', ts: '1.3' },
        ],
        attachments: [
          { name: 'chart.png', mimetype: 'image/png', size: png.length, data: png.toString('base64') },
          { name: 'secret-archive.zip', mimetype: 'application/zip', size: zip.length, data: zip.toString('base64') },
          { name: 'spec_v2.pdf', mimetype: 'application/pdf', size: pdf.length, data: pdf.toString('base64') },
        ],
      },
      { ...context(), log },
    );
    const messages = seen!.body.messages;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[0]!.content).toEqual([{ text: '<@U1>: plan A' }]);
    expect(messages[1]!.content).toEqual([{ text: 'A is fine' }]);
    const [text, image, document, ...rest] = messages[2]!.content;
    expect(text).toEqual({ text: '<@U2>: plan B\n\n<@U2>: what about these?' });
    expect(image?.image?.format).toBe('png');
    expect(Buffer.from(image!.image!.source.bytes, 'base64').equals(png)).toBe(true);
    expect(document?.document).toMatchObject({ format: 'pdf', name: 'spec-v2' });
    expect(Buffer.from(document!.document!.source.bytes, 'base64').equals(pdf)).toBe(true);
    expect(rest).toEqual([]);
    // The zip was left out with a warning that names its type and size, never its name or bytes.
    expect(warnings).toEqual([[expect.stringMatching(/unsupported type/), [{ attachment_index: 1, mimetype: 'application/zip', size: zip.length }]]]);
    expect(JSON.stringify(warnings)).not.toMatch(/secret|UEsDB/);
  });

  it('asks once more without the files when the model refuses them, and says so under the answer', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    requestsSeen.length = 0;
    replyFor = (body) =>
      body.messages.some((message) => message.content.some((block) => block.image))
        ? { status: 400, errorType: 'ValidationException', body: { message: 'The image exceeds max pixels' } }
        : { status: 200, body: { output: { message: { role: 'assistant', content: [{ text: 'An answer from the text alone.' }] } }, stopReason: 'end_turn', usage: {} } };
    try {
      const output = await executor.execute({ text: 'what is in this picture?', attachments: [{ name: 'huge.png', mimetype: 'image/png', size: png.length, data: png.toString('base64') }] }, context());
      expect(requestsSeen).toHaveLength(2);
      expect(requestsSeen[1]!.messages.flatMap((message) => message.content).some((block) => block.image)).toBe(false);
      expect(output.response_text).toBe('An answer from the text alone.\n\n_(The model could not read the attached files, so this answer is without them.)_');
      // Without files to leave out, a refusal stays the task's error.
      await expect(executor.execute({ text: 'no files here', attachments: [] }, context())).resolves.toBeDefined();
      replyFor = () => ({ status: 400, errorType: 'ValidationException', body: { message: 'bad' } });
      await expect(executor.execute({ text: 'no files here' }, context())).rejects.toMatchObject({ code: -32011 });
    } finally {
      replyFor = undefined;
    }
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
