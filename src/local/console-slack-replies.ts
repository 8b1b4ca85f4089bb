import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../clock';
import { FileDownloadError, type SlackConversations, type SlackThreadMessage, type ThreadRead } from '../slack/slack-conversations';
import { REPLY_METADATA_TYPE } from '../slack/reply-metadata';
import type { ReactionTarget, ReplyMarker, SlackReplies } from '../slack/slack-replies';
import { SlackApiError } from '../slack/slack-api-error';
import type { LiveMessage, LiveThread, SlackLive } from '../slack/slack-live';
import { LOCAL_BOT_USER_ID, slackTs } from './slack-event-builder';

/**
 * A posted reply; `requestId` names the task it answers (from the chunk's marker). A live message
 * (streamed or updated) changes its `text` as the answer grows; `streaming` while it does.
 */
export type RecordedReply = { channel: string; threadTs: string; text: string; ts: string; at: number; requestId?: string; streaming?: boolean };

/** A file shared in the local workspace, as Slack describes it in a message event. */
export type LocalFile = { id: string; name: string; mimetype: string; filetype: string; size: number; url_private_download: string };

/** What someone said in the local workspace (recorded by the local stack from the events it accepted). */
export type LocalMessage = { channel: string; ts: string; thread_ts?: string; user: string; text: string; files?: ReadonlyArray<{ name: string }> };

/** Messages the local workspace remembers at most; the oldest goes first. */
const MAX_MESSAGES = 10_000;
/** Files kept for local downloads at most; the oldest goes first. */
const MAX_FILES = 200;

/**
 * Where replies go locally when no SLACK_BOT_TOKEN is set: printed to the terminal and kept for
 * the playground page, with the same interface as the Slack Web API adapter. It is the local
 * stand-in for the workspace too: it remembers what people said (the local stack records each
 * accepted event) and the files shared through the playground or `zone say --file`, so thread
 * context and attachments work locally as they do in Slack.
 */
export class ConsoleSlackReplies implements SlackReplies, SlackConversations, SlackLive {
  readonly posted: RecordedReply[] = [];
  /** Thread statuses set, in order (`''` clears). */
  readonly statuses: Array<{ channel: string; threadTs: string; status: string; at: number }> = [];
  readonly reactions: Array<{ op: 'add' | 'remove'; name: string; timestamp: string }> = [];
  private readonly said: LocalMessage[] = [];
  private readonly files = new Map<string, { file: LocalFile; bytes: Buffer }>();

  constructor(
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
    private readonly clock: Clock = systemClock,
  ) {}

  async post({ channel, threadTs, text, marker }: { channel: string; threadTs: string; text: string; marker?: ReplyMarker }): Promise<{ ts: string }> {
    const reply: RecordedReply = { channel, threadTs, text, ts: slackTs(), at: this.clock.now(), ...(marker ? { requestId: marker.requestId } : {}) };
    this.posted.push(reply);
    this.write(`\n💬 reply in ${channel} (thread ${threadTs}):\n${text.replace(/^/gm, '   ')}\n`);
    return { ts: reply.ts };
  }

  async addReaction(target: ReactionTarget): Promise<void> {
    this.reactions.push({ op: 'add', name: target.name, timestamp: target.timestamp });
  }

  async removeReaction(target: ReactionTarget): Promise<void> {
    this.reactions.push({ op: 'remove', name: target.name, timestamp: target.timestamp });
  }

  /** Remembers a message someone sent, so a later message in its thread sees it. */
  recordMessage(message: LocalMessage): void {
    if (this.said.length >= MAX_MESSAGES) this.said.shift();
    this.said.push(message);
  }

  async setStatus(thread: LiveThread, status: string): Promise<void> {
    this.statuses.push({ ...thread, status, at: this.clock.now() });
    if (status) this.write(`\n⏳ assistant ${status} (thread ${thread.threadTs})`);
  }

