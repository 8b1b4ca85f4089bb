import { createServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
// The SDK's own event-stream codec: the frames are what Bedrock sends, binary prelude, headers and CRCs included.
import { EventStreamCodec } from '@smithy/core/event-streams';

/**
 * Bedrock Runtime's Converse and ConverseStream on loopback, over HTTP/2 without TLS (h2c): the
 * Bedrock Runtime client the execution zone creates with no options (src/execution/runtime-from-env.ts)
 * speaks HTTP/2, so a deployed bundle pointed here with AWS_ENDPOINT_URL_BEDROCK_RUNTIME talks to
 * it exactly as to Bedrock. The model answers `rehearsed: <the last user text>`, in three deltas
 * when streamed; a text holding `#sleep=<ms>` is answered that much later (a slow task).
 */
export type FakeBedrockRuntime = {
  endpoint: string;
  /** The operations called, in order: `converse` or `converse-stream`, with the model id. */
  calls: Array<{ operation: string; modelId: string }>;
  close(): Promise<void>;
};

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const header = (value: string) => ({ type: 'string' as const, value });
const event = (type: string, body: unknown) =>
  codec.encode({
    headers: { ':message-type': header('event'), ':event-type': header(type), ':content-type': header('application/json') },
    body: new TextEncoder().encode(JSON.stringify(body)),
  });

export async function startFakeBedrockRuntime(): Promise<FakeBedrockRuntime> {
  const calls: FakeBedrockRuntime['calls'] = [];
  const server: Http2Server = createServer((req: Http2ServerRequest, res: Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void answer(req, res, Buffer.concat(chunks).toString('utf8'), calls));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function answer(req: Http2ServerRequest, res: Http2ServerResponse, body: string, calls: FakeBedrockRuntime['calls']): Promise<void> {
  const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) {
    res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'UnknownOperationException' }).end('{"message":"unknown operation"}');
    return;
  }
  const modelId = decodeURIComponent(match[1]!);
  calls.push({ operation: match[2]!, modelId });
  const prompt = lastUserText(body);
  const delayMs = Number(/#sleep=(\d+)/.exec(prompt)?.[1] ?? 0);
  if (delayMs) await sleep(delayMs);
  const text = `rehearsed: ${prompt}`;
  const usage = { inputTokens: prompt.length, outputTokens: text.length, totalTokens: prompt.length + text.length };
  if (match[2] === 'converse') {
    const json = JSON.stringify({ output: { message: { role: 'assistant', content: [{ text }] } }, stopReason: 'end_turn', usage, metrics: { latencyMs: delayMs } });
    res.writeHead(200, { 'content-type': 'application/json' }).end(json);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  res.write(event('messageStart', { role: 'assistant' }));
  const third = Math.ceil(text.length / 3);
  for (let i = 0; i < text.length; i += third) res.write(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: text.slice(i, i + third) } }));
  res.write(event('contentBlockStop', { contentBlockIndex: 0 }));
  res.write(event('messageStop', { stopReason: 'end_turn' }));
  res.end(event('metadata', { usage, metrics: { latencyMs: delayMs } }));
}

/** The text of the last user turn of a Converse request. */
function lastUserText(body: string): string {
  try {
    const request = JSON.parse(body) as { messages?: Array<{ role: string; content: Array<{ text?: string }> }> };
    const user = (request.messages ?? []).filter((m) => m.role === 'user').at(-1);
    return (user?.content ?? []).map((block) => block.text ?? '').join('').trim();
  } catch {
    return '';
  }
}
