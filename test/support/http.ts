import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts a server on 127.0.0.1 with an ephemeral port and returns its base URL. */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export type RawResponse = { status: number; headers: Headers; text: string; json: () => unknown };

export async function post(url: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<RawResponse> {
  const response = await fetch(url, { method: 'POST', body: body as BodyInit, headers: { 'content-type': 'application/json', ...headers } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000, intervalMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
