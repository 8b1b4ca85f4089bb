import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AGENT_CARD_PATH } from '../../contract';
import type { ExecutionRuntime } from '../runtime';
import { HealthReporter } from './health';
import { EVENT_STREAM_HEADERS, SseFrames, acceptsEventStream } from './sse';

/**
 * The execution runtime over HTTP, following the AgentCore Runtime HTTP contract:
 * `POST /invocations` (JSON-RPC; every JSON-RPC answer, errors included, is HTTP 200 because
 * AgentCore turns non-2xx into RuntimeClientError and the JSON-RPC error would be lost;
 * notifications get 204), `GET /ping`, and `GET /.well-known/agent-card.json`.
 * The same server runs on AgentCore (0.0.0.0:8080), locally and on any other host.
 *
 * An invocation costs what a hand-written node:http JSON server's does: the body is collected by
 * callbacks (one chunk is used as it is), handed to the dispatcher as bytes, and the answer is
 * written with its two headers in one `writeHead`.
 *
 * A request whose `Accept` takes `text/event-stream` may get a streamed answer (docs/contract.md,
 * "Streamed answers"): server-sent events, each written as it comes, a keep-alive comment every
 * 15 s of quiet. A client that goes away stops the stream's reading, never its task.
 */
export const INVOCATIONS_PATH = '/invocations';
export const PING_PATH = '/ping';

const ROUTES: Record<string, string> = { [INVOCATIONS_PATH]: 'POST', [PING_PATH]: 'GET', [AGENT_CARD_PATH]: 'GET' };

export function createExecutionHttpServer(runtime: ExecutionRuntime, health = new HealthReporter(runtime.clock)): Server {
  runtime.service.onBusyChange((busy) => health.setBusy(busy));
  const maxBodyBytes = runtime.config.MAX_BODY_BYTES;

  const fail = (res: ServerResponse, error: unknown): void => {
    runtime.log.error('http host failure', { error: error as Error });
    if (!res.headersSent) sendJson(res, 500, { error: 'Internal Server Error' });
    else res.destroy();
  };

  function invocation(req: IncomingMessage, res: ServerResponse): void {
    const streams = acceptsEventStream(req.headers.accept);
    collectBody(req, maxBodyBytes, (error, body) => {
      try {
        if (error) return fail(res, error);
        if (body === 'too-large') {
          res.setHeader('Connection', 'close');
          sendJson(res, 413, { error: `Payload Too Large: the limit is ${maxBodyBytes} bytes` });
          req.destroy();
          return;
        }
        if (streams) return streamed(body!, res);
        runtime.dispatch(body!).then(
          (answer) => answerWith(res, answer),
          (failure: unknown) => fail(res, failure),
        );
      } catch (failure) {
        fail(res, failure);
      }
    });
  }

  /** The answer of a caller that reads streams: a stream of events, or the plain answer. */
  function streamed(body: Buffer, res: ServerResponse): void {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    runtime.openStream(body, { signal: gone.signal }).then(
      (opening) => {
        if (!opening.stream) return answerWith(res, opening.body);
        if (gone.signal.aborted) return void opening.events.return?.();
        res.writeHead(200, EVENT_STREAM_HEADERS);
        res.flushHeaders();
        return writeEvents(new SseFrames(opening.events), res, gone.signal).catch((failure: unknown) => fail(res, failure));
      },
      (failure: unknown) => fail(res, failure),
    );
  }

  function answerWith(res: ServerResponse, answer: string | undefined): void {
    try {
      if (answer === undefined) res.writeHead(204).end();
      else res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) }).end(answer);
    } catch (error) {
      fail(res, error);
    }
  }

  return createServer((req, res) => {
    try {
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      const path = query === -1 ? url : url.slice(0, query);
      const allowed = ROUTES[path];
      if (!allowed) return sendJson(res, 404, { error: 'Not Found' });
      if (req.method !== allowed) {
        res.setHeader('Allow', allowed);
        return sendJson(res, 405, { error: 'Method Not Allowed' });
      }
      if (path === PING_PATH) return sendJson(res, 200, health.ping());
      if (path === AGENT_CARD_PATH) return sendJson(res, 200, runtime.card);
      invocation(req, res);
    } catch (error) {
      fail(res, error);
    }
  });
}

/** Writes each frame as it comes, waiting while the client reads slower than the stream; stops when the client is gone. */
async function writeEvents(frames: SseFrames, res: ServerResponse, gone: AbortSignal): Promise<void> {
  try {
    for (let next = await frames.next(); !next.done && !gone.aborted; next = await frames.next()) {
      if (!res.write(next.value)) await drained(res, gone);
    }
  } finally {
    await frames.return();
    if (!gone.aborted) res.end();
  }
}

function drained(res: ServerResponse, gone: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      gone.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    gone.addEventListener('abort', done, { once: true });
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

/**
 * Reads the body up to `limit` bytes and calls `done` once: with the bytes, with 'too-large'
 * (refused before it is parsed: at once when Content-Length says so, else as soon as the bytes
 * pass the limit), or with the request's error.
 */
function collectBody(req: IncomingMessage, limit: number, done: (error: Error | undefined, body?: Buffer | 'too-large') => void): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return done(undefined, 'too-large');
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  let size = 0;
  let settled = false;
  req.on('data', (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > limit) {
      settled = true;
      first = more = undefined;
      done(undefined, 'too-large');
      return;
    }
    if (!first) first = chunk;
    else (more ??= [first]).push(chunk);
  });
  req.on('end', () => {
    if (settled) return;
    settled = true;
    done(undefined, more ? Buffer.concat(more, size) : (first ?? Buffer.alloc(0)));
  });
  req.on('error', (error) => {
    if (settled) return;
    settled = true;
    done(error);
  });
}

/** Reads the body up to `limit` bytes; larger bodies are refused before they are parsed. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => collectBody(req, limit, (error, body) => (error ? reject(error) : resolve(body!))));
}
