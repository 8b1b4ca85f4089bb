import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import { requestBody } from './request-body';

/**
 * The Lambda Runtime API (version 2018-06-01) for one function, served on loopback: what AWS's
 * Runtime Interface Client polls inside a Lambda sandbox. The paths and headers are AWS's
 * (docs/deploy.md, "Rehearse before you deploy"):
 *
 * - `GET /2018-06-01/runtime/invocation/next` long-polls for the next event; the answer carries
 *   `Lambda-Runtime-Aws-Request-Id`, `Lambda-Runtime-Deadline-Ms` and
 *   `Lambda-Runtime-Invoked-Function-Arn`. The first call ends the function's init phase, which is
 *   how Lambda measures the init duration.
 * - `POST …/invocation/{id}/response` answers in buffered mode, or — with
 *   `Lambda-Runtime-Function-Response-Mode: streaming` — as a chunked body whose HTTP trailers
 *   `Lambda-Runtime-Function-Error-Type` / `-Body` (base64 JSON) report an error raised mid-stream.
 * - `POST …/invocation/{id}/error` reports an invocation error (type in
 *   `Lambda-Runtime-Function-Error-Type`, `{errorType, errorMessage, stackTrace}` as the body).
 * - `POST /2018-06-01/runtime/init/error` reports an init failure (the handler did not load).
 */
export type RuntimeError = { errorType: string; errorMessage: string; stackTrace?: string[] };

/** One invocation as the function answered it. */
export type Answer = {
  mode: 'buffered' | 'streaming';
  contentType: string | undefined;
  /** The body as the function writes it (a buffered answer arrives whole). */
  body: Readable;
  /** Settles when the answer is complete: with the error a stream's trailers reported, if any. */
  finished: Promise<RuntimeError | undefined>;
};

export class InvocationError extends Error {
  constructor(
    readonly functionName: string,
    readonly runtimeError: RuntimeError,
  ) {
    super(`${functionName}: ${runtimeError.errorType}: ${runtimeError.errorMessage}`);
    this.name = 'InvocationError';
  }
}

type Pending = {
  requestId: string;
  event: unknown;
  deadlineMs: number;
  answer: (answer: Answer) => void;
  fail: (error: Error) => void;
};

const PREFIX = '/2018-06-01/runtime';

export class RuntimeApi {
  private readonly server: Server;
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<string, Pending>();
  private waiting: ServerResponse | undefined;
  private firstPoll: (() => void) | undefined;
  /** Resolves at the runtime's first `/next`: the end of its init phase. */
  readonly initialized: Promise<void>;
  /** What the runtime reported on /init/error, if it did. */
  initError: RuntimeError | undefined;
  private onInitError: ((error: RuntimeError) => void) | undefined;

  constructor(
    readonly functionName: string,
    private readonly functionArn: string,
  ) {
    this.initialized = new Promise((resolve) => (this.firstPoll = resolve));
    this.server = createServer((req, res) => this.route(req, res));
  }

  /** Starts listening; returns `host:port`, the value of AWS_LAMBDA_RUNTIME_API. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Called with the runtime's init error when it posts one. */
  whenInitFails(listener: (error: RuntimeError) => void): void {
    this.onInitError = listener;
  }

  /** Queues an event; resolves when the function starts answering, rejects on an invocation error. */
  invoke(event: unknown, timeoutMs: number): Promise<Answer> {
    return new Promise<Answer>((answer, fail) => {
      const pending: Pending = { requestId: randomUUID(), event, deadlineMs: Date.now() + timeoutMs, answer, fail };
      this.queue.push(pending);
      this.deliver();
    });
  }

