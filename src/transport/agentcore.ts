import { InvokeAgentRuntimeCommand, StopRuntimeSessionCommand, type BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { eventData, idleTimer, isEventStream } from './event-stream';
import { errnoCode, faultMaker } from './faults';
import { BodyTooLargeError, readBodyLimited } from './response-body';
import { runtimeSessionId } from './session-id';
import type { TransportConfigOf } from './config';
import { TransportError, type SendOptions, type Transport, type TransportFaultReason, type TransportResponse } from './transport';

/**
 * The `agentcore` transport (docs/architecture.md §4.2): Bedrock AgentCore `InvokeAgentRuntime`.
 *
 * Retries are the SDK's own (standard mode: throttling, 5xx, network errors; `maxAttempts` is
 * set where the client is built, see factory.ts). What is left when the SDK gives up is
 * classified into a TransportError so the pipeline can decide between "queue it again" and
 * "tell the user".
 *
 * Protocol `headers` (the a2a protocol's `A2A-Version`) go with the request as opaque values, added
 * by a middleware on the command: AgentCore passes the agent the request headers its runtime
 * allow-lists (`RequestHeaderConfiguration`, up to 20; docs/operations.md, "A2A agents behind
 * AgentCore") and drops the rest. `correlationId` is not sent as a header: it travels in the
 * JSON-RPC params, where every transport carries it, and `traceId` belongs to X-Ray.
 */
/** The agentcore transport's settings, as the transport configuration parsed them (src/transport/config.ts): taken whole. */
export type AgentCoreSettings = Pick<TransportConfigOf<'agentcore'>, 'runtimeArn' | 'qualifier' | 'timeoutMs' | 'maxResponseBytes'>;

export type AgentCoreTransportOptions = {
  /** Built by the caller (factory.ts, tests), so tests can point it at the local emulator. */
  client: BedrockAgentCoreClient;
  /** `qualifier`: the runtime endpoint (omitted: its DEFAULT); `timeoutMs`: a deadline for the whole call, retries included (the caller's signal applies as well). */
  settings: AgentCoreSettings;
};

export class AgentCoreTransport implements Transport {
  readonly kind = 'agentcore' as const;
  private readonly fault = faultMaker(this.kind);
  private readonly encoder = new TextEncoder();
  private readonly settings: AgentCoreSettings;
  private readonly maxResponseBytes: number;

  constructor(private readonly options: AgentCoreTransportOptions) {
    this.settings = options.settings;
    this.maxResponseBytes = options.settings.maxResponseBytes;
  }

  async send(body: string, options: SendOptions): Promise<TransportResponse> {
    if (options.signal?.aborted) throw this.fault('the call was cancelled before it was sent', 'timeout', true);
    const deadline = this.settings.timeoutMs === undefined ? undefined : new AbortController();
    const timer = deadline && setTimeout(() => deadline.abort(new Error('deadline passed')), this.settings.timeoutMs);
    const signals = [options.signal, deadline?.signal].filter((s): s is AbortSignal => s !== undefined);
    const abortSignal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    try {
      const output = await this.options.client.send(this.command(body, options, 'application/json'), { abortSignal });
      // The SDK's handler keeps watching abortSignal while the body streams in, so a stalled body
      // ends with the deadline too.
      const text = await this.readResponse(output.response);
      return text === '' ? undefined : text;
    } catch (error) {
      if (error instanceof TransportError) throw error;
      if (options.signal?.aborted) throw this.fault('the call was cancelled before AgentCore answered', 'timeout', true, {}, error);
      if (deadline?.signal.aborted) throw this.fault(`no answer from AgentCore within ${this.settings.timeoutMs} ms`, 'timeout', true, {}, error);
      throw this.classify(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * `send` asking for a stream (`accept: text/event-stream`): an agent that streams answers with
   * Server-Sent Events, which AgentCore passes through as they come, and each event's data is
   * yielded as it completes; any other answer is read whole and yielded once. `timeoutMs`, when
   * set, is the longest wait for the next chunk; `maxResponseBytes` the most one event may hold.
   */
  async *stream(body: string, options: SendOptions): AsyncGenerator<string, void, undefined> {
    if (options.signal?.aborted) throw this.fault('the call was cancelled before it was sent', 'timeout', true);
    const quiet = new AbortController();
    const ended = new AbortController();
    const timer = idleTimer(this.settings.timeoutMs, () => quiet.abort(new Error('the stream went quiet')));
    const abortSignal = AbortSignal.any([quiet.signal, ended.signal, ...(options.signal ? [options.signal] : [])]);
    const fault = (error: unknown): TransportError => {
      if (error instanceof TransportError) return error;
      if (options.signal?.aborted) return this.fault('the call was cancelled before AgentCore answered', 'timeout', true, {}, error);
      if (timer.fired) return this.fault(`nothing more from AgentCore for ${this.settings.timeoutMs} ms`, 'timeout', true, {}, error);
      return this.classify(error);
    };
    let payload: unknown;
    let complete = false;
    try {
      let output;
      try {
        output = await this.options.client.send(this.command(body, options, 'text/event-stream'), { abortSignal });
      } catch (error) {
        throw fault(error);
      }
      payload = output.response;
      if (payload === undefined || payload === null) {
        complete = true;
        return;
      }
      try {
        if (isEventStream(output.contentType) && typeof payload === 'object' && Symbol.asyncIterator in payload) {
          for await (const data of eventData(payload as AsyncIterable<Uint8Array>, { maxEventSize: this.maxResponseBytes, onChunk: timer.touch })) {
            // The caller's time with an event is not the agent's silence.
            timer.clear();
            yield data;
            timer.touch();
          }
        } else {
          const text = await this.readResponse(payload);
          timer.clear();
          if (text !== '') yield text;
        }
        complete = true;
      } catch (error) {
        if (error instanceof BodyTooLargeError) throw this.fault(`an event of AgentCore's response is larger than ${this.maxResponseBytes} bytes`, 'too-large', false);
        if (error instanceof TransportError || options.signal?.aborted || timer.fired) throw fault(error);
        throw this.fault(`AgentCore's response broke off (${errnoCode(error) ?? (error as Error)?.message ?? 'unknown error'})`, 'connection', true, {}, error);
      }
    } finally {
      timer.clear();
      if (!complete) {
        // An early close or a fault: end the request and free the socket.
        ended.abort(new Error('the caller stopped reading'));
        (payload as { destroy?: () => void } | undefined)?.destroy?.();
      }
    }
  }

  async stopSession(sessionKey: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const signals = [options.signal, this.settings.timeoutMs === undefined ? undefined : AbortSignal.timeout(this.settings.timeoutMs)].filter((s): s is AbortSignal => s !== undefined);
    const abortSignal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    try {
      await this.options.client.send(
        new StopRuntimeSessionCommand({ agentRuntimeArn: this.settings.runtimeArn, qualifier: this.settings.qualifier, runtimeSessionId: runtimeSessionId(sessionKey) }),
        abortSignal ? { abortSignal } : {},
      );
    } catch (error) {
      // Ended already (its idle timeout, an earlier Stop): what was asked is so.
      if (facts(error).name === 'ResourceNotFoundException') return;
      if (abortSignal?.aborted) throw this.fault('AgentCore did not answer StopRuntimeSession in time', 'timeout', true, {}, error);
      throw this.classify(error, 'StopRuntimeSession');
    }
  }

  private command(body: string, options: SendOptions, accept: string): InvokeAgentRuntimeCommand {
    const command = new InvokeAgentRuntimeCommand({
      agentRuntimeArn: this.settings.runtimeArn,
      qualifier: this.settings.qualifier,
      runtimeSessionId: runtimeSessionId(options.sessionKey),
      // Who is asking: AgentCore Identity and Memory key on it (IAM: InvokeAgentRuntimeForUser).
      ...(options.askerId ? { runtimeUserId: options.askerId } : {}),
      contentType: 'application/json',
      accept,
      payload: this.encoder.encode(body),
    });
    if (options.headers && Object.keys(options.headers).length > 0) withHeaders(command, options.headers);
    return command;
  }

  /** The whole body, but never more than the limit in memory; an SSE answer is read the same way. */
  private async readResponse(stream: unknown): Promise<string> {
    if (stream === undefined || stream === null) return '';
    try {
      if (typeof stream === 'object' && Symbol.asyncIterator in stream) {
        return await readBodyLimited(stream as AsyncIterable<Uint8Array>, this.maxResponseBytes);
      }
      // Other runtimes (browsers) give a blob-like payload: it is already in memory.
      const text = await (stream as { transformToString(): Promise<string> }).transformToString();
      if (Buffer.byteLength(text) > this.maxResponseBytes) throw new BodyTooLargeError(this.maxResponseBytes);
      return text;
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        throw this.fault(`AgentCore's response is larger than ${this.maxResponseBytes} bytes`, 'too-large', false);
      }
      throw error;
    }
  }

  private classify(error: unknown, operation = 'InvokeAgentRuntime'): TransportError {
    const { name, message, status, attempts, requestId, code } = facts(error);
    const [reason, retryable] = classifyAgentCoreFault(name, status, code);
    const where = [status !== undefined ? `HTTP ${status}` : undefined, requestId ? `request id ${requestId}` : undefined, attempts && attempts > 1 ? `after ${attempts} attempts` : undefined]
      .filter(Boolean)
      .join(', ');
    return this.fault(`AgentCore ${operation} failed: ${name}: ${message}${where ? ` (${where})` : ''}`, reason, retryable, { status }, error);
  }
}

/**
 * Adds headers to one command's HTTP request, in the build step, so SigV4 (later, in finalize) signs
 * them with the rest. The SDK has no per-call header option; a middleware on the command touches
 * no other call of the shared client.
 */
function withHeaders(command: InvokeAgentRuntimeCommand, headers: Readonly<Record<string, string>>): void {
  command.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> } | undefined;
      if (request?.headers) for (const [name, value] of Object.entries(headers)) request.headers[name] = value;
      return next(args);
    },
    { step: 'build', name: 'protocolHeaders' },
  );
}

