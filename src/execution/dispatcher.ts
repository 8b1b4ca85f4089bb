import { isAscii } from 'node:buffer';
import type { Log } from '../observability/logger';
import { ErrorCode, NotificationSchema, RequestSchema, errorResponse, successResponse, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../contract';
import { RpcError } from './rpc-error';

/** One method: params in, result out, or an RpcError thrown. */
export type MethodHandler = (params: unknown, context: { id: JsonRpcId; notification: boolean }) => Promise<unknown>;

/** Body in, body out: `undefined` means "no response" (a notification or all-notification batch). */
export type Dispatch = (body: string | Uint8Array) => Promise<string | undefined>;

/** One response of a streamed answer: a method's result, or its error (an RpcError, or anything else: -32603). */
export type StreamEvent = { result: unknown } | { error: unknown };

/** What a method that may stream answers: one result now (a plain answer), or a stream of responses ending in the last one. */
export type StreamedAnswer = { result: unknown } | { events: AsyncIterable<StreamEvent> };

/** Where a streamed answer stands: when its request came, its host's limit, and whether anyone still reads it. */
export type StreamContext = {
  id: JsonRpcId;
  /** When the request came, on `performance.now()`'s clock. */
  startedAt: number;
  /** When the host must have ended the stream (a Lambda's remaining time), on the same clock. */
  deadline?: number;
  /** Aborted when nobody reads the stream any more. */
  signal: AbortSignal;
};

/** A method asked for a streamed answer (`params.stream: true`). It throws an RpcError, or rejects with one, to refuse before any stream. */
export type StreamMethodHandler = (params: unknown, context: StreamContext) => Promise<StreamedAnswer>;

export type StreamOptions = { deadline?: number; signal?: AbortSignal };

/**
 * What a host answers a body that may ask for a streamed answer with: a plain answer (a body, or
 * none for a notification), or a stream of JSON-RPC response bodies. Closing `events` early
 * (`return()`) stops reading the task, never the task.
 */
export type StreamOpening = { stream: false; body: string | undefined } | { stream: true; events: AsyncIterableIterator<string> };
export type OpenStream = (body: string | Uint8Array, options?: StreamOptions) => Promise<StreamOpening>;

/**
 * Body in, the response bodies out, as they come (the in-process transport's stream): those of
 * a streamed answer, or the one plain answer (none for a notification). `return()` stops reading.
 */
export type DispatchStream = (body: string | Uint8Array, options?: StreamOptions) => AsyncIterableIterator<string>;

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
  return createStreamingDispatcher(methods, {}, log, options).dispatch;
}

/**
 * The dispatcher, and beside it `openStream` for hosts whose caller can read a streamed answer
 * (an HTTP `Accept: text/event-stream`, the in-process transport's stream): a single request
 * with an id, `params.stream: true` and a method of `streamMethods` is answered by that method,
 * with a stream or at once; any other body exactly as `dispatch` answers it. Whatever is refused
 * before a stream starts (parse error, invalid request or params, capacity) is a plain answer.
 */
