/**
 * Server-sent events for streamed answers (docs/contract.md, "Streamed answers"): each JSON-RPC
 * response body is one event, `data: <the body>` and a blank line (a JSON body is one line: JSON
 * escapes its line breaks), and a comment line keeps a quiet connection open through proxies
 * and load balancers that close idle ones.
 */
export const EVENT_STREAM = 'text/event-stream';

export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': EVENT_STREAM,
  'Cache-Control': 'no-cache',
  // Proxies that buffer responses (nginx) pass this one through as it comes.
  'X-Accel-Buffering': 'no',
};

/** A comment line sent while nothing else is, this often. */
export const KEEP_ALIVE_MS = 15_000;
export const KEEP_ALIVE = ': keep-alive\n\n';

/** Whether an `Accept` header takes `text/event-stream` (with a non-zero q, if it gives one). */
export function acceptsEventStream(accept: string | string[] | undefined): boolean {
  const ranges = (Array.isArray(accept) ? accept.join(',') : (accept ?? '')).split(',');
  return ranges.some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== EVENT_STREAM) return false;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * The SSE text of a stream of response bodies, event by event, with a keep-alive comment after
 * each `keepAliveMs` without one. `return()` closes the bodies' stream (which stops its reader).
 */
export class SseFrames implements AsyncIterableIterator<string> {
  private readonly bodies: AsyncIterator<string>;
  private pending: Promise<IteratorResult<string>> | undefined;

  constructor(
    bodies: AsyncIterable<string>,
    private readonly keepAliveMs = KEEP_ALIVE_MS,
  ) {
    this.bodies = bodies[Symbol.asyncIterator]();
  }

  async next(): Promise<IteratorResult<string>> {
    this.pending ??= this.bodies.next();
    let timer: NodeJS.Timeout | undefined;
    const quiet = new Promise<'quiet'>((resolve) => (timer = setTimeout(() => resolve('quiet'), this.keepAliveMs)));
    try {
      const next = await Promise.race([this.pending, quiet]);
      if (next === 'quiet') return { done: false, value: KEEP_ALIVE };
      this.pending = undefined;
      return next.done ? { done: true, value: undefined } : { done: false, value: `data: ${next.value}\n\n` };
    } finally {
      clearTimeout(timer);
    }
  }

  async return(): Promise<IteratorResult<string>> {
    await this.bodies.return?.();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
