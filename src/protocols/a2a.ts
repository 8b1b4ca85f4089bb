import { createHash } from 'node:crypto';
import { AGENT_CARD_PATH, newRequestId, request, type Answer, type ExecuteTaskParams, type JsonRpcErrorObject, type JsonRpcRequest } from '../contract';
import { TransportError, type Transport, type TransportKind } from '../transport/transport';
import {
  A2A_DIALECTS,
  A2A_VERSION_HEADER,
  isA2aVersion,
  readA2aReply,
  readA2aStreamEvent,
  type A2aArtifactText,
  type A2aDialect,
  type A2aReply,
  type A2aState,
  type A2aStreamEvent,
  type A2aVersion,
  type OutgoingMessage,
} from './a2a-dialects';
import { filesField } from './a2a-files';
import { CancelError, ProtocolFailure, answerFailure, callJsonRpc, streamJsonRpc, type RpcAnswer } from './json-rpc-exchange';
import { failure, inputRequired, pending, success, textStep, withSteps, type AgentOutcome, type AgentStreamStep, type Failure, type FailureCategory, type Outcome, type PendingHandle } from './outcome';
import { a2aQuestion } from './a2a-questions';
import { A2aSteps } from './a2a-steps';
import type { CallContext, ExecutionProtocol, StreamHold, TaskInput } from './protocol';
import { isRetryableRpcError } from './retry-policy';
import { categoryOfTransportFault } from './transport-failure';

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

type UnsuccessfulState = Exclude<A2aState, 'completed' | 'submitted' | 'working'>;

/**
 * The A2A task states that end a task without an answer: what each means for the user, and its
 * words for an operator's log. A task the agent cannot finish without a second turn
 * (input-required, auth-required) is `failed`: a one-shot Slack task has no way to answer it.
 */
const UNSUCCESSFUL_STATES: Readonly<Record<UnsuccessfulState, { category: FailureCategory; words: string }>> = {
  failed: { category: 'failed', words: 'the agent reported that the task failed' },
  canceled: { category: 'cancelled', words: 'the agent reports the task as canceled' },
  rejected: { category: 'rejected', words: 'the agent rejected the task' },
  'input-required': { category: 'failed', words: 'the agent asks for more input, which a one-shot Slack task cannot give' },
  'auth-required': { category: 'failed', words: 'the agent asks for authentication, which a one-shot Slack task cannot give' },
  unknown: { category: 'failed', words: 'the agent reported a task in an unknown state' },
};

/**
 * The A2A protocol over JSON-RPC (docs/architecture.md §4.3), in the 1.0 or 0.3 dialect. The message id is
 * the request id, and SendMessage's JSON-RPC id too, so a retried task is the same message. Every
 * task of one Slack thread shares a contextId (slackThreadContextId); the thread's earlier
 * messages and the attachments ride as data and file parts (see a2a-dialects.ts).
 * A pending handle remembers its dialect, so a poll in another Lambda needs no second look at
 * the agent card.
 */
export class A2aProtocol implements ExecutionProtocol {
  readonly name = 'a2a' as const;
  private readonly blocking: boolean;
  private readonly version: A2aVersion | A2aVersionResolver;
  private readonly streamingByTransport = new WeakMap<Transport, Promise<boolean>>();

  constructor(options: A2aProtocolOptions = {}) {
    this.version = options.version ?? '1.0';
    this.blocking = options.blocking ?? false;
  }

  async start(task: TaskInput, call: CallContext): Promise<AgentOutcome> {
    const { dialect, unknown } = await this.dialect(undefined, call.signal);
    if (!dialect) return unknown;
    const sent = request(dialect.methods.send, dialect.sendParams(messageOf(task), { blocking: this.blocking }), task.requestId);
    const answer = await callJsonRpc(call, sent, dialect.headers);
    return outcomeOf(dialect, sent.method, answer, { stream: task.params.stream === true, transport: call.transport.kind });
  }

