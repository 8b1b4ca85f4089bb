import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../clock';
import { FileDownloadError, type SlackConversations, type SlackThreadMessage, type ThreadRead } from '../slack/slack-conversations';
import { REPLY_METADATA_TYPE } from '../slack/reply-metadata';
import type { ReactionTarget, ReplyMarker, SlackReplies } from '../slack/slack-port';
import { SlackApiError } from '../slack/slack-api-error';
import type { LiveCards, LiveMessage, LiveTask, LiveThread, SlackLive } from '../slack/slack-live';
import type { AgentSession, AgentSessionStatus, SlackAssistant, SuggestedPrompt } from '../slack/slack-assistant';
import { decodeFeedbackValue, type MessageBlock } from '../slack/feedback-blocks';
import type { SlackUploads } from '../slack/slack-uploads';
import { LocalUploads, type LocalUploadPolicy } from './console-slack-uploads';
import { LOCAL_BOT_USER_ID, slackTs } from './slack-event-builder';

/**
 * A posted reply; `requestId` names the task it answers (from the chunk's marker). A live message
 * (streamed or updated) changes its `text` as the answer grows; `streaming` while it does.
 */
export type RecordedReply = {
  channel: string;
  threadTs: string;
  text: string;
  ts: string;
  at: number;
  requestId?: string;
  streaming?: boolean;
  /** The feedback buttons' request id and agent, when the message carries them. */
  feedback?: { requestId: string; agent?: string };
  /** The buttons of its `actions` block (a question's), as clickable. */
  buttons?: LocalButton[];
  /** A stream's task cards, as Slack draws them: one per id, at its latest state; and the plan's title. */
  cards?: LiveTask[];
  planTitle?: string;
};

/** A message's button, as the playground offers it: its `action_id`, `value` and label. */
export type LocalButton = { actionId: string; value: string; label: string };

/** A thread's agent session as the local workspace shows it (docs/architecture.md §2.6). */
export type LocalSession = { channel: string; threadTs: string; status: AgentSessionStatus; title?: string; initiatorUserId?: string; at: number };
/** Something the agent surface showed one user, or offered them. */
export type LocalSurfaceEvent =
  | { type: 'prompts'; channel: string; prompts: SuggestedPrompt[]; title?: string; at: number }
  | { type: 'ephemeral'; channel: string; user: string; text: string; threadTs?: string; at: number }
  | { type: 'view'; triggerId: string; view: Record<string, unknown>; at: number };

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
export class ConsoleSlackReplies implements SlackReplies, SlackConversations, SlackLive, SlackAssistant, SlackUploads {
  readonly posted: RecordedReply[] = [];
  /** Thread statuses set, in order (`''` clears). */
  readonly statuses: Array<{ channel: string; threadTs: string; status: string; at: number }> = [];
  readonly reactions: Array<{ op: 'add' | 'remove'; name: string; timestamp: string }> = [];
  /** Each thread's agent session, as last set (key: channel and thread). */
  readonly sessions = new Map<string, LocalSession>();
  /** Prompts offered, ephemeral messages, modals opened, in order. */
  readonly surface: LocalSurfaceEvent[] = [];
  private readonly said: LocalMessage[] = [];
  private readonly files = new Map<string, { file: LocalFile; bytes: Buffer }>();

  constructor(
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
    private readonly clock: Clock = systemClock,
    /** Whom the replies are posted as (SLACK_BOT_USER_ID when set): the thread context knows the bot's replies by it. */
    private readonly botUserId: string = LOCAL_BOT_USER_ID,
    uploadPolicy: LocalUploadPolicy = {},
  ) {
    this.uploads = new LocalUploads({ now: () => this.clock.now(), keep: (file) => this.keepFile(file), print: (line) => this.write(line) }, uploadPolicy);
  }

  /** Files the agent's answers shared in threads (Slack's three upload calls: console-slack-uploads.ts). */
  private readonly uploads: LocalUploads;
  get sharedFiles() {
    return this.uploads.shared;
  }
  startUpload: SlackUploads['startUpload'] = (file) => this.uploads.startUpload(file);
  sendBytes: SlackUploads['sendBytes'] = (url, bytes) => this.uploads.sendBytes(url, bytes);
  share: SlackUploads['share'] = (file) => this.uploads.share(file);
  isShared: SlackUploads['isShared'] = (file) => this.uploads.isShared(file);

