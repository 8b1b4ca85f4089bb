import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A real https file host on 127.0.0.1 for the file URL tests (src/net/safe-file-fetch.ts). Its
 * certificate (test/support/fixtures/loopback-tls.*, self-signed, for tests only, never a secret)
 * names files.test, other.files.test, elsewhere.test and 127.0.0.1: the tests map those names to
 * 127.0.0.1 with an injected resolver and trust the certificate by `ca`.
 *
 * Routes: `/file/<name>?bytes=<n>` n bytes of "x" (with Content-Length unless `&chunked`);
 * `/redirect?to=<url>` a 302 to that URL; `/slow` headers, then nothing. Every request is recorded.
 */
export type FileHost = { port: number; ca: string; requests: Array<{ url: string; headers: Record<string, unknown> }>; urlFor(host: string, path: string): string; close(): Promise<void> };

const FIXTURES = join(__dirname, 'fixtures');

export async function startFileHost(): Promise<FileHost> {
  const ca = readFileSync(join(FIXTURES, 'loopback-tls.crt'), 'utf8');
  const requests: FileHost['requests'] = [];
  const server: Server = createServer({ key: readFileSync(join(FIXTURES, 'loopback-tls.key')), cert: ca }, (req, res) => {
    requests.push({ url: req.url ?? '', headers: { ...req.headers } });
    const url = new URL(req.url ?? '/', 'https://files.test');
    if (url.pathname.startsWith('/file/')) {
      const bytes = Buffer.alloc(Number(url.searchParams.get('bytes') ?? 16), 'x');
      res.writeHead(200, { 'content-type': 'application/octet-stream', ...(url.searchParams.has('chunked') ? {} : { 'content-length': String(bytes.length) }) });
      res.end(bytes);
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      return;
    }
    if (url.pathname === '/slow') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    ca,
    requests,
    urlFor: (host, path) => `https://${host}:${port}${path}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