export function createStreamingDispatcher(
  methods: Readonly<Record<string, MethodHandler>>,
  streamMethods: Readonly<Record<string, StreamMethodHandler>>,
  log: Log,
  options: DispatcherOptions = {},
): { dispatch: Dispatch; openStream: OpenStream } {
  const maxBatchLength = options.maxBatchLength ?? Number.POSITIVE_INFINITY;
  const handlers = new Map(Object.entries(methods));
  const streamHandlers = new Map(Object.entries(streamMethods));

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

  function dispatch(body: string | Uint8Array): Promise<string | undefined> {
    let message: unknown;
    try {
      message = JSON.parse(bodyText(body));
    } catch {
      return Promise.resolve(PARSE_ERROR);
    }
    return dispatchMessage(message);
  }

  /** The answer to a body already parsed: a batch, a single request or a notification. */
  function dispatchMessage(message: unknown): Promise<string | undefined> {
    try {
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
  }

  /** The stream method a message asks for a streamed answer of, if it does: one request with an id, and `params.stream: true`. */
  function streamHandlerOf(message: unknown): StreamMethodHandler | undefined {
    if (typeof message !== 'object' || message === null || Array.isArray(message) || !('id' in message)) return undefined;
    const { method, params } = message as { method?: unknown; params?: unknown };
    if (typeof method !== 'string' || typeof params !== 'object' || params === null || (params as { stream?: unknown }).stream !== true) return undefined;
    return streamHandlers.get(method);
  }

  /** The responses of a stream, each serialized with the request's id; a stream that breaks ends with -32603. */
  async function* responses(id: JsonRpcId, events: AsyncIterable<StreamEvent>): AsyncGenerator<string, void, undefined> {
    try {
      for await (const event of events) yield text('error' in event ? failure(id, event.error) : successResponse(id, event.result));
    } catch (error) {
      yield text(failure(id, error));
    }
  }

  const plain = (body: string | undefined): StreamOpening => ({ stream: false, body });

  function openStream(body: string | Uint8Array, streamOptions: StreamOptions = {}): Promise<StreamOpening> {
    const startedAt = performance.now();
    try {
      let message: unknown;
      try {
        message = JSON.parse(bodyText(body));
      } catch {
        return Promise.resolve(plain(PARSE_ERROR));
      }
      const handler = streamHandlerOf(message);
      if (!handler) return dispatchMessage(message).then(plain);
      const routed = route(message);
      if ('refused' in routed) return Promise.resolve(plain(routed.refused && text(routed.refused)));
      const id = routed.request.id;
      // Stopped by the host's signal, or by whoever closes the events.
      const stop = new AbortController();
      const hostSignal = streamOptions.signal;
      if (hostSignal?.aborted) stop.abort();
      else hostSignal?.addEventListener('abort', () => stop.abort(), { once: true });
      const context: StreamContext = { id, startedAt, signal: stop.signal, ...(streamOptions.deadline === undefined ? {} : { deadline: streamOptions.deadline }) };
      let pending: Promise<StreamedAnswer>;
      try {
        pending = handler(routed.request.params, context);
      } catch (error) {
        return Promise.resolve(plain(text(failure(id, error))));
      }
      return pending.then(
        (answer): StreamOpening => ('events' in answer ? { stream: true, events: stoppable(responses(id, answer.events), stop) } : plain(text(successResponse(id, answer.result)))),
        (error: unknown) => plain(text(failure(id, error))),
      );
    } catch (error) {
      return Promise.resolve(plain(internalError(error)));
    }
  }

  return { dispatch, openStream };
}

/**
 * The events of a stream whose `return()` first aborts `stop` (the reader's signal), so a reader
 * waiting for text ends now rather than at its next event; then closes the generator.
 */
function stoppable(events: AsyncGenerator<string, void, undefined>, stop: AbortController): AsyncIterableIterator<string> {
  return {
    next: () => events.next(),
    async return() {
      stop.abort();
      await events.return(undefined);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** `dispatchStream` over `openStream`: the stream's responses, or the plain answer once. */
export function streamOf(openStream: OpenStream): DispatchStream {
  return (body, options = {}) => {
    const stop = new AbortController();
    if (options.signal?.aborted) stop.abort();
    else options.signal?.addEventListener('abort', () => stop.abort(), { once: true });
    let opened: Promise<AsyncIterator<string>> | undefined;
    const open = () =>
      (opened ??= openStream(body, { ...options, signal: stop.signal }).then((opening) =>
        opening.stream ? opening.events : once(opening.body),
      ));
    return {
      next: async () => (await open()).next(),
      async return() {
        stop.abort();
        if (opened) await (await opened).return?.();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  };
}

/** A plain answer as a stream of one (of none, for a notification). */
async function* once(body: string | undefined): AsyncGenerator<string, void, undefined> {
  if (body !== undefined) yield body;
}
