import { newRequestId, request, type ExecuteTaskParams, type JsonRpcErrorObject } from '../contract';
import { A2A_DIALECTS, A2A_VERSION_HEADER, isA2aVersion, readA2aReply, type A2aDialect, type A2aReply, type A2aVersion } from './a2a-dialects';
import { CancelError, ProtocolFailure, callJsonRpc, type RpcAnswer } from './json-rpc-exchange';
import { failure, pending, success, type Outcome, type PendingHandle } from './outcome';
import type { CallContext, ExecutionProtocol, TaskInput } from './protocol';
import { isRetryableRpcError } from './retry-policy';

/** Finds out which dialect an agent speaks (e.g. from its agent card); may be asked more than once. */
export type A2aVersionResolver = (signal?: AbortSignal) => Promise<A2aVersion>;

export type A2aProtocolOptions = {
  /** A fixed dialect, or a resolver for `a2aVersion: auto`. Default '1.0'. */
  version?: A2aVersion | A2aVersionResolver;
  /**
   * Ask the agent to hold the answer until the task is done. Default false: the agent answers at
   * once with the task it started and the poller follows it, so no Lambda waits out a long run.
   */
  blocking?: boolean;
};

/** The A2A task states that end a task without an answer, in words an operator reads in a log. */
const UNSUCCESSFUL_STATES: Readonly<Record<string, string>> = {
  failed: 'the agent reported that the task failed',
  canceled: 'the agent reports the task as canceled',
  rejected: 'the agent rejected the task',
  'input-required': 'the agent asks for more input, which a one-shot Slack task cannot give',
  'auth-required': 'the agent asks for authentication, which a one-shot Slack task cannot give',
  unknown: 'the agent reported a task in an unknown state',
};

/**
 * The A2A protocol over JSON-RPC (ARCHITECTURE §4), in the 1.0 or 0.3 dialect. The message id is
 * the request id, and SendMessage's JSON-RPC id too, so a retried task is the same message.
 * A pending handle remembers its dialect, so a poll in another Lambda needs no second look at
 * the agent card.
 */
export class A2aProtocol implements ExecutionProtocol {
  readonly name = 'a2a' as const;
  private readonly blocking: boolean;
  private readonly version: A2aVersion | A2aVersionResolver;

  constructor(options: A2aProtocolOptions = {}) {
    this.version = options.version ?? '1.0';
    this.blocking = options.blocking ?? false;
  }

  async start(task: TaskInput, call: CallContext): Promise<Outcome> {
    const { dialect, unknown } = await this.dialect(undefined, call.signal);
    if (!dialect) return unknown;
    const message = { messageId: task.requestId, text: task.params.text, metadata: slackContextOf(task.params) };
    const sent = request(dialect.methods.send, dialect.sendParams(message, { blocking: this.blocking }), task.requestId);
    const answer = await callJsonRpc(call, sent, dialect.headers);
    return outcomeOf(dialect, sent.method, answer);
  }

  async poll(handle: PendingHandle, call: CallContext): Promise<Outcome> {
    const { dialect, unknown } = await this.dialect(handle.a2aVersion, call.signal);
    if (!dialect) return unknown;
    const sent = request(dialect.methods.get, { id: handle.taskId }, newRequestId());
    return outcomeOf(dialect, sent.method, await callJsonRpc(call, sent, dialect.headers), handle);
  }

  async cancel(handle: PendingHandle, call: CallContext): Promise<void> {
    const { dialect, unknown } = await this.dialect(handle.a2aVersion, call.signal);
    if (!dialect) throw new CancelError(unknown.message);
    const sent = request(dialect.methods.cancel, { id: handle.taskId }, newRequestId());
    const answer = await callJsonRpc(call, sent, dialect.headers);
    if (answer.kind === 'unusable') throw new CancelError(answer.outcome.message);
    // -32001 task not found / -32002 not cancelable: the task is unknown or already over.
    if (answer.kind === 'error' && answer.error.code !== -32001 && answer.error.code !== -32002) {
      throw new CancelError(`${sent.method} answered ${answer.error.code}: ${answer.error.message}`);
    }
  }

  private async dialect(fromHandle: string | undefined, signal?: AbortSignal): Promise<{ dialect: A2aDialect; unknown?: never } | { dialect?: never; unknown: Failure }> {
    if (isA2aVersion(fromHandle)) return { dialect: A2A_DIALECTS[fromHandle] };
    if (typeof this.version === 'string') return { dialect: A2A_DIALECTS[this.version] };
    try {
      return { dialect: A2A_DIALECTS[await this.version(signal)] };
    } catch (error) {
      const retryable = error instanceof A2aVersionError ? error.retryable : false;
      return { unknown: failure('a2a:version-unknown', `could not tell which A2A version the agent speaks: ${(error as Error).message}`, retryable) as Failure };
    }
  }
}

type Failure = Outcome & { kind: 'failure' };

function outcomeOf(dialect: A2aDialect, method: string, answer: RpcAnswer, polled?: PendingHandle): Outcome {
  if (answer.kind === 'unusable') return answer.outcome;
  if (answer.kind === 'error') return rpcFailure(method, answer.error);
  const reply = readA2aReply(answer.result);
  switch (reply.kind) {
    case 'unrecognised':
      return failure(ProtocolFailure.Malformed, `${method} result is neither an A2A message nor a task`, false);
    case 'message':
      if (polled) return failure(ProtocolFailure.Malformed, `${method} answered with a message where a task was expected`, false);
      return success(reply.text, { ...(reply.messageId ? { messageId: reply.messageId } : {}), ...(reply.contextId ? { contextId: reply.contextId } : {}) });
    case 'task':
      return taskOutcome(dialect, reply, polled);
  }
}

