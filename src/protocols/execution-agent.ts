import type { Answer, ExecuteTaskParams, Usage } from '../contract';

/** What a cancel came to: it failed (`failure`), or the task was cancelled, reporting its usage or not. */
export type CancelAnswer = { failure: Outcome; usage?: never } | { failure?: never; usage?: Usage };
import { DEFAULT_STREAM_HOLD_S, DEFAULT_STREAM_QUIET_S } from '../transport/config';
import type { Transport, TransportKind } from '../transport/transport';
import { failure, pending, textStep, type AgentOutcome, type AgentStreamStep, type Outcome, type PendingHandle, type StreamStep } from './outcome';
import type { CallContext, ExecutionProtocol, ProtocolName, StreamHold } from './protocol';
import { transportFailure } from './transport-failure';

/** The hold of an agent built without one (tests, the bench): the configured default. */
const DIRECT_HOLD_MS = DEFAULT_STREAM_HOLD_S * 1_000;

export type AgentCallOptions = {
  /** The task's request id: reused on every retry. */
  requestId: string;
  /**
   * Which session the calls belong to (AgentCore's runtimeSessionId derives from it): the Slack
   * conversation, so follow-ups reach the warm session and every call about a task — start, polls,
   * cancel — reaches the one that runs it. Defaults to the request id (a session per task).
   */
  sessionKey?: string;
  correlationId?: string;
  /**
   * Who is asking, `slack:<team>:<user>` (docs/contract.md, "Who is asking"), for the transport
   * (AgentCore's runtimeUserId, the https header). `start` takes it from `params.asker` itself.
   */
  askerId?: string;
  /**
   * The caller takes questions (docs/contract.md, "Questions"): an agent's question comes back as
   * an `input-required` outcome, to be answered with `resume`. Without it a question is a failure.
   */
  questions?: boolean;
  signal?: AbortSignal;
};

/** What a call answers: questions only for a caller that takes them. */
export type Answered<O extends AgentCallOptions> = O extends { questions: true } ? AgentOutcome : Outcome;
export type AnsweredStep<O extends AgentCallOptions> = O extends { questions: true } ? AgentStreamStep : StreamStep;

export type StreamingCallOptions = AgentCallOptions & {
  /**
   * The longest this read lasts (docs/contract.md, "Streaming": `hold_ms`); then it ends with
   * `pending`, and polling goes on from its handle. Default: the agent's `streamHoldMs`. Keep it
   * well inside the caller's own time (a Lambda's remaining time); `signal` ends it sooner.
   */
  holdMs?: number;
};

export type ExecutionAgentOptions = {
  /**
   * How long a streamed read holds by default, in ms (STREAM_HOLD_S, an EXECUTION_AGENTS entry's
   * `streamHoldS`); 0 — or the entry's `"stream": false` — reads no streams: `streams` is false
   * and the streaming calls are plain ones. Built from configuration it is STREAM_HOLD_S; an agent
   * built directly without it holds as long as the setting's default (30 s).
   */
  streamHoldMs?: number;
  /** How long a held stream may go without text before it is let go to polling, in ms (STREAM_QUIET_S; default 5 s). */
  streamQuietMs?: number;
  /** Its tasks carry the workspace bot token (`"sendBotToken": true`; src/protocols/agent-config.ts). @default false */
  sendsBotToken?: boolean;
};

/**
 * An execution agent = a name + a protocol + a transport (docs/architecture.md §4.3). This is all the
 * pipeline sees of the execution zone: calls that always resolve with an Outcome, and streamed
 * reads that always end with one.
 */
export class ExecutionAgent {
  /** The configured hold of a streamed read, in ms; 0 when this agent is not read with streams. */
  readonly streamHoldMs: number;
  /** How long a held stream may go without text (src/verification/live/stream-hold.ts), in ms. */
  readonly streamQuietMs: number;
  /** Whether its tasks carry the workspace bot token in `bot_token`: only an agent configured so gets it. */
  readonly sendsBotToken: boolean;

  constructor(
    readonly name: string,
    private readonly protocolImpl: ExecutionProtocol,
    private readonly transportImpl: Transport,
    options: ExecutionAgentOptions = {},
  ) {
    this.streamHoldMs = Math.max(0, options.streamHoldMs ?? DIRECT_HOLD_MS);
    this.streamQuietMs = Math.max(1, options.streamQuietMs ?? DEFAULT_STREAM_QUIET_S * 1_000);
    this.sendsBotToken = options.sendsBotToken ?? false;
  }

  /**
   * True when `startStreaming` / `pollStreaming` may stream: the protocol and the transport can,
   * and the configuration does not turn it off. Whether a given agent does is known only from its
   * answer (an agent that does not stream answers at once, and the read is that one outcome; an
   * A2A agent streams only if its card says so).
   */
  get streams(): boolean {
    return this.streamHoldMs > 0 && this.protocolImpl.stream !== undefined && this.transportImpl.stream !== undefined;
  }

  get protocol(): ProtocolName {
    return this.protocolImpl.name;
  }

  get transport(): TransportKind {
    return this.transportImpl.kind;
  }

  start<O extends AgentCallOptions>(params: ExecuteTaskParams, options: O): Promise<Answered<O>> {
    return this.guard(options, () => this.protocolImpl.start({ requestId: options.requestId, params }, this.call(options, params)));
  }

  poll<O extends AgentCallOptions>(handle: PendingHandle, options: O): Promise<Answered<O>> {
    return this.guard(options, () => this.protocolImpl.poll(handle, this.call(options)));
  }

