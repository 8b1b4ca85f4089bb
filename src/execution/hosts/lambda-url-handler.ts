import type { APIGatewayProxyStructuredResultV2 as LambdaFunctionURLResult, LambdaFunctionURLEvent } from 'aws-lambda';
import type { ExecutionRuntime } from '../runtime';
import { AGENT_CARD_PATH } from '../../contract';

/**
 * The execution runtime behind a Lambda function URL (the `https` transport): the same
 * dispatcher, the same HTTP semantics as the AgentCore host. Accepted tasks must be finished by
 * a worker after this function returns; the runtime's `handoff` is that seam.
 */
export async function handleFunctionUrlEvent(runtime: ExecutionRuntime, event: LambdaFunctionURLEvent): Promise<LambdaFunctionURLResult> {
  const method = event.requestContext.http.method;
  const path = event.rawPath || '/';
  if (method === 'GET' && path === AGENT_CARD_PATH) return json(200, runtime.card);
  if (path !== '/' && path !== '/invocations') return json(404, { error: 'Not Found' });
  if (method !== 'POST') return json(405, { error: 'Method Not Allowed' }, { Allow: 'POST' });

  const body = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (size > runtime.config.MAX_BODY_BYTES) return json(413, { error: `Payload Too Large: the limit is ${runtime.config.MAX_BODY_BYTES} bytes` });

  const answer = await runtime.dispatch(body);
  if (answer === undefined) return { statusCode: 204 };
  return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: answer };
}

function json(statusCode: number, value: unknown, headers: Record<string, string> = {}): LambdaFunctionURLResult {
  return { statusCode, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(value) };
}
