import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { downloadSlackFile, FileDownloadError, isSlackFileUrl, type FileDownloadFailure } from '../../src/slack/slack-conversations';
import { closeServer, listenOnLoopback } from '../support/http';

const TOKEN = 'xoxb-test-token';
const FILE = Buffer.from('%PDF-1.4 the file bytes');
const LOGIN_PAGE = '<!DOCTYPE html>\n<html><head><title>Slack</title></head><body>Sign in to Slack</body></html>';

type Seen = { path: string; authorization: string | undefined };

/** A loopback HTTP server playing files.slack.com, recording what it was asked and with which credentials. */
function recordingServer(route: (req: IncomingMessage, res: ServerResponse) => void): { server: Server; seen: Seen[] } {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    route(req, res);
  });
  return { server, seen };
}

let slack: { server: Server; seen: Seen[] };
let other: { server: Server; seen: Seen[] };
let origin: string;
let otherOrigin: string;
let apiUrl: string;

beforeAll(async () => {
  other = recordingServer((_req, res) => res.end('should never be asked'));
  otherOrigin = await listenOnLoopback(other.server);
  slack = recordingServer((req, res) => {
    const path = req.url ?? '';
    switch (path) {
      case '/files/report.pdf':
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': FILE.length });
        return res.end(FILE);
      case '/redirect/same':
        res.writeHead(302, { location: '/files/report.pdf' });
        return res.end();
      case '/redirect/absolute-same':
        res.writeHead(301, { location: `${origin}/files/report.pdf` });
        return res.end();
      case '/redirect/other-port':
        res.writeHead(302, { location: `${otherOrigin}/files/report.pdf` });
        return res.end();
      case '/redirect/evil':
        res.writeHead(307, { location: 'https://evil.example/steal' });
        return res.end();
      case '/redirect/loop':
        res.writeHead(302, { location: '/redirect/loop' });
        return res.end();
      case '/redirect/nowhere':
        res.writeHead(302);
        return res.end();
      case '/status/404':
      case '/status/410':
      case '/status/401':
      case '/status/403':
      case '/status/500':
        res.writeHead(Number(path.split('/').pop()), { 'content-type': 'text/plain' });
        return res.end('no');
      case '/login':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(LOGIN_PAGE);
      case '/big/declared':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 2000 });
        return res.end(Buffer.alloc(2000, 1));
      case '/big/chunked': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let chunk = 0; chunk < 10; chunk += 1) res.write(Buffer.alloc(200, chunk));
        return res.end();
      }
      case '/exact':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.alloc(500, 7));
      case '/hang':
        return; // never answers
      default:
        res.writeHead(404);
        return res.end();
    }
  });
  origin = await listenOnLoopback(slack.server);
  apiUrl = `${origin}/api/`;
});

afterAll(async () => {
  await closeServer(slack.server);
  await closeServer(other.server);
});

beforeEach(() => {
  slack.seen.length = 0;
  other.seen.length = 0;
});

const download = (path: string, limits: { maxBytes?: number; expectsHtml?: boolean } = {}, options: { deadline?: number; signal?: AbortSignal } = {}) =>
  downloadSlackFile(path.startsWith('http') ? path : `${origin}${path}`, TOKEN, { maxBytes: limits.maxBytes ?? 10_000, apiUrl, ...(limits.expectsHtml ? { expectsHtml: true } : {}) }, options);

async function failure(promise: Promise<unknown>): Promise<FileDownloadFailure> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FileDownloadError);
  return (error as FileDownloadError).reason;
}

describe('isSlackFileUrl', () => {
  it('allows Slack\'s file hosts over https only', () => {
    expect(isSlackFileUrl(new URL('https://files.slack.com/files-pri/T1-F1/download/a.png'))).toBe(true);
    // Only Slack's file hosts: a workspace's own subdomain, or api.slack.com, is no file host.
    expect(isSlackFileUrl(new URL('https://acme.slack.com/files/U1/F1/a.png'))).toBe(false);
    expect(isSlackFileUrl(new URL('https://files-edu.slack.com/files-pri/T1-F1/a.png'))).toBe(true);
    expect(isSlackFileUrl(new URL('https://files.slack-gov.com/files-pri/T1-F1/a.png'))).toBe(true);
    expect(isSlackFileUrl(new URL('http://files.slack.com/files-pri/T1-F1/a.png'))).toBe(false);
    expect(isSlackFileUrl(new URL('https://evil.example/a.png'))).toBe(false);
    expect(isSlackFileUrl(new URL('https://files.slack.com.evil.example/a.png'))).toBe(false);
    expect(isSlackFileUrl(new URL('https://notslack.com/a.png'))).toBe(false);
  });

  it('allows the configured loopback API origin, and no other port or host', () => {
    expect(isSlackFileUrl(new URL(`${origin}/files/report.pdf`), apiUrl)).toBe(true);
    expect(isSlackFileUrl(new URL(`${otherOrigin}/files/report.pdf`), apiUrl)).toBe(false);
    expect(isSlackFileUrl(new URL(`${origin}/files/report.pdf`))).toBe(false);
    expect(isSlackFileUrl(new URL('https://evil.example/a'), apiUrl)).toBe(false);
  });

  it('does not allow plain http to a configured API that is not loopback', () => {
    expect(isSlackFileUrl(new URL('http://slack-fake.internal/files/a'), 'http://slack-fake.internal/api/')).toBe(false);
    expect(isSlackFileUrl(new URL('https://slack-fake.internal/files/a'), 'https://slack-fake.internal/api/')).toBe(true);
  });
});

