import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { loadExecutionConfig } from '../../src/execution/config';
import { handleFunctionUrlEvent } from '../../src/execution/hosts/lambda-url-handler';
import { createExecutionRuntime } from '../../src/execution/runtime';

const runtime = createExecutionRuntime({ config: loadExecutionConfig({ MAX_BODY_BYTES: '200' }) });

function urlEvent(method: string, body?: string, base64 = false, path = '/'): LambdaFunctionURLEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
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
      expect(JSON.parse(result.body as string)).toEqual({ jsonrpc: '2.0', result: { status: 'success', response_text: 'echo: hi' }, id: 'u1' });
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
});
