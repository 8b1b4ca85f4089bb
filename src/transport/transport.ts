/**
 * The transport seam (docs/architecture.md §4.2): move one request body to an execution zone and bring
 * back the response body. A transport owns addressing, auth, timeouts, transient-fault retries
 * and size limits, and knows nothing of JSON-RPC.
 */
export type SendOptions = {
  /** Cancels the call (a Lambda's remaining time, a user's Ctrl-C). */
  signal?: AbortSignal;
  /**
   * Stable for every call about one task, so follow-up calls reach the same session
   * (AgentCore's runtimeSessionId is derived from it).
   */
  sessionKey: string;
  /** Travels as X-Correlation-ID where the transport can carry headers. */
  correlationId?: string;
  /**
   * Who is asking (docs/contract.md, "Who is asking"): `slack:<team>:<user>`, as the verification
   * zone verified it. AgentCore gets it as `runtimeUserId`, https as the X-Zone-Asker header; the
   * in-process transport needs nothing (the params carry it).
   */
  askerId?: string;
  /** Protocol-level HTTP headers (e.g. `A2A-Version`); transports that cannot carry headers ignore them. */
  headers?: Readonly<Record<string, string>>;
};

/** The response body, or `undefined` for "no content" (HTTP 204, an empty AgentCore payload). */
export type TransportResponse = string | undefined;

/** For `getDocument`: what SendOptions has, less the session (a document belongs to no task). */
export type GetDocumentOptions = Omit<SendOptions, 'sessionKey'>;

export interface Transport {
  readonly kind: TransportKind;
  send(body: string, options: SendOptions): Promise<TransportResponse>;
  /**
   * Sends like `send`, and yields each response body as it arrives: one per Server-Sent Event
   * (its `data`) when the far side streams (`text/event-stream`; docs/contract.md, "Streaming"),
   * or the one plain body of an answer that does not stream (nothing for no content). The
   * same auth, retries (before the answer starts), size limit (per event) and TransportError
   * faults as `send`; the timeout is per event: the stream may last as long as events keep
   * coming (keep-alive comments count). Leaving the iteration early (`break`, `return()`) or the
   * caller's signal aborts the request, so nothing is left reading on the socket.
   */
  stream?(body: string, options: SendOptions): AsyncIterable<string>;
  /**
   * GETs a JSON document (an A2A agent card) at `path` — absolute, on the origin of the endpoint
   * this transport sends to — with the same auth, timeout, retries and size limit as `send`.
   * Resolves with the body (undefined when empty); faults are TransportErrors, like `send`'s.
   * Only transports that address an HTTP origin have it.
   */
  getDocument?(path: string, options?: GetDocumentOptions): Promise<TransportResponse>;
  /**
   * Ends the session a key names at once (AgentCore's StopRuntimeSession: its microVM and the
   * memory it bills while idle; docs/operations.md, "AgentCore sessions"). A session that has
   * already ended is not a fault. Only transports with sessions have it.
   */
  stopSession?(sessionKey: string, options?: { signal?: AbortSignal }): Promise<void>;
}

export const TRANSPORT_KINDS = ['agentcore', 'https', 'in-process'] as const;
export type TransportKind = (typeof TRANSPORT_KINDS)[number];

/** Why no usable response came back. */
export type TransportFaultReason =
  | 'connection' // refused, reset, DNS, TLS
  | 'timeout' // our deadline or the caller's signal
  | 'throttled' // 429 / ThrottlingException after the transport's own retries
  | 'session-quota' // AgentCore: the account's live sessions are at their quota (ServiceQuotaExceededException)
  | 'session-busy' // AgentCore: another call is using the session (409 RetryableConflictException) after the SDK's retries
  | 'server' // 5xx after retries
  | 'auth' // 401 / 403 / AccessDenied
  | 'rejected' // other 4xx: validation, not found
  | 'too-large' // request or response over the limit
  | 'runtime'; // the remote runtime failed (AgentCore RuntimeClientError)

export class TransportError extends Error {
  override name = 'TransportError';
  constructor(
    message: string,
    readonly reason: TransportFaultReason,
    /** True when sending the same body again later may succeed. */
    readonly retryable: boolean,
    readonly details: { status?: number; transport?: TransportKind } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