  async startStream(stream: LiveThread & { markdownText?: string }): Promise<{ ts: string }> {
    const reply: RecordedReply = { channel: stream.channel, threadTs: stream.threadTs, text: stream.markdownText ?? '', ts: slackTs(), at: this.clock.now(), streaming: true };
    this.posted.push(reply);
    return { ts: reply.ts };
  }

  async appendStream(message: LiveMessage, markdownText: string): Promise<void> {
    const reply = this.live(message);
    if (!reply.streaming) throw new SlackApiError('chat.appendStream failed: message_not_in_streaming_state', 'message_not_in_streaming_state', false);
    reply.text += markdownText;
  }

  async stopStream(message: LiveMessage, options: { markdownText?: string; marker?: ReplyMarker } = {}): Promise<void> {
    const reply = this.live(message);
    if (!reply.streaming) throw new SlackApiError('chat.stopStream failed: message_not_in_streaming_state', 'message_not_in_streaming_state', false);
    reply.text += options.markdownText ?? '';
    reply.streaming = false;
    if (options.marker) reply.requestId = options.marker.requestId;
  }

  async update(message: LiveMessage, text: string, options: { marker?: ReplyMarker } = {}): Promise<void> {
    const reply = this.live(message);
    const final = options.marker !== undefined;
    reply.text = text;
    if (final) {
      reply.requestId = options.marker!.requestId;
      reply.streaming = false;
      this.write(`\n💬 reply in ${reply.channel} (thread ${reply.threadTs}):\n${text.replace(/^/gm, '   ')}\n`);
    }
  }

  private live(message: LiveMessage): RecordedReply {
    const reply = this.posted.find((posted) => posted.channel === message.channel && posted.ts === message.ts);
    if (!reply) throw new SlackApiError('message_not_found', 'message_not_found', false);
    return reply;
  }

  /** Keeps a file for download; `baseUrl` is where the local stack serves it. */
  shareFile(file: { name: string; mimetype: string; bytes: Buffer }, baseUrl: string): LocalFile {
    const id = `F${randomBytes(5).toString('hex').toUpperCase()}`;
    const filetype = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase() ?? '';
    const shared: LocalFile = { id, name: file.name, mimetype: file.mimetype, filetype, size: file.bytes.length, url_private_download: `${baseUrl}/api/files/${id}/${encodeURIComponent(file.name)}` };
    if (this.files.size >= MAX_FILES) this.files.delete(this.files.keys().next().value!);
    this.files.set(id, { file: shared, bytes: file.bytes });
    return shared;
  }

  /** A shared file's bytes by its id. */
  fileBytes(id: string): Buffer | undefined {
    return this.files.get(id)?.bytes;
  }

  async readThread(thread: { channel: string; threadTs: string; before: string }): Promise<ThreadRead> {
    const inThread = (channel: string, ts: string, threadTs: string | undefined) => channel === thread.channel && (ts === thread.threadTs || threadTs === thread.threadTs) && ts < thread.before;
    const people: SlackThreadMessage[] = this.said
      .filter((m) => inThread(m.channel, m.ts, m.thread_ts))
      .map((m) => ({ ts: m.ts, user: m.user, text: m.text, ...(m.files?.length ? { files: m.files } : {}) }));
    const bot: SlackThreadMessage[] = this.posted
      .filter((reply) => inThread(reply.channel, reply.ts, reply.threadTs))
      .map((reply) => ({ ts: reply.ts, user: LOCAL_BOT_USER_ID, text: reply.text, metadata: { event_type: REPLY_METADATA_TYPE } }));
    const messages = [...people, ...bot].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    return { messages, read: messages.length, complete: true };
  }

  async downloadFile(url: string, limits: { maxBytes: number }): Promise<Buffer> {
    const id = /\/api\/files\/(F[0-9A-F]+)\//.exec(url)?.[1];
    const bytes = id ? this.fileBytes(id) : undefined;
    if (!bytes) throw new FileDownloadError('not-found', 'no such local file');
    if (bytes.length > limits.maxBytes) throw new FileDownloadError('too-large', `more than ${limits.maxBytes} bytes`);
    return bytes;
  }
}