const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * What is left after the SDK's retries, by error name first (the modelled errors of docs/architecture.md §10.3),
 * then by HTTP status for anything unmodelled.
 */
export function classifyAgentCoreFault(name: string, status: number | undefined, code?: string): [TransportFaultReason, boolean] {
  switch (name) {
    case 'ThrottlingException':
    case 'ThrottledException':
      return ['throttled', true];
    // 402: too many live sessions or microVMs in the account; they end by themselves. Its own
    // reason, so it is counted and alarmed apart from throttling (docs/operations.md, "AgentCore sessions").
    case 'ServiceQuotaExceededException':
      return ['session-quota', true];
    case 'InternalServerException':
    case 'ServiceException':
      return ['server', true];
    // 409: another call is using the session (AgentCore refuses concurrent use of one session).
    // The SDK retries it with backoff (its `$retryable` trait) within the call's deadline; what is
    // left is its own reason, so the invoker queues the task again, never tells the user it
    // failed (docs/operations.md, "AgentCore sessions").
    case 'RetryableConflictException':
      return ['session-busy', true];
    // 424: the agent container failed or answered non-2xx. Our runtime answers every JSON-RPC
    // error with 200, so this means the container crashed, timed out or was being replaced.
    // AgentCore starts a fresh one for the session, so a later try may well succeed; the SDK
    // does not retry it, and the caller's queue gives it the time to recover.
    case 'RuntimeClientError':
      return ['runtime', true];
    case 'ValidationException':
    case 'ResourceNotFoundException':
      return ['rejected', false];
    case 'AccessDeniedException':
    case 'UnauthorizedException':
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'SignatureDoesNotMatch':
    case 'ExpiredTokenException':
    case 'MissingAuthenticationTokenException':
    case 'SubscriptionRequiredException':
    case 'CredentialsProviderError':
      return ['auth', false];
    case 'AbortError':
    case 'TimeoutError':
      return ['timeout', true];
  }
  if (code && NETWORK_CODES.has(code)) return ['connection', true];
  if (status === undefined) return ['connection', true];
  if (status === 429) return ['throttled', true];
  if (status >= 500) return ['server', true];
  if (status === 401 || status === 403) return ['auth', false];
  if (status === 413) return ['too-large', false];
  return ['rejected', false];
}

function facts(error: unknown): { name: string; message: string; status?: number; attempts?: number; requestId?: string; code?: string } {
  const e = (error ?? {}) as { name?: unknown; message?: unknown; $metadata?: { httpStatusCode?: number; attempts?: number; requestId?: string } };
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : String(error),
    status: e.$metadata?.httpStatusCode,
    attempts: e.$metadata?.attempts,
    requestId: e.$metadata?.requestId,
    code: errnoCode(error),
  };
}
