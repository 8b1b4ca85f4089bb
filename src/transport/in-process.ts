import { TransportError, type SendOptions, type Transport, type TransportResponse } from './transport';

/** Body in, body out: what an execution dispatcher offers. Given by whoever wires the stack. */
export type BodyHandler = (body: Uint8Array) => Promise<string | undefined>;

/**
 * Body in, response bodies out as they are produced: a dispatcher's streamed answer (one JSON-RPC
 * response string each, no SSE framing; docs/contract.md, "Streaming"). Leaving the iteration
 * early (`return()`) tells the dispatcher the caller has gone.
 */
export type StreamBodyHandler = (body: Uint8Array) => AsyncIterable<string>;

/**
 * Hands the body to a dispatcher in the same process, as bytes, exactly as it would arrive over
 * the wire. It imports nothing of `src/execution`: `src/local` and tests pass the dispatcher in
 * (and its streaming form, when it has one).
 */
export class InProcessTransport implements Transport {
  readonly kind = 'in-process' as const;
  private readonly encoder = new TextEncoder();
  constructor(
    private readonly handle: BodyHandler,
    private readonly handleStream?: StreamBodyHandler,
  ) {}

  async send(body: string, options: SendOptions): Promise<TransportResponse> {
    if (options.signal?.aborted) throw this.cancelled('before it was sent');
    const answer = this.handle(this.encoder.encode(body));
    if (!options.signal) return answer;
    return untilAborted(answer, options.signal, () => this.cancelled('while in flight'));
  }

  /** The dispatcher's streamed answer; without a streaming dispatcher, the one answer of `send`. */
  async *stream(body: string, options: SendOptions): AsyncGenerator<string, void, undefined> {
    if (!this.handleStream) {
      const answer = await this.send(body, options);
      if (answer !== undefined && answer !== '') yield answer;
      return;
    }
    if (options.signal?.aborted) throw this.cancelled('before it was sent');
    const iterator = this.handleStream(this.encoder.encode(body))[Symbol.asyncIterator]();
    let finished = false;
    let cancelled = false;
    try {
      for (;;) {
        const next = options.signal ? untilAborted(iterator.next(), options.signal, () => this.cancelled('while it streamed')) : iterator.next();
        let step: IteratorResult<string>;
        try {
          step = await next;
        } catch (error) {
          cancelled = error instanceof TransportError;
          throw error;
        }
        if (step.done) {
          finished = true;
          return;
        }
        if (step.value !== '') yield step.value;
      }
    } finally {
      if (!finished) {
        // A dispatcher still working on a `next()` (a cancelled wait) finishes it before it can
        // return: tell it without waiting. Otherwise it stopped at a yield and returns at once.
        const stopped = Promise.resolve(iterator.return?.()).catch(() => undefined);
        if (!cancelled) await stopped;
      }
    }
  }

  private cancelled(when: string): TransportError {
    return new TransportError(`the call was cancelled ${when}`, 'timeout', true, { transport: this.kind });
  }
}

/** `work`'s result, or the `fault` as soon as the signal aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, fault: () => TransportError): Promise<T> {
  if (signal.aborted) return Promise.reject(fault());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(fault());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
