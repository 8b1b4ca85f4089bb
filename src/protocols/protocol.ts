import type { ExecuteTaskParams } from '../contract';
import type { Transport } from '../transport/transport';
import type { Answer, Usage } from '../contract';
import type { AgentOutcome, AgentStreamStep, PendingHandle } from './outcome';

/** One task as the verification zone hands it over. */
export type TaskInput = {
  /** UUID v4, generated once when the Slack event was accepted and reused on every retry. */
  requestId: string;
  params: ExecuteTaskParams;
};

/** Per call: which wire to use and how to cancel. */
export type CallContext = {
  transport: Transport;
  /** Stable per task (the request id); transports derive their session from it. */
  sessionKey: string;
  correlationId?: string;
  /** Who is asking (docs/contract.md, "Who is asking"): the transport carries it where it can. */
  askerId?: string;
  signal?: AbortSignal;
};

/** How long a caller reads one stream: past it the read ends with a pending outcome, and polling goes on. */
export type StreamHold = { holdMs: number };

/**
 * The execution-protocol seam: builds request bodies for a task and turns response bodies into
 * outcomes. Transport faults surface as TransportError; everything else is an Outcome.
 */
export interface ExecutionProtocol {
  readonly name: ProtocolName;
  start(task: TaskInput, call: CallContext): Promise<AgentOutcome>;
  poll(handle: PendingHandle, call: CallContext): Promise<AgentOutcome>;
  /**
   * Resumes the task a question paused (docs/contract.md, "Questions") with the answer: the same
   * task, not a new one. Only protocols whose agents can ask have it.
   */
  resume?(handle: PendingHandle, answer: Answer, call: CallContext): Promise<AgentOutcome>;
  /**
   * `start`, read as a stream: text steps as the agent produces them, then exactly one Outcome,
   * the last step. An agent that answers without streaming gives its one Outcome. Ends by the
   * hold at the latest, with `pending` (polling goes on from its handle). A transport fault
   * before any handle is known is thrown (TransportError); after, the last step is `pending`.
   */
  stream?(task: TaskInput, call: CallContext, hold: StreamHold): AsyncIterable<AgentStreamStep>;
  /** `poll`, read as a stream from the handle, as `stream` reads `start`. */
  streamPoll?(handle: PendingHandle, call: CallContext, hold: StreamHold): AsyncIterable<AgentStreamStep>;
  /**
   * Best effort: stop a task the verification zone has given up on. Resolves with the usage the
   * cancelled task reports (docs/contract.md, "Usage"), when it reports one.
   */
  cancel(handle: PendingHandle, call: CallContext): Promise<Usage | undefined>;
}

export type ProtocolName = 'execute-task' | 'a2a' | 'simple-a2a';
