import { systemClock } from '../clock';
import { isLoopbackUrl } from '../net/loopback';
import type { SlackCallOptions } from './slack-port';

/**
 * Reading a conversation back: a thread's earlier messages and the files shared in it. Only the
 * agent-invoker reads (never the ack path); what it reads crosses to the execution zone as text and
 * bytes, never as a Slack URL or token (docs/contract.md, "Thread context", "Attachments").
 */

/** One message of a thread as `conversations.replies` returns it (the fields read here). */
export type SlackThreadMessage = {
  ts: string;
  text?: string;
  user?: string;
  bot_id?: string;
  subtype?: string;
  files?: ReadonlyArray<{ name?: string; title?: string }>;
  metadata?: { event_type?: string };
};

export type ThreadRead = {
  /**
   * Oldest first, all before `before`: the thread's first message and the newest `keepNewest`
   * read (everything, when the thread is that short).
   */
  messages: SlackThreadMessage[];
  /** Messages read in all, kept or not. */
  read: number;
  /**
   * False when the read stopped before the end of the thread — the page limit, or a later page
   * Slack refused — so the newest messages kept are not the thread's newest.
   */
  complete: boolean;
};

export interface SlackConversations {
  /**
   * The messages of the thread `threadTs` older than `before` (the current message), read with
   * `conversations.replies` in pages of 200 (oldest first, as Slack gives them), at most
   * `maxPages` of them, keeping the first and the newest `keepNewest` (only the fields read
   * here). Throws a SlackApiError when Slack refuses the first page; a later page refused ends the
   * read with what it has (`complete: false`).
   */
  readThread(thread: { channel: string; threadTs: string; before: string }, limits: { maxPages: number; keepNewest: number }, options?: SlackCallOptions): Promise<ThreadRead>;
  /**
   * The bytes of a file Slack hosts (`url_private_download`), fetched with the bot token, at most
   * `maxBytes`. Throws a FileDownloadError.
   */
  downloadFile(url: string, limits: { maxBytes: number; expectsHtml?: boolean }, options?: SlackCallOptions): Promise<Buffer>;
}

export type FileDownloadFailure = 'not-allowed-url' | 'not-found' | 'refused' | 'too-large' | 'timed-out' | 'failed';

export class FileDownloadError extends Error {
  override name = 'FileDownloadError';
  constructor(
    readonly reason: FileDownloadFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Slack serves files from these hosts; the bot token is sent to no other (except the configured API's own host, for a local fake). */
const SLACK_FILE_HOSTS = [/^files(-origin|-edu)?\.slack\.com$/, /^files(-origin)?\.slack-gov\.com$/];
const MAX_REDIRECTS = 3;
/** One download never waits longer than this, whatever the deadline. */
const DOWNLOAD_TIMEOUT_MS = 30_000;

/** Whether the bot token may be sent to `url`: https on a Slack file host, or the configured Slack API's own origin (a loopback fake). */
export function isSlackFileUrl(url: URL, apiUrl?: string): boolean {
  if (url.protocol === 'https:' && SLACK_FILE_HOSTS.some((host) => host.test(url.hostname))) return true;
  if (!apiUrl) return false;
  const api = new URL(apiUrl);
  return url.origin === api.origin && (url.protocol === 'https:' || isLoopbackUrl(url));
}

/**
 * Downloads a Slack-hosted file with the bot token. Redirects are followed by hand (at most three)
 * so the token goes only to Slack's file hosts. An answer in HTML for a URL Slack should serve as a
 * file is Slack's login page — the token was not accepted, or the app lacks `files:read` — and is
 * refused here rather than passed on as the file.
 */
export async function downloadSlackFile(rawUrl: string, token: string, limits: { maxBytes: number; apiUrl?: string; /** An HTML file may answer in HTML. */ expectsHtml?: boolean }, options: SlackCallOptions = {}): Promise<Buffer> {
  const remaining = options.deadline === undefined ? DOWNLOAD_TIMEOUT_MS : Math.min(DOWNLOAD_TIMEOUT_MS, options.deadline - systemClock.now());
  if (remaining <= 0) throw new FileDownloadError('timed-out', 'no time left to download the file');
  const timeout = AbortSignal.timeout(remaining);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new FileDownloadError('not-allowed-url', 'the file URL is not a URL');
  }
  try {
    for (let redirects = 0; ; redirects += 1) {
      if (!isSlackFileUrl(url, limits.apiUrl)) throw new FileDownloadError('not-allowed-url', `refusing to send the bot token to ${url.host}`);
      const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` }, redirect: 'manual', signal });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get('location');
        if (!location || redirects >= MAX_REDIRECTS) throw new FileDownloadError('failed', `too many redirects or none to follow (HTTP ${response.status})`);
        url = new URL(location, url);
        continue;
      }
      if (response.status === 404 || response.status === 410) throw await drained(response, new FileDownloadError('not-found', `HTTP ${response.status}`));
      if (response.status === 401 || response.status === 403) throw await drained(response, new FileDownloadError('refused', `HTTP ${response.status}`));
      if (!response.ok) throw await drained(response, new FileDownloadError('failed', `HTTP ${response.status}`));
      const declared = Number(response.headers.get('content-length') ?? NaN);
      if (declared > limits.maxBytes) throw await drained(response, new FileDownloadError('too-large', `${declared} bytes`));
      const contentType = (response.headers.get('content-type') ?? '').toLowerCase();
      const bytes = await readAtMost(response, limits.maxBytes);
      if (!limits.expectsHtml && contentType.startsWith('text/html') && looksLikeSlackLoginPage(bytes)) throw new FileDownloadError('refused', 'Slack answered with its sign-in page');
      return bytes;
    }
  } catch (error) {
    if (error instanceof FileDownloadError) throw error;
    if (timeout.aborted) throw new FileDownloadError('timed-out', `no complete answer within ${remaining} ms`, { cause: error });
    if (options.signal?.aborted) throw new FileDownloadError('timed-out', 'the caller ran out of time', { cause: error });
    throw new FileDownloadError('failed', (error as Error).message, { cause: error });
  }
}

async function drained(response: Response, error: FileDownloadError): Promise<FileDownloadError> {
  await response.body?.cancel().catch(() => undefined);
  return error;
}

async function readAtMost(response: Response, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new FileDownloadError('too-large', `more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/** Slack's sign-in page, which it serves (HTTP 200) for a file URL fetched without a usable token. */
function looksLikeSlackLoginPage(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 4096).toString('utf8').toLowerCase();
  return head.includes('<html') || head.includes('<!doctype html');
}