  /**
   * An agent whose card says it streams (`capabilities.streaming`, read once per transport with
   * the agent's own auth) is sent the message with `message/stream` (0.3) / `SendStreamingMessage`
   * (1.0), and its events are read as they come: the artifacts' text as text steps — only what
   * lies beyond what was shown, as for a poll (see "Streaming" below) — and the task's end as the
   * outcome. A2A agents know no hold, so the caller ends the read at `holdMs` itself (the agent
   * keeps working: its task store keeps the task) and the outcome is `pending`, polled on with
   * tasks/get / GetTask from what was shown. An agent that does not stream, or whose card cannot
   * be read, is sent the message as by `start`.
   */
  async *stream(task: TaskInput, call: CallContext, hold: StreamHold): AsyncGenerator<AgentStreamStep, void, undefined> {
    const { dialect, unknown } = await this.dialect(undefined, call.signal);
    if (!dialect) {
      yield unknown;
      return;
    }
    if (!(await this.agentStreams(call))) {
      yield await this.start(task, call);
      return;
    }
    const sent = request(dialect.methods.stream, dialect.sendParams(messageOf(task), { blocking: this.blocking }), task.requestId);
    const read = new StreamedTask(dialect);
    try {
      const stopped = yield* taskEvents(call, sent, read, dialect, hold.holdMs);
      if (stopped === 'ended') return;
      if (stopped) {
        yield outcomeOf(dialect, sent.method, stopped, { stream: true, transport: call.transport.kind });
        return;
      }
    } catch (error) {
      // Past the hold, gone quiet or cut off once the task is known: it runs on, and polling
      // takes it up from what was shown. Before that, the fault is the outcome.
      if (!read.handle || !(error instanceof TransportError)) throw error;
    }
    yield read.handle ? pending(read.handle, read.state) : answerFailure('a2a:no-task-id', `${sent.method} ended before the agent named a task to follow`);
  }

  /** Whether the agent's card says it streams; false when the transport cannot read it or stream. */
  private agentStreams(call: CallContext): Promise<boolean> {
    const { transport } = call;
    if (!transport.getDocument || !transport.stream) return Promise.resolve(false);
    let known = this.streamingByTransport.get(transport);
    if (!known) {
      known = readStreamingCapability(transport, call.signal).catch((error: unknown) => {
        // A fault that may pass is not remembered: the next task asks again. A card that is not
        // there, refused or unreadable is "does not stream" until the process ends.
        if (!(error instanceof TransportError) || error.retryable) this.streamingByTransport.delete(transport);
        return false;
      });
      this.streamingByTransport.set(transport, known);
    }
    return known;
  }

  /**
   * A poll read as a stream: a task followed with a stream (its handle says what was shown) of an
   * agent whose card says it streams is resubscribed to (`tasks/resubscribe` in 0.3,
   * `SubscribeToTask` in 1.0), whose first event is the task as it stands and the rest its
   * updates, read as by `stream`: only text beyond what was shown. The agent refuses a task that
   * is already over (or any resubscription): then, and for an agent that does not stream, the
   * poll is a plain tasks/get / GetTask.
   */
  async *streamPoll(handle: PendingHandle, call: CallContext, hold: StreamHold): AsyncGenerator<AgentStreamStep, void, undefined> {
    const { dialect, unknown } = await this.dialect(handle.a2aVersion, call.signal);
    if (!dialect) {
      yield unknown;
      return;
    }
    if (!isStreaming(handle) || !(await this.agentStreams(call))) {
      yield await this.poll(handle, call);
      return;
    }
    const sent = request(dialect.methods.subscribe, { id: handle.taskId }, newRequestId());
    const read = new StreamedTask(dialect, handle);
    try {
      const stopped = yield* taskEvents(call, sent, read, dialect, hold.holdMs);
      if (stopped === 'ended') return;
      // Refused (a task already over, a resubscription it does not offer), or not an event: a plain look.
      if (stopped) {
        yield await this.poll(handle, call);
        return;
      }
    } catch (error) {
      // Past the hold, gone quiet or cut off: the task runs on, and polling goes on from what was shown.
      if (!(error instanceof TransportError)) throw error;
    }
    yield pending(read.handle ?? handle, read.state);
  }

