import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { loadExecutionConfig } from '../../src/execution/config';
import { handleFunctionUrlEvent } from '../../src/execution/hosts/lambda-url-handler';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { echoSuccess } from '../support/echo-usage';

const runtime = createExecutionRuntime({ config: loadExecutionConfig({ MAX_BODY_BYTES: '200' }) });

function urlEvent(method: string, body?: string, base64 = false, path = '/', headers: Record<string, string> = {}): LambdaFunctionURLEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' } },
    body: base64 && body !== undefined ? Buffer.from(body).toString('base64') : body,
    isBase64Encoded: base64,
  } as unknown as LambdaFunctionURLEvent;
}

const execute = JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'hi' }, id: 'u1' });

describe('handleFunctionUrlEvent', () => {
  it('dispatches a plain body and a base64 body alike', async () => {
    for (const base64 of [false, true]) {
      const result = await handleFunctionUrlEvent(runtime, urlEvent('POST', execute, base64));
      expect(result.statusCode).toBe(200);
      expect(JSON.parse(result.body as string)).toEqual({ jsonrpc: '2.0', result: echoSuccess('hi'), id: 'u1' });
    }
  });

  it('answers a notification with 204 and no body', async () => {
    const result = await handleFunctionUrlEvent(runtime, urlEvent('POST', JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'n' } })));
    expect(result).toEqual({ statusCode: 204 });
  });

  it('answers JSON-RPC errors with HTTP 200, and a missing body with -32700', async () => {
    const result = await handleFunctionUrlEvent(runtime, urlEvent('POST', undefined));
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body as string).error.code).toBe(-32700);
  });

  it('refuses other methods, other paths and oversized bodies', async () => {
    expect((await handleFunctionUrlEvent(runtime, urlEvent('GET'))).statusCode).toBe(405);
    expect((await handleFunctionUrlEvent(runtime, urlEvent('POST', execute, false, '/other'))).statusCode).toBe(404);
    expect((await handleFunctionUrlEvent(runtime, urlEvent('POST', 'x'.repeat(300)))).statusCode).toBe(413);
    expect((await handleFunctionUrlEvent(runtime, urlEvent('GET', undefined, false, '/.well-known/agent-card.json'))).statusCode).toBe(200);
  });

  it('answers a request that asks for a stream with server-sent events: the text by cursor, then the answer', async () => {
    // Prepare
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'one two three #stream=20', stream: true }, id: 's1' });
    // Act
    const result = await handleFunctionUrlEvent(runtime, urlEvent('POST', body, false, '/', { accept: 'text/event-stream' }), { remainingMs: () => 30_000 });
    // Assess
    expect(result).toMatchObject({ statusCode: 200, headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' } });
    expect(result.body).toBeInstanceOf(Readable);
    const events = (await text(result.body as Readable)).split('\n\n').filter(Boolean);
    expect(events.every((event) => event.startsWith('data: '))).toBe(true);
    const answers = events.map((event) => JSON.parse(event.slice('data: '.length)));
    expect(answers.at(-1)).toEqual({ jsonrpc: '2.0', result: echoSuccess('one two three #stream=20'), id: 's1' });
    const streamed = answers.slice(0, -1).map((answer) => answer.result.text).join('');
    expect(streamed.startsWith('echo: ')).toBe(true);
    expect('echo: one two three #stream=20'.startsWith(streamed)).toBe(true);
  });

  it('answers a request that asks for a stream but cannot have one with plain JSON: no stream param, an error before the stream, a notification', async () => {
    const sse = { accept: 'text/event-stream, application/json' };
    const plain = await handleFunctionUrlEvent(runtime, urlEvent('POST', execute, false, '/', sse));
    expect(plain).toMatchObject({ statusCode: 200, headers: { 'Content-Type': 'application/json' } });
    expect(JSON.parse(plain.body as string)).toEqual({ jsonrpc: '2.0', result: echoSuccess('hi'), id: 'u1' });
    const refused = await handleFunctionUrlEvent(runtime, urlEvent('POST', JSON.stringify({ jsonrpc: '2.0', method: 'get_task_result', params: { task_id: 'task-none', stream: true }, id: 'u2' }), false, '/', sse));
    expect(JSON.parse(refused.body as string)).toMatchObject({ error: { code: -32002 }, id: 'u2' });
    const notification = await handleFunctionUrlEvent(runtime, urlEvent('POST', JSON.stringify({ jsonrpc: '2.0', method: 'execute_task', params: { text: 'n', stream: true } }), false, '/', sse));
    expect(notification).toEqual({ statusCode: 204 });
  });
});