describe('downloadSlackFile', () => {
  it('fetches the bytes with the bot token as a bearer credential', async () => {
    const bytes = await download('/files/report.pdf');
    expect(bytes.equals(FILE)).toBe(true);
    expect(slack.seen).toEqual([{ path: '/files/report.pdf', authorization: `Bearer ${TOKEN}` }]);
  });

  it('refuses a host that is not Slack\'s without sending anything', async () => {
    expect(await failure(download('https://evil.example/file'))).toBe('not-allowed-url');
    expect(await failure(download(`${otherOrigin}/files/report.pdf`))).toBe('not-allowed-url');
    expect(other.seen).toEqual([]);
    expect(slack.seen).toEqual([]);
  });

  it('refuses something that is not a URL', async () => {
    expect(await failure(downloadSlackFile('not a url', TOKEN, { maxBytes: 100, apiUrl }))).toBe('not-allowed-url');
  });

  it.each([['a relative', '/redirect/same'], ['an absolute', '/redirect/absolute-same']])('follows %s redirect to the same allowed origin, with the token', async (_label, path) => {
    const bytes = await download(path);
    expect(bytes.equals(FILE)).toBe(true);
    expect(slack.seen).toEqual([
      { path, authorization: `Bearer ${TOKEN}` },
      { path: '/files/report.pdf', authorization: `Bearer ${TOKEN}` },
    ]);
  });

  it('refuses a redirect to another origin and sends it no request (so no token)', async () => {
    expect(await failure(download('/redirect/other-port'))).toBe('not-allowed-url');
    expect(other.seen).toEqual([]);
    expect(await failure(download('/redirect/evil'))).toBe('not-allowed-url');
  });

  it('gives up after three redirects, and on a redirect without a location', async () => {
    expect(await failure(download('/redirect/loop'))).toBe('failed');
    expect(slack.seen).toHaveLength(4);
    expect(await failure(download('/redirect/nowhere'))).toBe('failed');
  });

  it.each<[string, FileDownloadFailure]>([
    ['/status/404', 'not-found'],
    ['/status/410', 'not-found'],
    ['/status/401', 'refused'],
    ['/status/403', 'refused'],
    ['/status/500', 'failed'],
  ])('maps %s to %s', async (path, reason) => {
    expect(await failure(download(path))).toBe(reason);
  });

  it('refuses an HTML page served for a file that is not HTML (Slack\'s sign-in page)', async () => {
    expect(await failure(download('/login'))).toBe('refused');
  });

  it('takes an HTML answer when the file is HTML', async () => {
    const bytes = await download('/login', { expectsHtml: true });
    expect(bytes.toString('utf8')).toBe(LOGIN_PAGE);
  });

  it('refuses a body larger than maxBytes, declared by content-length', async () => {
    expect(await failure(download('/big/declared', { maxBytes: 1000 }))).toBe('too-large');
  });

  it('refuses a body larger than maxBytes without content-length, as it streams', async () => {
    expect(await failure(download('/big/chunked', { maxBytes: 1000 }))).toBe('too-large');
    const whole = await download('/big/chunked', { maxBytes: 2000 });
    expect(whole).toHaveLength(2000);
    expect(whole[1999]).toBe(9);
  });

  it('takes a body of exactly maxBytes', async () => {
    expect(await download('/exact', { maxBytes: 500 })).toHaveLength(500);
  });

  it('times out on a server that never answers', async () => {
    expect(await failure(download('/hang', {}, { deadline: Date.now() + 200 }))).toBe('timed-out');
  });

  it('times out when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = download('/hang', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await failure(pending)).toBe('timed-out');
  });

  it('does not start when the deadline has passed', async () => {
    expect(await failure(download('/files/report.pdf', {}, { deadline: Date.now() - 1 }))).toBe('timed-out');
    expect(slack.seen).toEqual([]);
  });
});
