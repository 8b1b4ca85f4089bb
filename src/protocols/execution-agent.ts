import type { ExecuteTaskParams } from '../contract';
import type { Transport, TransportKind } from '../transport/transport';
import type { Outcome, PendingHandle } from './outcome';
import type { ExecutionProtocol, ProtocolName } from './protocol';
import { transportFailure } from './transport-failure';

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
  signal?: AbortSignal;
};

/**
 * An execution agent = a name + a protocol + a transport (docs/architecture.md §4.3). This is all the
 * pipeline sees of the execution zone: three calls that always resolve with an Outcome.
 */
export class ExecutionAgent {
  constructor(
    readonly name: string,
    private readonly protocolImpl: ExecutionProtocol,
    private readonly transportImpl: Transport,
  ) {}

  get protocol(): ProtocolName {
    return this.protocolImpl.name;
  }

  get transport(): TransportKind {
    return this.transportImpl.kind;
  }

  start(params: ExecuteTaskParams, options: AgentCallOptions): Promise<Outcome> {
    return this.guard(() => this.protocolImpl.start({ requestId: options.requestId, params }, this.call(options)));
  }

  poll(handle: PendingHandle, options: AgentCallOptions): Promise<Outcome> {
    return this.guard(() => this.protocolImpl.poll(handle, this.call(options)));
  }

  /** Best effort: a failure to cancel is reported, never thrown. */
  async cancel(handle: PendingHandle, options: AgentCallOptions): Promise<Outcome | undefined> {
    try {
      await this.protocolImpl.cancel(handle, this.call(options));
      return undefined;
    } catch (error) {
      return transportFailure(error);
    }
  }

  private call(options: AgentCallOptions) {
    return { transport: this.transportImpl, sessionKey: options.sessionKey ?? options.requestId, correlationId: options.correlationId, signal: options.signal };
  }

  private async guard(run: () => Promise<Outcome>): Promise<Outcome> {
    try {
      return await run();
    } catch (error) {
      return transportFailure(error);
    }
  }
}