  async poll(handle: PendingHandle, call: CallContext): Promise<AgentOutcome> {
    const { dialect, unknown } = await this.dialect(handle.a2aVersion, call.signal);
    if (!dialect) return unknown;
    const sent = request(dialect.methods.get, { id: handle.taskId }, newRequestId());
    return outcomeOf(dialect, sent.method, await callJsonRpc(call, sent, dialect.headers), { polled: handle, stream: isStreaming(handle), transport: call.transport.kind });
  }

  /**
   * The answer to an interrupted task (input-required, auth-required): a user message on the
   * same `taskId` and `contextId` (A2A 1.0 and 0.3 alike), its text the answer (an option's
   * value, or the free text). The agent goes on with the same task; its answer is read as
   * `start`'s.
   */
  async resume(handle: PendingHandle, answer: Answer, call: CallContext): Promise<AgentOutcome> {
    const { dialect, unknown } = await this.dialect(handle.a2aVersion, call.signal);
    if (!dialect) return unknown;
    const message = { messageId: newRequestId(), taskId: handle.taskId, contextId: handle.contextId, text: answer.text ?? answer.value ?? '', ...(answer.answered_by ? { metadata: { answered_by: answer.answered_by } } : {}) };
    const sent = request(dialect.methods.send, dialect.sendParams(message, { blocking: this.blocking }), message.messageId);
    return outcomeOf(dialect, sent.method, await callJsonRpc(call, sent, dialect.headers), { stream: false, transport: call.transport.kind });
  }

  /** A2A's cancel reports no usage the contract reads: resolves with none. */
  async cancel(handle: PendingHandle, call: CallContext): Promise<undefined> {
    const { dialect, unknown } = await this.dialect(handle.a2aVersion, call.signal);
    if (!dialect) throw new CancelError(unknown.message);
    const sent = request(dialect.methods.cancel, { id: handle.taskId }, newRequestId());
    const answer = await callJsonRpc(call, sent, dialect.headers);
    if (answer.kind === 'unusable') throw new CancelError(answer.outcome.message);
    // -32001 task not found / -32002 not cancelable: the task is unknown or already over.
    if (answer.kind === 'error' && answer.error.code !== -32001 && answer.error.code !== -32002) {
      throw new CancelError(`${sent.method} answered ${answer.error.code}: ${answer.error.message}`);
    }
    return undefined;
  }

  private async dialect(fromHandle: string | undefined, signal?: AbortSignal): Promise<{ dialect: A2aDialect; unknown?: never } | { dialect?: never; unknown: Failure }> {
    if (isA2aVersion(fromHandle)) return { dialect: A2A_DIALECTS[fromHandle] };
    if (typeof this.version === 'string') return { dialect: A2A_DIALECTS[this.version] };
    try {
      return { dialect: A2A_DIALECTS[await this.version(signal)] };
    } catch (error) {
      const [category, retryable] = error instanceof A2aVersionError ? [error.category, error.retryable] : (['unavailable', false] as const);
      return { unknown: failure(category, 'a2a:version-unknown', `could not tell which A2A version the agent speaks: ${(error as Error).message}`, retryable) };
    }
  }
}

/** The one user message of a task, in either dialect's terms. */
function messageOf(task: TaskInput): OutgoingMessage {
  const { params } = task;
  return { messageId: task.requestId, contextId: slackThreadContextId(params), text: params.text, metadata: slackContextOf(params), thread: params.messages, files: params.attachments };
}

