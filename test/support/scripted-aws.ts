import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './http';

/**
 * An AWS JSON protocol endpoint on loopback whose answers a test scripts, for the cases a real
 * emulator cannot be made to produce: a batch with some entries refused, a throttle, a body whose
 * checksum is wrong, an answer that never comes. Every request is recorded as received (headers,
 * operation, input), so a test sees exactly what went over the wire.
 */
export type ScriptedRequest = { target: string; operation: string; input: Record<string, unknown>; headers: IncomingMessage['headers'] };

export type ScriptedAnswer =
  | { status?: number; body?: unknown; headers?: Record<string, string>; rawBody?: string }
  /** Accept the request and never answer it. */
  | 'stall'
  /** Cut the connection without an answer. */
  | 'reset';

export type ScriptedAws = {
  endpoint: string;
  requests: ScriptedRequest[];
  /** Answers the next requests in order (an answer or a function of the request); then `fallback` answers. */
  next(...answers: Array<ScriptedAnswer | ((request: ScriptedRequest) => ScriptedAnswer)>): void;
  close(): Promise<void>;
};

export async function startScriptedAws(fallback: (request: ScriptedRequest) => ScriptedAnswer = () => ({ body: {} })): Promise<ScriptedAws> {
  const queued: Array<ScriptedAnswer | ((request: ScriptedRequest) => ScriptedAnswer)> = [];
  const requests: ScriptedRequest[] = [];
  const held = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const request: ScriptedRequest = { target, operation: target.slice(target.indexOf('.') + 1), input: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>, headers: req.headers };
      requests.push(request);
      const scripted = queued.shift() ?? fallback;
      const answer = typeof scripted === 'function' ? scripted(request) : scripted;
      if (answer === 'stall') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      const text = answer.rawBody ?? JSON.stringify(answer.body ?? {});
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text), ...answer.headers });
      res.end(text);
    });
  });
  const endpoint = await listenOnLoopback(server);
  return {
    endpoint,
    requests,
    next: (...answers) => queued.push(...answers),
    close: () => closeServer(server),
  };
}
