import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, listenOnLoopback } from '../support/http';

/** What a loopback test server saw of one request. */
export type SeenRequest = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

export type TestServer = { url: string; requests: SeenRequest[]; close(): Promise<void> };

/**
 * A real HTTP server on 127.0.0.1 that answers with `handler`, for faults no healthy runtime
 * produces (429, 5xx, hanging, oversized bodies). It records every request it reads.
 */
export async function startTestServer(handler: (req: SeenRequest, res: ServerResponse, index: number) => unknown): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      void Promise.resolve(handler(seen, res, requests.length - 1)).catch(() => res.destroy());
    });
  });
  const url = await listenOnLoopback(server);
  return { url, requests, close: () => closeServer(server) };
}

/** A port nothing listens on: bound once, then released, so connecting is refused. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

export const executeTask = (text: string, id: string = randomUUID()) => JSON.stringify({ jsonrpc: '2.0', id, method: 'execute_task', params: { text } });
export const getTaskResult = (taskId: string, id: string = randomUUID()) => JSON.stringify({ jsonrpc: '2.0', id, method: 'get_task_result', params: { task_id: taskId } });

/** A sleep that waits for nothing and remembers what it was asked to wait. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

/** Runs `fn` and returns what it threw (failing the test if it did not throw). */
export async function caught<T = unknown>(fn: () => Promise<unknown>): Promise<T> {
  try {
    await fn();
  } catch (error) {
    return error as T;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** One Server-Sent Event carrying `value` as its JSON data. */
export const sseEvent = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

/** Starts an SSE answer: status 200, `text/event-stream`, headers sent at once, Nagle off so each write is its own packet. */
export function startSse(res: ServerResponse): void {
  res.socket?.setNoDelay(true);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** Writes `bytes` in pieces of `size`, each after the last has gone out (a fresh TCP chunk each, as far as the OS allows). */
export async function writeInPieces(res: ServerResponse, bytes: Buffer, size: number): Promise<void> {
  for (let at = 0; at < bytes.length; at += size) {
    await new Promise<void>((resolve) => res.write(bytes.subarray(at, at + size), () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A promise the test opens when it is ready: lets a server hold the rest of its answer back. */
export function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Resolves when the server side of this response's connection is closed (the client went away, or it ended). */
export function closedBy(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => res.on('close', () => resolve()));
}

/** A progress response of a streamed answer (docs/contract.md, "Streaming"): `piece <n> `, cursor `<n>`. */
export const progressResponse = (n: number) => ({ jsonrpc: '2.0', id: 'r', result: { status: 'working', task_id: 'task-1', text: `piece ${n} `, cursor: String(n) } });
/** The last response of a streamed answer: the whole text. */
export const finalResponse = { jsonrpc: '2.0', id: 'r', result: { status: 'success', response_text: 'piece 1 piece 2' } };

/** Every body a transport's stream yields, read to its end. */
export async function readAll(stream: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const data of stream) out.push(data);
  return out;
}