/**
 * The events of one streamed request, read into `read`: its new text as text steps as they come,
 * and the task's end as the last step (then `'ended'`). An answer that is not an event (an error,
 * a plain body) stops the read and is returned for the caller to judge; a stream that just ends
 * returns nothing. Transport faults are thrown.
 */
async function* taskEvents(call: CallContext, sent: JsonRpcRequest<unknown>, read: StreamedTask, dialect: A2aDialect, holdMs: number): AsyncGenerator<AgentStreamStep, RpcAnswer | 'ended' | undefined, undefined> {
  for await (const answer of streamJsonRpc(call, sent, { holdMs, headers: dialect.headers })) {
    if (answer.kind !== 'result') return answer;
    const end = read.take(readA2aStreamEvent(answer.result), sent.method);
    if (end) {
      yield end;
      return 'ended';
    }
    const text = read.newText();
    if (text) yield text;
  }
  return undefined;
}

/**
 * A task as its stream tells it, event by event: its ids, its state, and its artifacts' text
 * parts (an update appends to its artifact, or replaces it) — the text a tasks/get would return
 * at that point, so what is shown and what a later poll hands over agree.
 */
class StreamedTask {
  taskId?: string;
  contextId?: string;
  state: A2aState = 'submitted';
  /** Each artifact's text parts and file parts, as the events so far left them. */
  private readonly artifacts = new Map<string, { texts: string[]; files: Record<string, unknown>[] }>();
  /** What was shown: `shown` and `shownDigest`, as in a handle. */
  private shown: Record<string, string> = { [SHOWN]: '0' };
  /** Whether a step has named the task yet. */
  private announced = false;
  /** The agent's status messages and named artifacts, as steps (a2a-steps.ts). */
  private readonly steps = new A2aSteps();

  /** `followed`: the handle of a task already followed (a resubscription): its ids and what was shown of it. */
  constructor(
    private readonly dialect: A2aDialect,
    followed?: PendingHandle,
  ) {
    if (!followed) return;
    this.taskId = followed.taskId;
    this.contextId = followed.contextId;
    this.shown = { [SHOWN]: followed[SHOWN] ?? '0', ...(followed[SHOWN_DIGEST] ? { [SHOWN_DIGEST]: followed[SHOWN_DIGEST] } : {}) };
    this.announced = true;
  }

  /** The handle to poll the task by, once it is known. */
  get handle(): PendingHandle | undefined {
    if (!this.taskId) return undefined;
    return { taskId: this.taskId, a2aVersion: this.dialect.version, ...(this.contextId ? { contextId: this.contextId } : {}), ...this.shown };
  }

  /** Takes one event in; the outcome when it ends the task. */
  take(event: A2aStreamEvent, method: string): AgentOutcome | undefined {
    const end = this.read(event, method);
    if (end?.kind === 'success' || end?.kind === 'failure') {
      this.steps.end(end.kind === 'success' ? 'completed' : 'failed');
      return withSteps(end, this.steps.shown);
    }
    return end && end.kind !== 'pending' ? withSteps(end, this.steps.shown) : end;
  }

  private read(event: A2aStreamEvent, method: string): AgentOutcome | undefined {
    switch (event.kind) {
      case 'unrecognised':
        return answerFailure(ProtocolFailure.Malformed, `${method} sent an event that is neither an A2A message, a task nor a task update`);
      case 'message':
        return success(event.text, { ...(event.messageId ? { messageId: event.messageId } : {}), ...(event.contextId ? { contextId: event.contextId } : {}) }, event.usage, event.files);
      case 'task':
        this.know(event);
        this.artifacts.clear();
        for (const artifact of event.artifacts) this.artifacts.set(artifact.artifactId, { texts: [...artifact.texts], files: [...artifact.files] });
        this.state = event.state;
        return isOver(event.state) ? taskOutcome(this.dialect, event, { stream: true }) : undefined;
      case 'artifact':
        this.know(event);
        this.update(event, event.append);
        this.steps.artifact(event.artifactId, event.name, event.lastChunk);
        return undefined;
      case 'status': {
        this.know(event);
        this.state = event.state;
        this.steps.status(event.state, event.statusText);
        if (!isOver(event.state)) return undefined;
        const text = this.text();
        const answer: A2aReply & { kind: 'task' } = { kind: 'task', state: event.state, ...this.ids(), answer: text || event.statusText, artifactText: text, statusText: event.statusText, ...(event.usage ? { usage: event.usage } : {}), ...filesField([...this.artifacts.values()].flatMap((artifact) => artifact.files)) };
        return taskOutcome(this.dialect, answer, { stream: true });
      }
    }
  }