  /**
   * Resumes the task a question paused (an `input-required` outcome's handle) with the answer:
   * the same task goes on, and its outcome is read as `start`'s (docs/contract.md, "Questions").
   * A protocol whose agents cannot ask answers a failure.
   */
  resume(handle: PendingHandle, answer: Answer, options: AgentCallOptions): Promise<AgentOutcome> {
    const resume = this.protocolImpl.resume;
    if (!resume) return Promise.resolve(failure('rejected', 'agent:no-questions', `the ${this.protocolImpl.name} protocol cannot resume a task`, false));
    return this.guard({ ...options, questions: true }, () => resume.call(this.protocolImpl, handle, answer, this.call(options)));
  }

  /**
   * `start`, read as a stream: text steps (`{kind: 'text', text, handle}`, new text each, the
   * handle enough to poll on from there; the first may have no text: it names the task) as the
   * agent produces them, then exactly one Outcome,
   * the last step. Never throws: a fault is the last step, a failure. In a read, text comes only
   * as text steps — the last step never carries `partial`. When the agent cannot stream (or
   * `streams` is false, or the hold is 0) the read is `start`'s outcome, its text as a text step.
   * Ending the iteration early aborts the request.
   */
  startStreaming<O extends StreamingCallOptions>(params: ExecuteTaskParams, options: O): AsyncIterable<AnsweredStep<O>> {
    const task = { requestId: options.requestId, params };
    return this.steps(
      options,
      this.protocolImpl.stream && ((call, hold) => this.protocolImpl.stream!(task, call, hold)),
      (call) => this.protocolImpl.start(task, call),
      params,
    ) as AsyncIterable<AnsweredStep<O>>;
  }

  /** `poll`, read as a stream from the handle (its cursor): as `startStreaming`. */
  pollStreaming<O extends StreamingCallOptions>(handle: PendingHandle, options: O): AsyncIterable<AnsweredStep<O>> {
    return this.steps(
      options,
      this.protocolImpl.streamPoll && ((call, hold) => this.protocolImpl.streamPoll!(handle, call, hold)),
      (call) => this.protocolImpl.poll(handle, call),
    ) as AsyncIterable<AnsweredStep<O>>;
  }

  /**
   * Best effort: a failure to cancel is reported (`failure`), never thrown; a cancelled task's
   * reported usage comes back with it (`usage`, checked as the contract says).
   */
  async cancel(handle: PendingHandle, options: AgentCallOptions): Promise<CancelAnswer> {
    try {
      const usage = await this.protocolImpl.cancel(handle, this.call(options));
      return usage ? { usage } : {};
    } catch (error) {
      return { failure: transportFailure(error) };
    }
  }

  /** True when this agent's transport has sessions that can be ended (agentcore). */
  get stopsSessions(): boolean {
    return this.transportImpl.stopSession !== undefined;
  }

  /**
   * Ends the conversation's session at once (AgentCore's StopRuntimeSession), whatever the
   * protocol. Best effort: a failure is reported, never thrown; undefined when it ended (or the
   * transport has no sessions to end).
   */
  async stopSession(options: Pick<AgentCallOptions, 'requestId' | 'sessionKey' | 'signal'>): Promise<Outcome | undefined> {
    if (!this.transportImpl.stopSession) return undefined;
    try {
      await this.transportImpl.stopSession(options.sessionKey ?? options.requestId, options.signal ? { signal: options.signal } : {});
      return undefined;
    } catch (error) {
      return transportFailure(error);
    }
  }

  private call(options: AgentCallOptions, params?: ExecuteTaskParams): CallContext {
    const askerId = params?.asker?.id ?? options.askerId;
    return { transport: this.transportImpl, sessionKey: options.sessionKey ?? options.requestId, correlationId: options.correlationId, signal: options.signal, ...(askerId ? { askerId } : {}) };
  }

  private async *steps(
    options: StreamingCallOptions,
    streamed: ((call: CallContext, hold: StreamHold) => AsyncIterable<AgentStreamStep>) | undefined,
    plain: (call: CallContext) => Promise<AgentOutcome>,
    params?: ExecuteTaskParams,
  ): AsyncGenerator<AgentStreamStep, void, undefined> {
    const holdMs = Math.max(0, options.holdMs ?? this.streamHoldMs);
    try {
      const call = this.call(options, params);
      if (!streamed || !this.streams || holdMs === 0) {
        yield* lastSteps(asked(await plain(call), options));
        return;
      }
      for await (const step of streamed(call, { holdMs })) {
        if (step.kind !== 'text') {
          yield* lastSteps(asked(step, options));
          return;
        }
        // A step without text names the task: the hold can let a quiet stream go and poll by it.
        yield step;
      }
      yield failure('failed', 'agent:stream-unfinished', 'the streamed read ended without an outcome', false);
    } catch (error) {
      yield transportFailure(error);
    }
  }

  private async guard<O extends AgentCallOptions>(options: O, run: () => Promise<AgentOutcome>): Promise<Answered<O>> {
    try {
      return asked(await run(), options) as Answered<O>;
    } catch (error) {
      return transportFailure(error) as Answered<O>;
    }
  }
}

/**
 * The outcome for this caller: a question stays one for a caller that takes questions; for any
 * other it is the failure an unanswerable question always was.
 */
function asked(outcome: AgentOutcome, options: AgentCallOptions): AgentOutcome {
  if (outcome.kind !== 'input-required' || options.questions === true) return outcome;
  return outcome.unanswered ?? failure('failed', 'agent:input-required', `the agent asks a question (${outcome.question.id}), and this caller takes none`, false);
}

/** The last steps of a read: a pending outcome's `partial` comes first, as a text step. */
function* lastSteps(outcome: AgentOutcome): Generator<AgentStreamStep, void, undefined> {
  if (outcome.kind !== 'pending' || !outcome.partial) {
    yield outcome;
    return;
  }
  yield textStep(outcome.partial, outcome.handle, outcome.steps);
  yield pending(outcome.handle, outcome.state);
}