  /** Fails every queued and running invocation (the runtime died or was stopped). */
  abandon(error: Error): void {
    for (const pending of [...this.queue.splice(0), ...this.inFlight.values()]) pending.fail(error);
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    this.waiting?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '';
    if (req.method === 'GET' && url === `${PREFIX}/invocation/next`) return this.next(res);
    if (req.method === 'POST' && url === `${PREFIX}/init/error`) return this.initFailed(req, res);
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
    const pending = match ? this.inFlight.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match || !pending) {
      res.writeHead(match ? 400 : 404, { 'content-type': 'application/json' }).end(JSON.stringify({ errorType: match ? 'InvalidRequestID' : 'NotFound', errorMessage: `no such invocation or path: ${url}` }));
      return;
    }
    this.inFlight.delete(pending.requestId);
    if (match[2] === 'error') return this.invocationFailed(pending, req, res);
    if (req.headers['lambda-runtime-function-response-mode'] === 'streaming') return this.streamed(pending, req, res);
    return this.buffered(pending, req, res);
  }

  private next(res: ServerResponse): void {
    this.firstPoll?.();
    this.firstPoll = undefined;
    this.waiting = res;
    res.on('close', () => {
      if (this.waiting === res) this.waiting = undefined;
    });
    this.deliver();
  }

  private deliver(): void {
    const res = this.waiting;
    if (!res || this.queue.length === 0) return;
    const pending = this.queue.shift()!;
    this.waiting = undefined;
    this.inFlight.set(pending.requestId, pending);
    const body = JSON.stringify(pending.event);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'lambda-runtime-aws-request-id': pending.requestId,
      'lambda-runtime-deadline-ms': String(pending.deadlineMs),
      'lambda-runtime-invoked-function-arn': this.functionArn,
      'lambda-runtime-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Sampled=0`,
    });
    res.end(body);
  }

  private buffered(pending: Pending, req: IncomingMessage, res: ServerResponse): void {
    const body = new PassThrough();
    req.pipe(body);
    req.on('end', () => accepted(res));
    pending.answer({ mode: 'buffered', contentType: req.headers['content-type'], body, finished: new Promise((resolve) => req.on('end', () => resolve(undefined))) });
  }

  private streamed(pending: Pending, req: IncomingMessage, res: ServerResponse): void {
    const body = new PassThrough();
    req.pipe(body);
    const finished = new Promise<RuntimeError | undefined>((resolve, reject) => {
      req.on('end', () => {
        accepted(res);
        const type = req.trailers['lambda-runtime-function-error-type'];
        const encoded = req.trailers['lambda-runtime-function-error-body'];
        if (!type) return resolve(undefined);
        resolve(parseError(encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '', type));
      });
      req.on('aborted', () => reject(new Error(`${this.functionName}: the runtime broke off the response stream`)));
    });
    pending.answer({ mode: 'streaming', contentType: req.headers['content-type'], body, finished });
  }

  private invocationFailed(pending: Pending, req: IncomingMessage, res: ServerResponse): void {
    requestBody(req).then((body) => {
      const text = body.toString('utf8');
      accepted(res);
      pending.fail(new InvocationError(this.functionName, parseError(text, String(req.headers['lambda-runtime-function-error-type'] ?? 'Unknown'))));
    });
  }

  private initFailed(req: IncomingMessage, res: ServerResponse): void {
    requestBody(req).then((body) => {
      const text = body.toString('utf8');
      accepted(res);
      this.initError = parseError(text, String(req.headers['lambda-runtime-function-error-type'] ?? 'Runtime.Unknown'));
      this.onInitError?.(this.initError);
    });
  }
}

function accepted(res: ServerResponse): void {
  if (!res.headersSent) res.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"OK"}');
}


/** The runtime's error document; a body that is not one still reports its type and text. */
function parseError(text: string, fallbackType: string): RuntimeError {
  try {
    const parsed = JSON.parse(text) as Partial<RuntimeError>;
    return { errorType: parsed.errorType ?? fallbackType, errorMessage: parsed.errorMessage ?? text, ...(parsed.stackTrace ? { stackTrace: parsed.stackTrace } : {}) };
  } catch {
    return { errorType: fallbackType, errorMessage: text };
  }
}