  /**
   * What the artifacts say beyond what was shown, as a text step, with the steps when they changed;
   * none if nothing, or if the text was rewritten.
   */
  newText(): AgentStreamStep | undefined {
    if (!this.taskId) return undefined;
    const { shown, partial } = streamedSoFar(this.text(), { taskId: this.taskId, ...this.shown });
    this.shown = shown;
    const stepped = this.steps.takeChange();
    // The task's id goes out once even before any text: a caller that reads a quiet task may let go and poll.
    if (!partial && this.announced && !stepped) return undefined;
    this.announced = true;
    return textStep(partial ?? '', this.handle!, this.steps.shown);
  }

  private know(event: { taskId?: string; contextId?: string }): void {
    this.taskId ??= event.taskId;
    this.contextId ??= event.contextId;
  }

  private ids(): { taskId?: string; contextId?: string } {
    return { ...(this.taskId ? { taskId: this.taskId } : {}), ...(this.contextId ? { contextId: this.contextId } : {}) };
  }

  private update(artifact: A2aArtifactText, append: boolean): void {
    const before = this.artifacts.get(artifact.artifactId);
    this.artifacts.set(artifact.artifactId, append && before ? { texts: [...before.texts, ...artifact.texts], files: [...before.files, ...artifact.files] } : { texts: [...artifact.texts], files: [...artifact.files] });
  }

  /** As `readA2aReply` joins a task's artifacts: each one's text parts, one per line. */
  private text(): string {
    return [...this.artifacts.values()]
      .map(({ texts }) => texts.join('\n'))
      .filter(Boolean)
      .join('\n');
  }
}

/** Submitted and working tasks go on; every other state ends the task (or its turn). */
function isOver(state: A2aState): boolean {
  return state !== 'submitted' && state !== 'working';
}

/** `capabilities.streaming` of the agent card, read with the agent's own transport. */
async function readStreamingCapability(transport: Transport, signal?: AbortSignal): Promise<boolean> {
  const body = await transport.getDocument!(AGENT_CARD_PATH, { headers: { [A2A_VERSION_HEADER]: '1.0' }, ...(signal ? { signal } : {}) });
  if (body === undefined) return false;
  let card: unknown;
  try {
    card = JSON.parse(body);
  } catch {
    return false;
  }
  return (card as { capabilities?: { streaming?: unknown } } | null)?.capabilities?.streaming === true;
}

/** How the answer was asked for: by a poll of this handle (else by SendMessage), whether the caller streams, over what. */
type Asked = { polled?: PendingHandle; stream: boolean; transport?: TransportKind };

/**
 * A2A 1.0 over AgentCore: AgentCore passes `A2A-Version` to the agent only if the runtime
 * allow-lists it. Without it a 1.0 server takes the request for 0.3 (no `SendMessage`: -32601) or
 * refuses the version (-32009) — a deployment fault, named as such rather than a generic failure.
 */
const VERSION_HEADER_MISSING_CODES = new Set([-32601, -32009]);

