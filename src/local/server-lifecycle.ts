import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts listening and resolves with "host:port" as clients should type it. */
export function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(`${shownHost}:${address.port}`);
    });
  });
}

export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Resolves once SIGINT or SIGTERM arrives and the servers have closed. */
export function stopOnSignals(servers: Server[], onStop: () => Promise<void> | void = () => undefined): Promise<void> {
  // Used by `zone serve` (its server) and `zone start` (the stack closes its own servers in onStop).
  return new Promise((resolve) => {
    const stop = async () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await Promise.all(servers.map(close));
      await onStop();
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Answers with `value` as JSON. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}
