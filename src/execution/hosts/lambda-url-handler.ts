import { Readable } from 'node:stream';
import type { APIGatewayProxyStructuredResultV2 as LambdaFunctionURLResult, LambdaFunctionURLEvent } from 'aws-lambda';
import type { ExecutionRuntime } from '../runtime';
import { AGENT_CARD_PATH } from '../../contract';
import { EVENT_STREAM_HEADERS, SseFrames, acceptsEventStream } from './sse';

/** A streamed answer: its events as they come, piped into Lambda's response stream. */
export type FunctionUrlStreamResult = { statusCode: 200; headers: Record<string, string>; body: Readable };

export type FunctionUrlOptions = {
  /** The invocation's remaining time (Lambda's `context.getRemainingTimeInMillis`): a stream ends before it runs out. */
  remainingMs?: () => number;
};

/**
 * A stream ends this long before the invocation's time is out, with `accepted` and a cursor:
 * time to write the last event and end the response.
 */
export const STREAM_END_MARGIN_MS = 5_000;

/**
 * The execution runtime behind a Lambda function URL (the `https` transport): the same
 * dispatcher, the same HTTP semantics as the AgentCore host. Accepted tasks must be finished by
 * a worker after this function returns; the runtime's `handoff` is that seam.
 *
 * The function URL streams its response (`InvokeMode: RESPONSE_STREAM`, the handler wrapped by
 * middy's `streamifyResponse`): a request whose `Accept` takes `text/event-stream` may get a
 * streamed answer (docs/contract.md, "Streamed answers"), whose body is a stream of server-sent
 * events; every other answer is a plain body, as before. A streamed answer reads the task table
 * (the worker writes the task's text there) and ends with `accepted` and a cursor before the
 * invocation's remaining time runs out.
 */
export async function handleFunctionUrlEvent(runtime: ExecutionRuntime, event: LambdaFunctionURLEvent, options: FunctionUrlOptions = {}): Promise<LambdaFunctionURLResult | FunctionUrlStreamResult> {
  const method = event.requestContext.http.method;
  const path = event.rawPath || '/';
  if (method === 'GET' && path === AGENT_CARD_PATH) return json(200, runtime.card);
  if (path !== '/' && path !== '/invocations') return json(404, { error: 'Not Found' });
  if (method !== 'POST') return json(405, { error: 'Method Not Allowed' }, { Allow: 'POST' });

  const body = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (size > runtime.config.MAX_BODY_BYTES) return json(413, { error: `Payload Too Large: the limit is ${runtime.config.MAX_BODY_BYTES} bytes` });

  let answer: string | undefined;
  if (acceptsEventStream(headerOf(event, 'accept'))) {
    const deadline = options.remainingMs ? performance.now() + options.remainingMs() - STREAM_END_MARGIN_MS : undefined;
    const opening = await runtime.openStream(body, deadline === undefined ? {} : { deadline });
    if (opening.stream) {
      const frames = Readable.from(new SseFrames(opening.events));
      return { statusCode: 200, headers: { ...EVENT_STREAM_HEADERS }, body: frames };
    }
    answer = opening.body;
  } else answer = await runtime.dispatch(body);
  if (answer === undefined) return { statusCode: 204 };
  return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: answer };
}

/** A request header; function URL events carry them lower-cased. */
function headerOf(event: LambdaFunctionURLEvent, name: string): string | undefined {
  return event.headers?.[name] ?? Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
}

function json(statusCode: number, value: unknown, headers: Record<string, string> = {}): LambdaFunctionURLResult {
  return { statusCode, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(value) };
}