function outcomeOf(dialect: A2aDialect, method: string, answer: RpcAnswer, { polled, stream, transport }: Asked): AgentOutcome {
  if (answer.kind === 'unusable') return answer.outcome;
  if (answer.kind === 'error' && dialect.version === '1.0' && transport === 'agentcore' && VERSION_HEADER_MISSING_CODES.has(answer.error.code)) {
    return failure(
      'unavailable',
      'a2a:version-header-not-allow-listed',
      `${method} answered ${answer.error.code} (${truncate(answer.error.message)}): the agent did not get the A2A-Version header. Behind AgentCore, an A2A 1.0 agent's runtime must allow-list it: RequestHeaderConfiguration requestHeaderAllowlist ["A2A-Version"] (docs/operations.md, "A2A agents behind AgentCore")`,
      false,
    );
  }
  if (answer.kind === 'error') return rpcFailure(method, answer.error);
  const reply = readA2aReply(answer.result);
  switch (reply.kind) {
    case 'unrecognised':
      return answerFailure(ProtocolFailure.Malformed, `${method} result is neither an A2A message nor a task`);
    case 'message':
      if (polled) return answerFailure(ProtocolFailure.Malformed, `${method} answered with a message where a task was expected`);
      return success(reply.text, { ...(reply.messageId ? { messageId: reply.messageId } : {}), ...(reply.contextId ? { contextId: reply.contextId } : {}) }, reply.usage, reply.files);
    case 'task':
      return taskOutcome(dialect, reply, { ...(polled ? { polled } : {}), stream });
  }
}

function taskOutcome(dialect: A2aDialect, task: A2aReply & { kind: 'task' }, { polled, stream }: Asked): AgentOutcome {
  const ids = { ...(task.taskId ? { taskId: task.taskId } : {}), ...(task.contextId ? { contextId: task.contextId } : {}) };
  if (task.state === 'completed') return success(task.answer, { ...ids, state: task.state }, task.usage, task.files);
  if (task.state === 'submitted' || task.state === 'working') {
    // Hand-written agents may leave the id out of a poll answer; the handle still knows it.
    const taskId = task.taskId ?? polled?.taskId;
    if (!taskId) return answerFailure('a2a:no-task-id', `the agent answered with a ${task.state} task but no task id to follow it by`);
    const contextId = task.contextId ?? polled?.contextId;
    const handle: PendingHandle = { taskId, a2aVersion: dialect.version, ...(contextId ? { contextId } : {}) };
    if (!stream) return pending(handle, task.state);
    const { shown, partial } = streamedSoFar(task.artifactText, polled);
    return pending({ ...handle, ...shown }, task.state, partial);
  }
  const reason = task.statusText ? `: ${truncate(task.statusText)}` : '';
  const { category, words } = UNSUCCESSFUL_STATES[task.state];
  const ended = failure(category, `a2a:${task.state}`, `${words}${reason}`, false);
  // Interrupted, not ended (docs/contract.md, "Questions"): a question, resumed with a message on the same taskId.
  const taskId = task.taskId ?? polled?.taskId;
  if ((task.state === 'input-required' || task.state === 'auth-required') && taskId) {
    const contextId = task.contextId ?? polled?.contextId;
    return inputRequired({ taskId, a2aVersion: dialect.version, ...(contextId ? { contextId } : {}) }, a2aQuestion(task.state, taskId, task.statusText), undefined, ended);
  }
  return ended;
}

/**
 * Streaming (docs/contract.md, "Streaming"). An A2A agent that streams appends its answer to the
 * task's artifacts as it goes (0.3 `artifact-update` events with `append`, 1.0
 * `TaskArtifactUpdateEvent`s); its task store keeps them, so each tasks/get / GetTask of the
 * working task returns the whole artifact text so far. The handle of a caller that streams
 * remembers how much of it the caller was given — `shown`, a count of UTF-16 code units, and
 * `shownDigest`, a digest of that text — and each poll hands over only what lies beyond.
 * Text that no longer starts with what was shown (the agent rewrote it) gives nothing more until
 * the final answer, which is always the whole text. A working task's status message is progress
 * ("searching…"), not answer text: it is never streamed.
 */
