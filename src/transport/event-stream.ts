import { createParser } from 'eventsource-parser';
import { BodyTooLargeError } from './response-body';

/**
 * Reading a streamed answer (docs/contract.md, "Streaming"): Server-Sent Events, each one's `data`
 * a JSON-RPC response. The SSE grammar (line ends `\n`, `\r\n` or `\r`, also split across chunks;
 * a leading BOM; several `data:` lines joined by `\n`; comments such as `: keep-alive`) is
 * `eventsource-parser`'s; what is added here is reading it from a byte stream and a bound on
 * what one event may hold in memory.
 */

/** `Accept` of a request whose answer may be streamed: events if the far side streams, JSON otherwise. */
export const STREAM_ACCEPT = 'text/event-stream, application/json';

/** True for `text/event-stream`, whatever its parameters and case. */
export function isEventStream(contentType: string | null | undefined): boolean {
  return typeof contentType === 'string' && contentType.split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}

export type EventDataOptions = {
  /** The most one event may hold before it is complete, in characters; more is a BodyTooLargeError. */
  maxEventSize: number;
  /** Called as each chunk arrives, before it is parsed: an idle timer's touch. */
  onChunk?: () => void;
};

/**
 * The `data` of each event of `source`, as soon as the event is complete. Events without data
 * (a comment, a lone `id:` or `retry:`) are none; `event:` names are not read (an A2A server's
 * `event: error` carries a JSON-RPC error response like any other). An event the stream ends
 * in the middle of is dropped, as the SSE specification says: it may be cut anywhere.
 */
export async function* eventData(source: AsyncIterable<Uint8Array | string>, options: EventDataOptions): AsyncGenerator<string, void, undefined> {
  const ready: string[] = [];
  let overflow = false;
  const parser = createParser({
    onEvent: (event) => {
      if (event.data.length > options.maxEventSize) overflow = true;
      else ready.push(event.data);
    },
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') overflow = true;
    },
    maxBufferSize: options.maxEventSize,
  });
  const decoder = new TextDecoder('utf-8');
  const take = function* () {
    if (overflow) throw new BodyTooLargeError(options.maxEventSize);
    while (ready.length > 0) yield ready.shift()!;
  };
  for await (const chunk of source) {
    options.onChunk?.();
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    yield* take();
  }
  const rest = decoder.decode();
  if (rest) parser.feed(rest);
  yield* take();
}

/**
 * A timer that fires when nothing has happened for `ms`: started at once, pushed back by each
 * `touch`, stopped by `clear`. Without `ms` it never fires.
 */
export type IdleTimer = { touch(): void; clear(): void; readonly fired: boolean };

export function idleTimer(ms: number | undefined, onIdle: () => void): IdleTimer {
  let fired = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (ms === undefined) return;
    clearTimeout(timer);
    // The read it watches keeps the process alive; the timer alone must not.
    timer = setTimeout(() => {
      fired = true;
      onIdle();
    }, ms).unref();
  };
  arm();
  return {
    touch: () => {
      if (!fired) arm();
    },
    clear: () => clearTimeout(timer),
    get fired() {
      return fired;
    },
  };
}
