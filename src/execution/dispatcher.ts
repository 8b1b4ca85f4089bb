import { isAscii } from 'node:buffer';
import type { Log } from '../observability/logger';
import { ErrorCode, NotificationSchema, RequestSchema, errorResponse, successResponse, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../contract';
import { RpcError } from './rpc-error';

/** One method: params in, result out, or an RpcError thrown. */
export type MethodHandler = (params: unknown, context: { id: JsonRpcId; notification: boolean }) => Promise<unknown>;

/** Body in, body out: `undefined` means "no response" (a notification or all-notification batch). */
export type Dispatch = (body: string | Uint8Array) => Promise<string | undefined>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body as text; bytes that are not UTF-8 throw (and are answered -32700). ASCII, the common
 * case, is copied as it is, without a UTF-8 decoder.
 */
function bodyText(body: string | Uint8Array): string {
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body) && isAscii(body)) return body.toString('latin1');
  return utf8.decode(body);
}

export type DispatcherOptions = {
  /** Batches longer than this get one -32004 error (`data.retryable: false`) and none of their members run. */
  maxBatchLength?: number;
};

type Answer = JsonRpcResponse | undefined;

const PARSE_ERROR = JSON.stringify(errorResponse(null, ErrorCode.ParseError));
const INVALID_REQUEST = JSON.stringify(errorResponse(null, ErrorCode.InvalidRequest));
const NO_ANSWER: Promise<undefined> = Promise.resolve(undefined);

/**
 * The JSON-RPC 2.0 server core. It never throws and never answers with anything but JSON-RPC:
 * malformed bodies get -32700/-32600 with id null, unknown methods -32601, and any unexpected
 * error -32603 with a generic message (the cause goes to the log, never onto the wire).
 *
 * The envelope is checked by RequestSchema (NotificationSchema for a notification) and the
 * message is routed as it came: each method validates its own params. A single request costs one
 * promise chain, from the method's promise to the serialized answer.
 */
export function createDispatcher(methods: Readonly<Record<string, MethodHandler>>, log: Log, options: DispatcherOptions = {}): Dispatch {
  const maxBatchLength = options.maxBatchLength ?? Number.POSITIVE_INFINITY;
  const handlers = new Map(Object.entries(methods));

  const internalError = (error: unknown): string => {
    log.error('dispatcher failure', { error: error as Error });
    return JSON.stringify(errorResponse(null, ErrorCode.InternalError));
  };

  /** A method's failure as its answer: an RpcError as it says, anything else -32603 (and logged). */
  const failure = (id: JsonRpcId, error: unknown): JsonRpcResponse => {
    if (error instanceof RpcError) return errorResponse(id, error.code, error.message, error.data);
    log.error('unexpected error in a method handler', { error: error as Error });
    return errorResponse(id, ErrorCode.InternalError);
  };

  /** The answer on the wire; one that cannot be serialized is a dispatcher failure. */
  const text = (response: JsonRpcResponse): string => {
    try {
      return JSON.stringify(response);
    } catch (error) {
      return internalError(error);
    }
  };

  /** The request's method, or why there is none to call: the answer to give instead (undefined: none, a notification's). */
  function route(message: unknown): { handler: MethodHandler; request: JsonRpcRequest; notification: boolean } | { refused: JsonRpcResponse | undefined } {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return { refused: errorResponse(null, ErrorCode.InvalidRequest) };
    // A request without an `id` member is a notification; it is validated like any request.
    const notification = !('id' in message);
    if (!(notification ? NotificationSchema : RequestSchema).safeParse(message).success) return { refused: errorResponse(null, ErrorCode.InvalidRequest) };
    const request = message as JsonRpcRequest;
    const handler = request.method.startsWith('rpc.') ? undefined : handlers.get(request.method);
    if (!handler) return { refused: notification ? undefined : errorResponse(request.id, ErrorCode.MethodNotFound) };
    return { handler, request, notification };
  }

  /** Calls the method; `answer` turns its result or failure into what the caller gets. */
  function call<T>(handler: MethodHandler, request: JsonRpcRequest, notification: boolean, answer: (response: JsonRpcResponse) => T): Promise<T> {
    const id = notification ? null : request.id;
    let pending: Promise<unknown>;
    try {
      pending = handler(request.params, { id, notification });
    } catch (error) {
      return Promise.resolve(answer(failure(id, error)));
    }
    return (pending instanceof Promise ? pending : Promise.resolve(pending)).then(
      (result) => answer(successResponse(id, result)),
      (error: unknown) => answer(failure(id, error)),
    );
  }

  /** One member's answer (undefined: none), at once for a request that is refused, else the method's promise. */
  function handleOne(message: unknown): Answer | Promise<Answer> {
    const routed = route(message);
    if ('refused' in routed) return routed.refused;
    if (routed.notification) return notify(routed.handler, routed.request);
    return call(routed.handler, routed.request, false, (response) => response);
  }

  /** The caller wants no answer; the work still happens, and its failures are logged. */
  function notify(handler: MethodHandler, request: JsonRpcRequest): undefined {
    void call(handler, request, true, (response) => {
      if ('error' in response) log.warn('notification failed', { method: request.method, code: response.error.code });
    });
    return undefined;
  }

  async function dispatchBatch(members: unknown[]): Promise<string | undefined> {
    const responses = (await Promise.all(members.map(handleOne))).filter((r): r is JsonRpcResponse => r !== undefined);
    return responses.length ? JSON.stringify(responses) : undefined;
  }

  return function dispatch(body) {
    try {
      let message: unknown;
      try {
        message = JSON.parse(bodyText(body));
      } catch {
        return Promise.resolve(PARSE_ERROR);
      }
      if (Array.isArray(message)) {
        if (message.length === 0) return Promise.resolve(INVALID_REQUEST);
        // JSON-RPC 2.0 defines no answer for a batch the server will not take, only the single
        // error object for a batch it cannot read. Refusing all of it the same way — one error
        // object, id null, before any member runs — is what a client can act on: an array of
        // per-member errors would cost as much as the work it refuses, and answering some members
        // would leave the rest to guess about. Not retryable: the same batch is refused again.
        if (message.length > maxBatchLength) {
          log.warn('batch over the length cap: refused whole', { length: message.length, max: maxBatchLength });
          return Promise.resolve(
            JSON.stringify(
              errorResponse(null, ErrorCode.OverCapacity, `Batch too long: ${message.length} requests, at most ${maxBatchLength} are taken at once`, {
                retryable: false,
                limit: 'batch_length',
                max: maxBatchLength,
              }),
            ),
          );
        }
        return dispatchBatch(message).catch(internalError);
      }
      const routed = route(message);
      if ('refused' in routed) return routed.refused ? Promise.resolve(text(routed.refused)) : NO_ANSWER;
      if (routed.notification) {
        notify(routed.handler, routed.request);
        return NO_ANSWER;
      }
      // A single request: one promise from the method's to the serialized answer.
      return call(routed.handler, routed.request, false, text);
    } catch (error) {
      return Promise.resolve(internalError(error));
    }
  };
}