const SHOWN = 'shown';
const SHOWN_DIGEST = 'shownDigest';

/** A caller streams when it said so on start; from then on its handle carries `shown`. */
function isStreaming(handle: PendingHandle): boolean {
  return handle[SHOWN] !== undefined;
}

function streamedSoFar(text: string, polled: PendingHandle | undefined): { shown: Record<string, string>; partial?: string } {
  const before = polled ? shownIn(polled) : { count: 0 };
  const grown = before !== undefined && text.length >= before.count && (before.count === 0 || digestOf(text.slice(0, before.count)) === before.digest);
  if (!grown) {
    // Rewritten, or a handle that cannot say what was shown: keep waiting for the final answer.
    const kept: Partial<PendingHandle> = polled ?? {};
    return { shown: { [SHOWN]: kept[SHOWN] ?? '0', ...(kept[SHOWN_DIGEST] ? { [SHOWN_DIGEST]: kept[SHOWN_DIGEST] } : {}) } };
  }
  const shown = { [SHOWN]: String(text.length), ...(text ? { [SHOWN_DIGEST]: digestOf(text) } : {}) };
  const partial = text.slice(before.count);
  return partial ? { shown, partial } : { shown };
}

function shownIn(handle: PendingHandle): { count: number; digest?: string } | undefined {
  const raw = handle[SHOWN];
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) return undefined;
  const digest = handle[SHOWN_DIGEST];
  return { count: Number(raw), ...(digest ? { digest } : {}) };
}

function digestOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 22);
}

function rpcFailure(method: string, error: JsonRpcErrorObject): Outcome {
  // A2A's codes overlap the zone contract's with other meanings (-32001 is "task not found"
  // here, "timeout" there), so they travel namespaced.
  return failure(categoryOfA2aError(error), `a2a:${error.code}`, `${method} answered ${error.code}: ${error.message}`, isRetryableRpcError(error, { protocol: 'a2a', method }));
}

/**
 * A2A's error table has no code for back-pressure or outages: an agent says "rate limited" with
 * HTTP 429 (the transport's business) or with a `google.rpc.ErrorInfo` reason in the error's
 * `data`, which is how A2A 1.0 (and @a2a-js/sdk) carries an error's reason. The reason wins;
 * otherwise only the codes that refuse the input say more than `failed`.
 */
const ERROR_INFO_REASONS: ReadonlyMap<string, FailureCategory> = new Map<string, FailureCategory>([
  ['RATE_LIMIT_EXCEEDED', 'busy'],
  ['RESOURCE_EXHAUSTED', 'busy'],
  ['QUOTA_EXCEEDED', 'busy'],
  ['TOO_MANY_REQUESTS', 'busy'],
  ['UNAVAILABLE', 'unavailable'],
  ['SERVICE_UNAVAILABLE', 'unavailable'],
  ['DEADLINE_EXCEEDED', 'timed-out'],
  ['CANCELLED', 'cancelled'],
  ['INVALID_ARGUMENT', 'rejected'],
  ['CONTENT_TYPE_NOT_SUPPORTED', 'rejected'],
]);

const A2A_ERROR_CODES: ReadonlyMap<number, FailureCategory> = new Map<number, FailureCategory>([
  [-32602, 'rejected'], // Invalid params: the message itself was refused
  [-32005, 'rejected'], // ContentTypeNotSupportedError
]);

export function categoryOfA2aError(error: JsonRpcErrorObject): FailureCategory {
  for (const reason of errorInfoReasons(error.data)) {
    const category = ERROR_INFO_REASONS.get(reason.toUpperCase());
    if (category) return category;
  }
  return A2A_ERROR_CODES.get(error.code) ?? 'failed';
}

