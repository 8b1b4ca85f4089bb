import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AGENT_CARD_PATH } from '../../contract';
import type { ExecutionRuntime } from '../runtime';
import { HealthReporter } from './health';

/**
 * The execution runtime over HTTP, following the AgentCore Runtime HTTP contract:
 * `POST /invocations` (JSON-RPC; every JSON-RPC answer, errors included, is HTTP 200 because
 * AgentCore turns non-2xx into RuntimeClientError and the JSON-RPC error would be lost;
 * notifications get 204), `GET /ping`, and `GET /.well-known/agent-card.json`.
 * The same server runs on AgentCore (0.0.0.0:8080), locally and on any other host.
 */
export const INVOCATIONS_PATH = '/invocations';
export const PING_PATH = '/ping';

const ROUTES: Record<string, string> = { [INVOCATIONS_PATH]: 'POST', [PING_PATH]: 'GET', [AGENT_CARD_PATH]: 'GET' };

export function createExecutionHttpServer(runtime: ExecutionRuntime, health = new HealthReporter()): Server {
  runtime.service.onBusyChange((busy) => health.setBusy(busy));
  const maxBodyBytes = runtime.config.MAX_BODY_BYTES;

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const allowed = ROUTES[path];
    if (!allowed) return sendJson(res, 404, { error: 'Not Found' });
    if (req.method !== allowed) {
      res.setHeader('Allow', allowed);
      return sendJson(res, 405, { error: 'Method Not Allowed' });
    }
    if (path === PING_PATH) return sendJson(res, 200, health.ping());
    if (path === AGENT_CARD_PATH) return sendJson(res, 200, runtime.card);

    const body = await readBody(req, maxBodyBytes);
    if (body === 'too-large') {
      res.setHeader('Connection', 'close');
      sendJson(res, 413, { error: `Payload Too Large: the limit is ${maxBodyBytes} bytes` });
      req.destroy();
      return;
    }
    const answer = await runtime.dispatch(body);
    if (answer === undefined) {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) }).end(answer);
  }

  return createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      runtime.log.error('http host failure', { error: error as Error });
      if (!res.headersSent) sendJson(res, 500, { error: 'Internal Server Error' });
      else res.destroy();
    });
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

/** Reads the body up to `limit` bytes; larger bodies are refused before they are parsed. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve('too-large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!settled) resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (error) => {
      if (!settled) reject(error);
    });
  });
}
