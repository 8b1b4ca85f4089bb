import type { SendOptions, Transport, TransportResponse } from '../../../src/transport/transport';
import type { CallContext, ExecutionProtocol } from '../../../src/protocols/protocol';
import type { AgentOutcome, PendingHandle } from '../../../src/protocols/outcome';

/** Wraps any transport and keeps what the protocol handed it, to assert on the wire shapes. */
export class RecordingTransport implements Transport {
  readonly calls: Array<{ body: Record<string, unknown>; options: SendOptions }> = [];
  constructor(private readonly inner: Transport) {}

  get kind() {
    return this.inner.kind;
  }

  send(body: string, options: SendOptions): Promise<TransportResponse> {
    this.calls.push({ body: JSON.parse(body) as Record<string, unknown>, options });
    return this.inner.send(body, options);
  }

  last(): { body: Record<string, unknown>; options: SendOptions } {
    const call = this.calls.at(-1);
    if (!call) throw new Error('nothing was sent');
    return call;
  }
}

export function callContext(transport: Transport, requestId: string, extra: Partial<CallContext> = {}): CallContext {
  return { transport, sessionKey: requestId, correlationId: requestId, ...extra };
}

/** Polls a pending task until it settles; the protocol's own answer decides, never a timer in the agent. */
export async function pollUntilSettled(protocol: ExecutionProtocol, handle: PendingHandle, call: CallContext, timeoutMs = 5_000): Promise<{ outcome: AgentOutcome; polls: number }> {
  const deadline = Date.now() + timeoutMs;
  for (let polls = 1; ; polls++) {
    const outcome = await protocol.poll(handle, call);
    if (outcome.kind !== 'pending') return { outcome, polls };
    if (Date.now() > deadline) throw new Error(`task ${handle.taskId} still pending after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