/** `data` as @a2a-js/sdk writes it (an array of ErrorInfo-like details), or one such object. */
function errorInfoReasons(data: unknown): string[] {
  return (Array.isArray(data) ? data : [data])
    .map((detail) => (typeof detail === 'object' && detail !== null ? (detail as { reason?: unknown }).reason : undefined))
    .filter((reason): reason is string => typeof reason === 'string');
}

/** What the agent may want to know about where the task comes from; never the bot token. */
function slackContextOf(params: ExecuteTaskParams): Record<string, unknown> | undefined {
  const context = Object.fromEntries(
    (['correlation_id', 'team_id', 'channel', 'thread_ts', 'user_id', 'asker'] as const).filter((key) => params[key] !== undefined).map((key) => [key, params[key]]),
  );
  return Object.keys(context).length ? context : undefined;
}

/**
 * The A2A contextId of a task's Slack thread: `slack:<team_id>:<channel>:<thread_ts>` (each part
 * URI-encoded, team_id empty when unknown), the same for every task of one thread and different
 * for any other thread. None without a channel and thread, so the agent picks one as before.
 * A2A 0.3 and 1.0 let a client set the contextId of a new message (spec §3.4.1: agents MAY accept
 * it, and MUST refuse the request with an error rather than replace it).
 */
export function slackThreadContextId(params: Pick<ExecuteTaskParams, 'team_id' | 'channel' | 'thread_ts'>): string | undefined {
  const { team_id, channel, thread_ts } = params;
  if (!channel || !thread_ts) return undefined;
  return ['slack', team_id ?? '', channel, thread_ts].map(encodeURIComponent).join(':');
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
    /** What the failed read means for the task that needed it. */
    readonly category: FailureCategory = 'unavailable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type AgentCardOptions = {
  /** Where the card is, on the agent's origin. Default: the well-known path. */
  path?: string;
};

/**
 * Reads the dialect from the agent card once, and remembers it. The card is read through the
 * agent's own transport (`getDocument`), so it carries the same auth as every task — a bearer
 * token, a SigV4 signature — and the same timeout and size limit. A failed read is not
 * remembered, so the next task asks again.
 */
export function agentCardVersionResolver(transport: Transport, options: AgentCardOptions = {}): A2aVersionResolver {
  let known: Promise<A2aVersion> | undefined;
  return (signal) => {
    known ??= readAgentCardVersion(transport, { ...options, ...(signal ? { signal } : {}) }).catch((error: unknown) => {
      known = undefined;
      throw error;
    });
    return known;
  };
}

export async function readAgentCardVersion(transport: Transport, options: AgentCardOptions & { signal?: AbortSignal } = {}): Promise<A2aVersion> {
  const path = options.path ?? AGENT_CARD_PATH;
  const where = `the agent card (${path})`;
  if (!transport.getDocument) {
    throw new A2aVersionError(`the ${transport.kind} transport cannot read ${where}; a2aVersion auto needs transport https`, false);
  }
  let body: string | undefined;
  try {
    // A 1.0 server with 0.3 compatibility serves the 0.3 card unless asked for 1.0.
    body = await transport.getDocument(path, { headers: { [A2A_VERSION_HEADER]: '1.0' }, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    if (!(error instanceof TransportError)) throw new A2aVersionError(`${where} could not be read`, true, 'unavailable', { cause: error });
    const hint = error.reason === 'auth' ? ' (the card is requested with the same auth as the agent\'s tasks, and the agent refused it: check the agent\'s auth settings)' : '';
    throw new A2aVersionError(`${where} could not be read: ${error.message}${hint}`, error.retryable, categoryOfTransportFault(error), { cause: error });
  }
  if (body === undefined) throw new A2aVersionError(`${where} is empty`, false);
  let card: unknown;
  try {
    card = JSON.parse(body);
  } catch (error) {
    throw new A2aVersionError(`${where} is not JSON`, false, 'unavailable', { cause: error });
  }
  const version = versionFromAgentCard(card);
  if (!version) throw new A2aVersionError(`${where} names no protocol version`, false);
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
