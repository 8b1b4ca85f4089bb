import { lookup as dnsLookup } from 'node:dns/promises';
import { request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './public-address';

/**
 * Fetches a file an agent named by URL (docs/contract.md, "Files"), as safely as a fetch on a
 * stranger's say-so can be:
 * - https only, and only from hosts on the operator's allow-list (FILE_URL_ALLOWLIST);
 * - redirects followed by hand (at most three), each target checked again, so none leaves the list;
 * - the address connected to is checked, not only the name: every address the name resolves to
 *   must be public (public-address.ts), and the socket connects to the checked one — a name that
 *   resolves to 10.0.0.5 or to the metadata service is refused, and DNS cannot change its answer
 *   between the check and the connection;
 * - the size capped while reading (a declared Content-Length over it is refused before any byte),
 *   one timeout for the whole fetch, redirects included;
 * - no credentials: the request carries no Authorization, no cookie — the bot token never goes to
 *   such a host.
 */

/** Why a file could not be fetched; `message` is for the log, `reason` picks the line the thread shows. */
export class FileFetchError extends Error {
  override readonly name = 'FileFetchError';
  constructor(
    readonly reason: 'not-allowed' | 'too-large' | 'timed-out' | 'failed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The hosts files may be fetched from: FILE_URL_ALLOWLIST, comma-separated. `files.example.com`
 * is that host alone; `*.example.com` is any host under example.com (not example.com itself).
 * Empty: no host, so every URL file is refused.
 */
export type HostAllowlist = { hosts: ReadonlySet<string>; suffixes: readonly string[] };

export function parseHostAllowlist(value: string | undefined): HostAllowlist {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase().replace(/\.$/, ''))
    .filter(Boolean);
  for (const entry of entries) {
    if (!/^(\*\.)?[a-z0-9.:[\]-]+$/.test(entry)) throw new Error(`FILE_URL_ALLOWLIST: "${entry}" is not a host name (use files.example.com or *.example.com)`);
  }
  return { hosts: new Set(entries.filter((entry) => !entry.startsWith('*.'))), suffixes: entries.filter((entry) => entry.startsWith('*.')).map((entry) => entry.slice(1)) };
}

export function isAllowedFileUrl(url: URL, allowlist: HostAllowlist): boolean {
  if (url.protocol !== 'https:' || url.username || url.password) return false;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  return allowlist.hosts.has(host) || allowlist.suffixes.some((suffix) => host.endsWith(suffix));
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export type SafeFetchOptions = {
  allowlist: HostAllowlist;
  maxBytes: number;
  /** The whole fetch, redirects included; keep it below the caller's remaining time. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** How names become addresses; the system resolver unless a test gives another. */
  resolve?: Resolver;
  /** Tests only: let loopback and private addresses through (a test server on 127.0.0.1). */
  allowPrivateAddresses?: boolean;
  /** Tests only: the certificate authority of a loopback test server. */
  ca?: string | Buffer;
};

const MAX_REDIRECTS = 3;

/** The file's bytes, held once; throws a FileFetchError. */
export async function fetchAllowedFile(rawUrl: string, options: SafeFetchOptions): Promise<Buffer> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let url = parsed(rawUrl);
  try {
    for (let redirects = 0; ; redirects += 1) {
      if (!isAllowedFileUrl(url, options.allowlist)) throw new FileFetchError('not-allowed', `${url.protocol}//${url.host} is not an allowed https host (FILE_URL_ALLOWLIST)`);
      const response = await get(url, options, signal);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        response.resume();
        const location = response.headers.location;
        if (!location || redirects >= MAX_REDIRECTS) throw new FileFetchError('failed', `too many redirects or none to follow (HTTP ${status})`);
        url = parsed(location, url);
        continue;
      }
      if (status < 200 || status >= 300) {
        response.resume();
        throw new FileFetchError('failed', `HTTP ${status}`);
      }
      return await readAtMost(response, options.maxBytes);
    }
  } catch (error) {
    if (error instanceof FileFetchError) throw error;
    if (timeout.aborted) throw new FileFetchError('timed-out', `no complete answer within ${options.timeoutMs} ms`, { cause: error });
    if (options.signal?.aborted) throw new FileFetchError('timed-out', 'the caller ran out of time', { cause: error });
    throw new FileFetchError('failed', (error as Error).message, { cause: error });
  }
}

function parsed(value: string, base?: URL): URL {
  try {
    return new URL(value, base);
  } catch {
    throw new FileFetchError('not-allowed', 'not a URL');
  }
}

/** One GET with no credentials, connected only to a checked address. */
async function get(url: URL, options: SafeFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address is never looked up, so it is checked here; a name is checked as it resolves.
  if (isIP(host) && !options.allowPrivateAddresses && !isPublicAddress(host)) throw new FileFetchError('not-allowed', `${host} is not a public address`);
  const requestOptions: RequestOptions = {
    method: 'GET',
    headers: { accept: '*/*', 'user-agent': 'slack-agent-gateway file fetch' },
    lookup: checkedLookup(options),
    signal,
    agent: false,
    ...(options.ca ? { ca: options.ca } : {}),
  };
  return new Promise<IncomingMessage>((resolve, reject) => {
    const sent = request(url, requestOptions, resolve);
    sent.on('error', reject);
    sent.end();
  });
}

/** A lookup for the socket: resolves the name, refuses it if any address is not public, hands over the checked ones. */
function checkedLookup(options: SafeFetchOptions): LookupFunction {
  const resolve = options.resolve ?? ((hostname: string) => dnsLookup(hostname, { all: true, verbatim: true }));
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = options.allowPrivateAddresses ? undefined : addresses.find(({ address }) => !isPublicAddress(address));
        if (refused || addresses.length === 0) {
          callback(new FileFetchError('not-allowed', refused ? `${hostname} resolves to ${refused.address}, not a public address` : `${hostname} has no address`), '', 0);
          return;
        }
        if ((lookupOptions as { all?: boolean }).all) (callback as unknown as (error: null, all: typeof addresses) => void)(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

async function readAtMost(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (declared > maxBytes) {
    response.destroy();
    throw new FileFetchError('too-large', `${declared} bytes, more than ${maxBytes}`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      response.destroy();
      throw new FileFetchError('too-large', `more than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}