  async post({ channel, threadTs, text, marker, blocks }: { channel: string; threadTs: string; text: string; marker?: ReplyMarker; blocks?: readonly MessageBlock[] }): Promise<{ ts: string }> {
    const reply: RecordedReply = { channel, threadTs, text, ts: slackTs(), at: this.clock.now(), ...(marker ? { requestId: marker.requestId } : {}) };
    this.keepFeedback(reply, blocks);
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

  async startStream(stream: LiveThread & LiveCards & { markdownText?: string }): Promise<{ ts: string }> {
    const reply: RecordedReply = { channel: stream.channel, threadTs: stream.threadTs, text: stream.markdownText ?? '', ts: slackTs(), at: this.clock.now(), streaming: true };
    // The agent's steps; the working card (`task`) is what the playground's state chip already says.
    drawCards(reply, { ...(stream.tasks ? { tasks: stream.tasks } : {}), ...(stream.planTitle ? { planTitle: stream.planTitle } : {}) });
    this.posted.push(reply);
    return { ts: reply.ts };
  }

  async appendStream(message: LiveMessage, markdownText: string, options: LiveCards = {}): Promise<void> {
    const reply = this.live(message);
    if (!reply.streaming) throw new SlackApiError('chat.appendStream failed: message_not_in_streaming_state', 'message_not_in_streaming_state', false);
    drawCards(reply, options);
    reply.text += markdownText;
  }

  async stopStream(message: LiveMessage, options: { markdownText?: string; marker?: ReplyMarker; blocks?: readonly MessageBlock[]; sessionStatus?: AgentSessionStatus; tasks?: readonly LiveTask[] } = {}): Promise<void> {
    const reply = this.live(message);
    if (!reply.streaming) throw new SlackApiError('chat.stopStream failed: message_not_in_streaming_state', 'message_not_in_streaming_state', false);
    drawCards(reply, options.tasks ? { tasks: options.tasks } : {});
    reply.text += options.markdownText ?? '';
    reply.streaming = false;
    if (options.marker) reply.requestId = options.marker.requestId;
    this.keepFeedback(reply, options.blocks);
    if (options.sessionStatus) await this.setSessionStatus({ channel: reply.channel, threadTs: reply.threadTs, status: options.sessionStatus });
  }

  async update(message: LiveMessage, text: string, options: { marker?: ReplyMarker; blocks?: readonly MessageBlock[] } = {}): Promise<void> {
    const reply = this.live(message);
    const final = options.marker !== undefined;
    reply.text = text;
    this.keepFeedback(reply, options.blocks);
    if (final) {
      reply.requestId = options.marker!.requestId;
      reply.streaming = false;
      this.write(`\n💬 reply in ${reply.channel} (thread ${reply.threadTs}):\n${text.replace(/^/gm, '   ')}\n`);
    }
  }

  async setSessionStatus(session: AgentSession & { status: AgentSessionStatus; title?: string; initiatorUserId?: string }): Promise<void> {
    const key = `${session.channel}#${session.threadTs}`;
    const existing = this.sessions.get(key);
    // As Slack does: the title and initiator count only when the call creates the session.
    this.sessions.set(key, { channel: session.channel, threadTs: session.threadTs, status: session.status, at: this.clock.now(), ...(existing?.title ?? session.title ? { title: existing?.title ?? session.title } : {}), ...(existing?.initiatorUserId ?? session.initiatorUserId ? { initiatorUserId: existing?.initiatorUserId ?? session.initiatorUserId } : {}) });
    if (session.status === 'processing') this.write(`\n⏳ agent session ${existing ? '' : `"${session.title ?? ''}" `}processing (thread ${session.threadTs}; Stop: npx zone say --stop --thread ${session.threadTs})`);
  }

  async setSuggestedPrompts(target: { channel: string; prompts: readonly SuggestedPrompt[]; title?: string }): Promise<void> {
    if (target.prompts.length > 4) throw new SlackApiError('assistant.threads.setSuggestedPrompts failed: invalid_arguments', 'invalid_arguments', false);
    this.surface.push({ type: 'prompts', channel: target.channel, prompts: [...target.prompts], ...(target.title ? { title: target.title } : {}), at: this.clock.now() });
  }

  async postEphemeral(message: { channel: string; user: string; text: string; threadTs?: string }): Promise<void> {
    this.surface.push({ type: 'ephemeral', channel: message.channel, user: message.user, text: message.text, ...(message.threadTs ? { threadTs: message.threadTs } : {}), at: this.clock.now() });
    this.write(`\n👤 only ${message.user} sees: ${message.text}`);
  }

  async openView(view: { triggerId: string; view: Record<string, unknown> }): Promise<void> {
    this.surface.push({ type: 'view', triggerId: view.triggerId, view: view.view, at: this.clock.now() });
  }

  /** The session of a thread, if one was set. */
  session(channel: string, threadTs: string): LocalSession | undefined {
    return this.sessions.get(`${channel}#${threadTs}`);
  }

  private keepFeedback(reply: RecordedReply, blocks: readonly MessageBlock[] | undefined): void {
    const feedback = feedbackTargetOf(blocks);
    if (feedback) reply.feedback = feedback;
    // As on Slack: new blocks replace the message's buttons (a question answered loses them); no blocks keep them.
    if (!blocks) return;
    const buttons = buttonsOf(blocks);
    if (buttons.length) reply.buttons = buttons;
    else delete reply.buttons;
  }

  private live(message: LiveMessage): RecordedReply {
    const reply = this.posted.find((posted) => posted.channel === message.channel && posted.ts === message.ts);
    if (!reply) throw new SlackApiError('message_not_found', 'message_not_found', false);
    return reply;
  }

  /** Keeps a file for download; `baseUrl` is where the local stack serves it. */
  shareFile(file: { name: string; mimetype: string; bytes: Buffer }, baseUrl: string): LocalFile {
    return this.keepFile({ id: `F${randomBytes(5).toString('hex').toUpperCase()}`, ...file }, baseUrl);
  }

  /** Keeps a file's bytes under its id, for `/api/files/<id>/<name>` (relative to the local stack without `baseUrl`). */
  private keepFile({ id, ...file }: { id: string; name: string; mimetype: string; bytes: Buffer }, baseUrl = ''): LocalFile {
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

  /** A shared file's media type by its id (what the playground's image preview is served as). */
  fileMimetype(id: string): string | undefined {
    return this.files.get(id)?.file.mimetype;
  }

  async readThread(thread: { channel: string; threadTs: string; before: string }): Promise<ThreadRead> {
    const inThread = (channel: string, ts: string, threadTs: string | undefined) => channel === thread.channel && (ts === thread.threadTs || threadTs === thread.threadTs) && ts < thread.before;
    const people: SlackThreadMessage[] = this.said
      .filter((m) => inThread(m.channel, m.ts, m.thread_ts))
      .map((m) => ({ ts: m.ts, user: m.user, text: m.text, ...(m.files?.length ? { files: m.files } : {}) }));
    const bot: SlackThreadMessage[] = this.posted
      .filter((reply) => inThread(reply.channel, reply.ts, reply.threadTs))
      .map((reply) => ({ ts: reply.ts, user: this.botUserId, bot_id: 'BLOCALBOT', text: reply.text, metadata: { event_type: REPLY_METADATA_TYPE } }));
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

/** The answer a message's feedback buttons name, read back from their value (src/slack/feedback-blocks.ts). */
function feedbackTargetOf(blocks: readonly MessageBlock[] | undefined): { requestId: string; agent?: string } | undefined {
  for (const block of blocks ?? []) {
    for (const element of (block.elements as Array<{ type?: string; positive_button?: { value?: string } }> | undefined) ?? []) {
      if (element.type !== 'feedback_buttons') continue;
      const value = decodeFeedbackValue(element.positive_button?.value);
      if (value) return { requestId: value.requestId, ...(value.agent ? { agent: value.agent } : {}) };
    }
  }
  return undefined;
}

/** The buttons of a message's `actions` blocks. */
function buttonsOf(blocks: readonly MessageBlock[]): LocalButton[] {
  return blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => (block.elements as Array<{ type?: string; action_id?: string; value?: string; text?: { text?: string } }> | undefined) ?? [])
    .filter((element) => element.type === 'button' && element.action_id && element.value)
    .map((element) => ({ actionId: element.action_id!, value: element.value!, label: element.text?.text ?? '' }));
}

/** A stream's cards as Slack draws them: a card per id, changed by a later one with the same id. */
function drawCards(reply: RecordedReply, { tasks = [], planTitle }: LiveCards): void {
  if (!tasks.length && !planTitle) return;
  const cards = [...(reply.cards ?? [])];
  for (const task of tasks) {
    const at = cards.findIndex((card) => card.id === task.id);
    if (at < 0) cards.push({ ...task });
    else cards[at] = { ...task };
  }
  reply.cards = cards;
  if (planTitle) reply.planTitle = planTitle;
}
