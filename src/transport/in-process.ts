import { TransportError, type SendOptions, type Transport, type TransportResponse } from './transport';

/** Body in, body out: what an execution dispatcher offers. Given by whoever wires the stack. */
export type BodyHandler = (body: Uint8Array) => Promise<string | undefined>;

/**
 * Hands the body to a dispatcher in the same process, as bytes, exactly as it would arrive over
 * the wire. It imports nothing of `src/execution`: `src/local` and tests pass the dispatcher in.
 */
export class InProcessTransport implements Transport {
  readonly kind = 'in-process' as const;
  private readonly encoder = new TextEncoder();
  constructor(private readonly handle: BodyHandler) {}

  async send(body: string, options: SendOptions): Promise<TransportResponse> {
    if (options.signal?.aborted) throw new TransportError('the call was cancelled before it was sent', 'timeout', true, { transport: this.kind });
    const answer = this.handle(this.encoder.encode(body));
    if (!options.signal) return answer;
    const signal = options.signal;
    return new Promise<TransportResponse>((resolve, reject) => {
      const onAbort = () => reject(new TransportError('the call was cancelled while in flight', 'timeout', true, { transport: this.kind }));
      signal.addEventListener('abort', onAbort, { once: true });
      answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}
