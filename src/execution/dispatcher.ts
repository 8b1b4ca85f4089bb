import type { Log } from '../observability/logger';
import {
  ErrorCode,
  RequestSchema,
  errorResponse,
  successResponse,
  type JsonRpcId,
  type JsonRpcResponse,
} from '../contract';
import { RpcError } from './rpc-error';

/** One method: params in, result out, or an RpcError thrown. */
export type MethodHandler = (params: unknown, context: { id: JsonRpcId; notification: boolean }) => Promise<unknown>;

/** Body in, body out: `undefined` means "no response" (a notification or all-notification batch). */
export type Dispatch = (body: string | Uint8Array) => Promise<string | undefined>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

export type DispatcherOptions = {
  /** Batches longer than this get one -32004 error (`data.retryable: false`) and none of their members run. */
  maxBatchLength?: number;
};

/**
 * The JSON-RPC 2.0 server core. It never throws and never answers with anything but JSON-RPC:
 * malformed bodies get -32700/-32600 with id null, unknown methods -32601, and any unexpected
 * error -32603 with a generic message (the cause goes to the log, never onto the wire).
 */
export function createDispatcher(methods: Readonly<Record<string, MethodHandler>>, log: Log, options: DispatcherOptions = {}): Dispatch {
  const maxBatchLength = options.maxBatchLength ?? Number.POSITIVE_INFINITY;
  const handlers = new Map(Object.entries(methods));

  async function handleOne(message: unknown): Promise<JsonRpcResponse | undefined> {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      return errorResponse(null, ErrorCode.InvalidRequest);
    }
    // A request without an `id` member is a notification; it is validated like any request.
    const isNotification = !('id' in message);
    const parsed = RequestSchema.safeParse(isNotification ? { ...message, id: null } : message);
    if (!parsed.success) return errorResponse(null, ErrorCode.InvalidRequest);
    const request = parsed.data;
    const id = request.id;
    const handler = request.method.startsWith('rpc.') ? undefined : handlers.get(request.method);
    if (!handler) return isNotification ? undefined : errorResponse(id, ErrorCode.MethodNotFound);

    const call = invoke(handler, request.params, id, isNotification);
    if (isNotification) {
      // The caller wants no answer; the work still happens, and its failures are logged.
      void call.then((response) => {
        if ('error' in response) log.warn('notification failed', { method: request.method, code: response.error.code });
      });
      return undefined;
    }
    return call;
  }

  async function invoke(handler: MethodHandler, params: unknown, id: JsonRpcId, notification: boolean): Promise<JsonRpcResponse> {
    try {
      return successResponse(id, await handler(params, { id, notification }));
    } catch (error) {
      if (error instanceof RpcError) return errorResponse(id, error.code, error.message, error.data);
      log.error('unexpected error in a method handler', { error: error as Error });
      return errorResponse(id, ErrorCode.InternalError);
    }
  }

  return async function dispatch(body) {
    try {
      let message: unknown;
      try {
        message = JSON.parse(typeof body === 'string' ? body : utf8.decode(body));
      } catch {
        return JSON.stringify(errorResponse(null, ErrorCode.ParseError));
      }
      if (Array.isArray(message)) {
        if (message.length === 0) return JSON.stringify(errorResponse(null, ErrorCode.InvalidRequest));
        // JSON-RPC 2.0 defines no answer for a batch the server will not take, only the single
        // error object for a batch it cannot read. Refusing all of it the same way — one error
        // object, id null, before any member runs — is what a client can act on: an array of
        // per-member errors would cost as much as the work it refuses, and answering some members
        // would leave the rest to guess about. Not retryable: the same batch is refused again.
        if (message.length > maxBatchLength) {
          log.warn('batch over the length cap: refused whole', { length: message.length, max: maxBatchLength });
          return JSON.stringify(
            errorResponse(null, ErrorCode.OverCapacity, `Batch too long: ${message.length} requests, at most ${maxBatchLength} are taken at once`, {
              retryable: false,
              limit: 'batch_length',
              max: maxBatchLength,
            }),
          );
        }
        const responses = (await Promise.all(message.map(handleOne))).filter((r): r is JsonRpcResponse => r !== undefined);
        return responses.length ? JSON.stringify(responses) : undefined;
      }
      const response = await handleOne(message);
      return response ? JSON.stringify(response) : undefined;
    } catch (error) {
      log.error('dispatcher failure', { error: error as Error });
      return JSON.stringify(errorResponse(null, ErrorCode.InternalError));
    }
  };
}