function taskOutcome(dialect: A2aDialect, task: A2aReply & { kind: 'task' }, polled?: PendingHandle): Outcome {
  const ids = { ...(task.taskId ? { taskId: task.taskId } : {}), ...(task.contextId ? { contextId: task.contextId } : {}) };
  if (task.state === 'completed') return success(task.answer, { ...ids, state: task.state });
  if (task.state === 'submitted' || task.state === 'working') {
    // Hand-written agents may leave the id out of a poll answer; the handle still knows it.
    const taskId = task.taskId ?? polled?.taskId;
    if (!taskId) return failure('a2a:no-task-id', `the agent answered with a ${task.state} task but no task id to follow it by`, false);
    const contextId = task.contextId ?? polled?.contextId;
    return pending({ taskId, a2aVersion: dialect.version, ...(contextId ? { contextId } : {}) }, task.state);
  }
  const reason = task.statusText ? `: ${truncate(task.statusText)}` : '';
  return failure(`a2a:${task.state}`, `${UNSUCCESSFUL_STATES[task.state]}${reason}`, false);
}

function rpcFailure(method: string, error: JsonRpcErrorObject): Outcome {
  // A2A's codes overlap the zone contract's with other meanings (-32001 is "task not found"
  // here, "timeout" there), so they travel namespaced.
  return failure(`a2a:${error.code}`, `${method} answered ${error.code}: ${error.message}`, isRetryableRpcError(error, { protocol: 'a2a', method }));
}

/** What the agent may want to know about where the task comes from; never the bot token. */
function slackContextOf(params: ExecuteTaskParams): Record<string, unknown> | undefined {
  const context = Object.fromEntries(
    (['correlation_id', 'team_id', 'channel', 'thread_ts', 'user_id'] as const).filter((key) => params[key] !== undefined).map((key) => [key, params[key]]),
  );
  return Object.keys(context).length ? context : undefined;
}

function truncate(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Why the agent card could not tell the dialect; `retryable` when asking again later may work. */
export class A2aVersionError extends Error {
  override name = 'A2aVersionError';
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** Where an agent at `agentUrl` publishes its card: the well-known path at its origin. */
export function agentCardUrlFor(agentUrl: string): string {
  return new URL(AGENT_CARD_PATH, agentUrl).toString();
}

/**
 * Reads the dialect from the agent card once, and remembers it. A failed read is not remembered,
 * so the next task asks again.
 */
export function agentCardVersionResolver(cardUrl: string, options: { fetch?: typeof fetch; timeoutMs?: number } = {}): A2aVersionResolver {
  let known: Promise<A2aVersion> | undefined;
  return (signal) => {
    known ??= readAgentCardVersion(cardUrl, { ...options, ...(signal ? { signal } : {}) }).catch((error: unknown) => {
      known = undefined;
      throw error;
    });
    return known;
  };
}

export async function readAgentCardVersion(cardUrl: string, options: { fetch?: typeof fetch; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<A2aVersion> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 5_000);
  let response: Response;
  try {
    // A 1.0 server with 0.3 compatibility serves the 0.3 card unless asked for 1.0.
    response = await fetchImpl(cardUrl, {
      headers: { Accept: 'application/json', [A2A_VERSION_HEADER]: '1.0' },
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    });
  } catch (error) {
    throw new A2aVersionError(`the agent card at ${cardUrl} could not be fetched`, true, { cause: error });
  }
  if (!response.ok) {
    throw new A2aVersionError(`the agent card at ${cardUrl} answered HTTP ${response.status}`, response.status >= 500 || response.status === 429);
  }
  let card: unknown;
  try {
    card = await response.json();
  } catch (error) {
    throw new A2aVersionError(`the agent card at ${cardUrl} is not JSON`, false, { cause: error });
  }
  const version = versionFromAgentCard(card);
  if (!version) throw new A2aVersionError(`the agent card at ${cardUrl} names no protocol version`, false);
  return version;
}

/**
 * 1.0 cards list `supportedInterfaces[].protocolVersion`; 0.3 cards carry a top-level
 * `protocolVersion`. The newest JSON-RPC dialect on offer wins.
 */
export function versionFromAgentCard(card: unknown): A2aVersion | undefined {
  if (typeof card !== 'object' || card === null) return undefined;
  const { supportedInterfaces, protocolVersion } = card as { supportedInterfaces?: unknown; protocolVersion?: unknown };
  const offered = (Array.isArray(supportedInterfaces) ? supportedInterfaces : [])
    .filter((entry) => typeof entry === 'object' && entry !== null)
    .filter((entry) => {
      const binding = (entry as { protocolBinding?: unknown }).protocolBinding;
      return binding === undefined || (typeof binding === 'string' && binding.toUpperCase() === 'JSONRPC');
    })
    .map((entry) => majorOf((entry as { protocolVersion?: unknown }).protocolVersion));
  offered.push(majorOf(protocolVersion));
  const majors = offered.filter((major): major is number => major !== undefined);
  if (majors.some((major) => major >= 1)) return '1.0';
  if (majors.includes(0)) return '0.3';
  return undefined;
}

function majorOf(version: unknown): number | undefined {
  if (typeof version !== 'string') return undefined;
  const major = Number.parseInt(version.trim().split('.')[0] ?? '', 10);
  return Number.isInteger(major) && major >= 0 ? major : undefined;
}
