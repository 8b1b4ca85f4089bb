import {
  ResponseMismatchError,
  ResponseSchema,
  isErrorResponse,
  validateResponseFor,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
} from '../contract';
import { TransportError, type SendOptions, type TransportResponse } from '../transport/transport';
import { failure, type Failure } from './outcome';
import type { CallContext } from './protocol';

/**
 * Failures of the answer itself, shared by every protocol: none of them gets better by asking
 * again, and all are in the `failed` category.
 */
export const ProtocolFailure = {
  /** The transport brought back no body (HTTP 204, an empty AgentCore payload). */
  Empty: 'protocol:empty',
  /** Not JSON, not a JSON-RPC response, or a result that breaks the protocol's schema. */
  Malformed: 'protocol:malformed',
  /** A response to some other request: never act on it (it could be another user's answer). */
  IdMismatch: 'protocol:id-mismatch',
} as const;

/** A JSON-RPC answer as a protocol sees it: a result, an error object, or an unusable body. */
export type RpcAnswer =
  | { kind: 'result'; result: unknown }
  | { kind: 'error'; error: JsonRpcErrorObject }
  | { kind: 'unusable'; outcome: Failure };

/** Sends one JSON body over the call's transport. Transport faults propagate as TransportError. */
export function sendJson(call: CallContext, body: unknown, headers?: Readonly<Record<string, string>>): Promise<TransportResponse> {
  return call.transport.send(JSON.stringify(body), sendOptions(call, headers));
}

function sendOptions(call: CallContext, headers?: Readonly<Record<string, string>>): SendOptions {
  return {
    sessionKey: call.sessionKey,
    ...(call.correlationId ? { correlationId: call.correlationId } : {}),
    ...(call.askerId ? { askerId: call.askerId } : {}),
    ...(call.signal ? { signal: call.signal } : {}),
    ...(headers ? { headers } : {}),
  };
}

export type StreamReadOptions = {
  /** The longest the caller reads (docs/contract.md, "Streaming": the request's `hold_ms`). */
  holdMs: number;
  /**
   * How much longer than the hold the read may last before the caller ends it itself: an agent
   * that honours the hold ends the stream first, with its own last answer. Default 0.
   */
  graceMs?: number;
  headers?: Readonly<Record<string, string>>;
};

/**
 * Sends one JSON-RPC request whose answer may be streamed, and yields each JSON-RPC response of
 * it as an RpcAnswer, validated against the request like `readRpcAnswer`: one per event of a
 * streamed answer, one for a plain answer, none for no content. Over a transport that cannot
 * stream, the one answer of `send`. At `holdMs + graceMs` the read is ended (the request is
 * aborted) and a TransportError `timeout` says so; other transport faults propagate as they are.
 */
export async function* streamJsonRpc(call: CallContext, request: JsonRpcRequest<unknown>, options: StreamReadOptions): AsyncGenerator<RpcAnswer, void, undefined> {
  const hold = new AbortController();
  const limitMs = options.holdMs + (options.graceMs ?? 0);
  // The read it ends keeps the process alive; the timer alone must not.
  const timer = setTimeout(() => hold.abort(new Error('the hold is over')), limitMs).unref();
  const send = sendOptions({ ...call, signal: call.signal ? AbortSignal.any([call.signal, hold.signal]) : hold.signal }, options.headers);
  const body = JSON.stringify(request);
  try {
    if (call.transport.stream) {
      for await (const data of call.transport.stream(body, send)) yield readRpcAnswer(request, data);
    } else {
      const answer = await call.transport.send(body, send);
      if (answer !== undefined && answer.trim() !== '') yield readRpcAnswer(request, answer);
    }
  } catch (error) {
    if (hold.signal.aborted && !call.signal?.aborted) {
      throw new TransportError(`${request.method}: the stream was still open after ${limitMs} ms, the longest this caller reads one`, 'timeout', true, { transport: call.transport.kind }, { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export async function callJsonRpc(call: CallContext, request: JsonRpcRequest<unknown>, headers?: Readonly<Record<string, string>>): Promise<RpcAnswer> {
  return readRpcAnswer(request, await sendJson(call, request, headers));
}

/**
 * Validates a response body against the request it answers, with the contract's envelope
 * schema: `jsonrpc` "2.0", exactly one of result/error, and the same id (or null for an error the
 * server could not attribute).
 */
export function readRpcAnswer(request: Pick<JsonRpcRequest, 'id' | 'method'>, body: TransportResponse): RpcAnswer {
  if (body === undefined || body.trim() === '') {
    return unusable(ProtocolFailure.Empty, `${request.method} brought back an empty response`);
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return unusable(ProtocolFailure.Malformed, `${request.method} brought back a body that is not JSON`);
  }
  if (!ResponseSchema.safeParse(json).success) {
    return unusable(ProtocolFailure.Malformed, `${request.method} brought back JSON that is not a JSON-RPC 2.0 response`);
  }
  try {
    const response = validateResponseFor(request, json);
    return isErrorResponse(response) ? { kind: 'error', error: response.error } : { kind: 'result', result: response.result };
  } catch (error) {
    if (error instanceof ResponseMismatchError) return unusable(ProtocolFailure.IdMismatch, `${request.method}: ${error.message}`);
    throw error;
  }
}

export function unusable(code: string, message: string): RpcAnswer & { kind: 'unusable' } {
  return { kind: 'unusable', outcome: answerFailure(code, message) };
}

/** A failure of the answer itself (a ProtocolFailure code, or the like): `failed`, and never worth asking again. */
export function answerFailure(code: string, message: string): Failure {
  return failure('failed', code, message, false);
}

/** Raised by `cancel` when the far side could not be told to stop; callers log it and move on. */
export class CancelError extends Error {
  override name = 'CancelError';
}
