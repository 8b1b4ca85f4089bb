import type { WebClient } from '@slack/web-api';
import { downloadSlackFile, type SlackConversations, type SlackThreadMessage, type ThreadRead } from '../slack-conversations';
import type { SlackCallOptions } from '../slack-port';
import { boundedCall, type SlackRepliesLog } from './bounded-call';
import { toSlackApiError } from './slack-errors';

/** SlackConversations over a WebClient: a thread's earlier messages, and files shared in it. */
export class WebApiConversations implements SlackConversations {
  constructor(
    private readonly client: WebClient,
    private readonly options: { log?: SlackRepliesLog; /** SLACK_API_URL, when not Slack's: files on its origin may be fetched too (a local fake). */ apiUrl?: string } = {},
  ) {}

  async readThread(thread: { channel: string; threadTs: string; before: string }, limits: { maxPages: number; keepNewest: number }, options: SlackCallOptions = {}): Promise<ThreadRead> {
    let first: SlackThreadMessage | undefined;
    const newest: SlackThreadMessage[] = [];
    let read = 0;
    let cursor: string | undefined;
    for (let page = 0; page < limits.maxPages; page += 1) {
      let result;
      try {
        result = await boundedCall(
          'conversations.replies',
          () =>
            this.client.conversations.replies({
              channel: thread.channel,
              ts: thread.threadTs,
              // Only what came before the message being answered: never the message itself or later ones.
              latest: thread.before,
              inclusive: false,
              include_all_metadata: true,
              limit: THREAD_PAGE_SIZE,
              ...(cursor ? { cursor } : {}),
            }),
          options,
          this.options.log,
          // A read: safe to repeat after a server error (after no answer, the time is better left to the caller).
          { afterServerError: true },
        );
      } catch (error) {
        // The first page refused: no context. A later one: what was read still helps.
        if (page === 0) throw error;
        this.options.log?.warn('a later page of the thread could not be read; going on with what was read', { code: toSlackApiError(error, 'conversations.replies').code, pages: page });
        return { messages: first ? [first, ...newest] : newest, read, complete: false };
      }
      for (const raw of result.messages ?? []) {
        if (typeof raw.ts !== 'string' || compareTs(raw.ts, thread.before) >= 0) continue;
        const message = threadMessageOf(raw as Record<string, unknown> & { ts: string });
        read += 1;
        // Slack gives pages oldest first: keep the first message, and the newest in a rolling window.
        if (!first) first = message;
        else {
          newest.push(message);
          if (newest.length > limits.keepNewest) newest.shift();
        }
      }
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!cursor) return { messages: first ? [first, ...newest] : newest, read, complete: true };
    }
    return { messages: first ? [first, ...newest] : newest, read, complete: false };
  }

  async downloadFile(url: string, limits: { maxBytes: number; expectsHtml?: boolean }, options: SlackCallOptions = {}): Promise<Buffer> {
    return downloadSlackFile(url, this.client.token ?? '', { ...limits, ...(this.options.apiUrl ? { apiUrl: this.options.apiUrl } : {}) }, options);
  }
}

/** Only what the thread context reads of a message: a page holds up to 200, with all their blocks. */
function threadMessageOf(raw: Record<string, unknown> & { ts: string }): SlackThreadMessage {
  const text = (key: string) => (typeof raw[key] === 'string' ? (raw[key] as string) : undefined);
  const files = Array.isArray(raw.files) ? (raw.files as Array<{ name?: unknown; title?: unknown }>).map((file) => ({ ...(typeof file.name === 'string' ? { name: file.name } : {}), ...(typeof file.title === 'string' ? { title: file.title } : {}) })) : undefined;
  const metadata = raw.metadata as { event_type?: unknown } | undefined;
  const optional = { text: text('text'), user: text('user'), bot_id: text('bot_id'), subtype: text('subtype') };
  return {
    ts: raw.ts,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
    ...(files?.length ? { files } : {}),
    ...(typeof metadata?.event_type === 'string' ? { metadata: { event_type: metadata.event_type } } : {}),
  };
}

/** Slack timestamps ("seconds.micro") compared as numbers, whatever their lengths. */
export function compareTs(a: string, b: string): number {
  const [as = '0', am = ''] = a.split('.');
  const [bs = '0', bm = ''] = b.split('.');
  return Number(as) - Number(bs) || Number(am.padEnd(6, '0')) - Number(bm.padEnd(6, '0'));
}

/** Slack's recommended page size for `conversations.replies`. */
const THREAD_PAGE_SIZE = 200;

