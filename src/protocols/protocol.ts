import type { ExecuteTaskParams } from '../contract';
import type { Transport } from '../transport/transport';
import type { Outcome, PendingHandle, StreamStep } from './outcome';

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
  start(task: TaskInput, call: CallContext): Promise<Outcome>;
  poll(handle: PendingHandle, call: CallContext): Promise<Outcome>;
  /**
   * `start`, read as a stream: text steps as the agent produces them, then exactly one Outcome,
   * the last step. An agent that answers without streaming gives its one Outcome. Ends by the
   * hold at the latest, with `pending` (polling goes on from its handle). A transport fault
   * before any handle is known is thrown (TransportError); after, the last step is `pending`.
   */
  stream?(task: TaskInput, call: CallContext, hold: StreamHold): AsyncIterable<StreamStep>;
  /** `poll`, read as a stream from the handle, as `stream` reads `start`. */
  streamPoll?(handle: PendingHandle, call: CallContext, hold: StreamHold): AsyncIterable<StreamStep>;
  /** Best effort: stop a task the verification zone has given up on. */
  cancel(handle: PendingHandle, call: CallContext): Promise<void>;
}

export type ProtocolName = 'execute-task' | 'a2a' | 'simple-a2a';
