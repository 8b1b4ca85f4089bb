import type { ChatStartStreamArguments } from '@slack/web-api';
import { SlackApiError } from '../slack-api-error';
import type { MessageBlock } from '../feedback-blocks';
import type { AgentSessionStatus } from '../slack-assistant';
import { STREAM_MARKDOWN_LIMIT, type LiveCards, type LiveMessage, type LiveTask, type LiveThread, type SlackLive } from '../slack-live';
import type { ReplyMarker, SlackCallOptions, SlackPersona } from '../slack-port';
import { WebApiPort } from './web-api-port';
import { personaArguments, replyMetadata, withTextSection } from './replies';
import { toSlackApiError } from './slack-errors';
import { systemClock } from '../../clock';
import { compareTs } from './conversations';

/** How far before a start its stream is looked for: Slack's clock and ours may differ by seconds, never by this. */
const LANDED_LOOKBACK_MS = 60_000;

/** A Slack `ts` for an epoch-ms time. */
function slackTsOf(epochMs: number): string {
  return (epochMs / 1000).toFixed(6);
}

/** SlackLive over a WebClient: a thread's status, a streamed message, a message edited in place. */
export class WebApiLive extends WebApiPort implements SlackLive {
  async setStatus(thread: LiveThread, status: string, options: SlackCallOptions & { loadingMessages?: readonly string[] } = {}): Promise<void> {
    const { loadingMessages, ...callOptions } = options;
    await this.call(
      'assistant.threads.setStatus',
      () =>
        this.client.assistant.threads.setStatus({
          channel_id: thread.channel,
          thread_ts: thread.threadTs,
          status,
          // Slack refuses more than 10; the status is decoration, so the rest are dropped.
          ...(loadingMessages?.length ? { loading_messages: loadingMessages.slice(0, MAX_LOADING_MESSAGES) } : {}),
        }),
      callOptions,
      // The same status twice is the same status: safe to try again after no answer.
      { afterNoAnswer: true },
    );
  }

  async startStream(
    { channel, threadTs, recipientUserId, recipientTeamId, markdownText, task, tasks, planTitle, persona }: LiveThread & LiveCards & { recipientUserId?: string; recipientTeamId?: string; markdownText?: string; task?: LiveTask; persona?: SlackPersona },
    options: SlackCallOptions = {},
  ): Promise<{ ts: string }> {
    // Refused here as Slack would: a stream whose start failed half-way would leave the caller without its ts.
    if (markdownText !== undefined && markdownText.length > STREAM_MARKDOWN_LIMIT) {
      throw new SlackApiError(`chat.startStream refused: more than ${STREAM_MARKDOWN_LIMIT} characters of markdown; start with less and append the rest`, 'msg_too_long', false);
    }
    const recipient = { ...(recipientUserId ? { recipient_user_id: recipientUserId } : {}), ...(recipientTeamId ? { recipient_team_id: recipientTeamId } : {}) };
    const since = slackTsOf(systemClock.now() - LANDED_LOOKBACK_MS);
    try {
      // Never repeated after no answer or a server error: a second start would be a second message.
      const result = await this.call('chat.startStream', () => this.client.chat.startStream({ channel, thread_ts: threadTs, ...recipient, ...streamContent(markdownText, { tasks: [...(task ? [task] : []), ...(tasks ?? [])], ...(planTitle ? { planTitle } : {}) }), ...personaArguments(persona) }), options);
      return { ts: result.ts ?? '' };
    } catch (error) {
      if (!(error instanceof SlackApiError) || error.outcome !== 'unknown') throw error;
      // It may have landed (a 5xx after the start, an answer lost): the stream is looked for, and carried on when found.
      const ts = await this.findStarted({ channel, threadTs }, since, options).catch(() => undefined);
      if (!ts) throw error;
      this.log?.warn('chat.startStream landed though its answer did not say so; carrying on with the stream it started', { code: error.code });
      return { ts };
    }
  }

  /**
   * The stream a start whose answer was lost made, if it landed: the one message this token posted
   * in the thread since just before the start that carries no reply metadata (answers and stopped
   * streams carry theirs). Two such messages (another task's stream in the thread) and it cannot
   * tell which: none is taken.
   */
  private async findStarted(thread: LiveThread, since: string, options: SlackCallOptions): Promise<string | undefined> {
    const ours = await this.oursTest(options);
    const result = await this.call(
      'conversations.replies',
      () => this.client.conversations.replies({ channel: thread.channel, ts: thread.threadTs, oldest: since, include_all_metadata: true, limit: 200 }),
      options,
      // A read: safe to repeat after a server error.
      { afterServerError: true },
    );
    const started = (result.messages ?? []).filter((message) => message.ts !== undefined && message.ts !== thread.threadTs && compareTs(message.ts, since) > 0 && ours(message) && !(message as { metadata?: unknown }).metadata);
    return started.length === 1 ? started[0]!.ts : undefined;
  }

  async appendStream(message: LiveMessage, markdownText: string, options: SlackCallOptions & LiveCards = {}): Promise<void> {
    const { tasks, planTitle, ...callOptions } = options;
    const cards = { ...(tasks?.length ? { tasks } : {}), ...(planTitle ? { planTitle } : {}) };
    const pieces = splitMarkdown(markdownText, STREAM_MARKDOWN_LIMIT);
    // Cards alone are one call with no text.
    await this.appendPieces(message, pieces.length || !(tasks?.length || planTitle) ? pieces : [''], callOptions, cards);
  }

  async stopStream(message: LiveMessage, options: SlackCallOptions & { markdownText?: string; marker?: ReplyMarker; task?: LiveTask; tasks?: readonly LiveTask[]; blocks?: readonly MessageBlock[]; sessionStatus?: AgentSessionStatus } = {}): Promise<void> {
    const { markdownText, marker, task, tasks, blocks, sessionStatus, ...callOptions } = options;
    const pieces = markdownText ? splitMarkdown(markdownText, STREAM_MARKDOWN_LIMIT) : [];
    const last = pieces.pop();
    // What does not fit the stop goes first, as appends.
    await this.appendPieces(message, pieces, callOptions);
    try {
      await this.call(
        'chat.stopStream',
        () =>
          this.client.chat.stopStream({
            channel: message.channel,
            ts: message.ts,
            ...streamContent(last, { tasks: [...(tasks ?? []), ...(task ? [task] : [])] }),
            ...(marker ? { metadata: replyMetadata(marker) } : {}),
            ...(blocks?.length ? { blocks: [...blocks] } : {}),
            ...(sessionStatus ? { session_status: sessionStatus } : {}),
          }),
        callOptions,
        // A stop cannot land twice: a repeat of one that landed is refused, never doubled. That
        // refusal then says nothing about the first stop, so its outcome is unknown.
        { afterNoAnswer: true, ambiguousAfterRetry: STREAM_STATE_ERRORS },
      );
    } catch (error) {
      throw pieces.length > 0 ? partlyLanded(error, 'chat.stopStream', pieces.length) : error;
    }
  }

  async update(message: LiveMessage, text: string, options: SlackCallOptions & { marker?: ReplyMarker; blocks?: readonly MessageBlock[] } = {}): Promise<void> {
    const { marker, blocks, ...callOptions } = options;
    await this.call(
      'chat.update',
      () => this.client.chat.update({ channel: message.channel, ts: message.ts, text, ...(marker ? { metadata: replyMetadata(marker) } : {}), ...(blocks?.length ? { blocks: withTextSection(text, blocks) } : {}) }),
      callOptions,
      // The same text twice is the same message: safe to try again after no answer.
      { afterNoAnswer: true },
    );
  }

  /**
   * `chat.appendStream` once per piece, in order, `cards` with the first; never again after no
   * answer or a server error (it may have landed: the text would show twice).
   */
  private async appendPieces(message: LiveMessage, pieces: readonly string[], options: SlackCallOptions, cards: LiveCards = {}): Promise<void> {
    for (const [index, piece] of pieces.entries()) {
      const content = index === 0 && (cards.tasks?.length || cards.planTitle) ? streamContent(piece, cards) : { markdown_text: piece };
      try {
        await this.call('chat.appendStream', () => this.client.chat.appendStream({ channel: message.channel, ts: message.ts, ...content }), options);
      } catch (error) {
        throw index > 0 ? partlyLanded(error, 'chat.appendStream', index) : error;
      }
    }
  }
}

/** Slack refuses more `loading_messages` than this. */
const MAX_LOADING_MESSAGES = 10;

/** Refusals of a stream call that describe the stream's state (stopped, expired). */
const STREAM_STATE_ERRORS: ReadonlySet<string> = new Set(['message_not_in_streaming_state']);

/**
 * A stream call's content: plain `markdown_text`, or — with task cards — `chunks` (Slack takes
 * one or the other): the plan's title, the cards, then the text.
 */
/** One chunk of a stream call, as @slack/web-api types it. */
type StreamChunk = NonNullable<ChatStartStreamArguments['chunks']>[number];

function streamContent(markdownText: string | undefined, { tasks = [], planTitle }: LiveCards) {
  if (!tasks.length && !planTitle) return markdownText ? { markdown_text: markdownText } : {};
  const chunks: StreamChunk[] = [
    ...(planTitle ? [{ type: 'plan_update' as const, title: planTitle }] : []),
    ...tasks.map((task) => ({
      type: 'task_update' as const,
      id: task.id,
      title: task.title,
      status: task.status,
      ...(task.details ? { details: task.details } : {}),
      ...(task.sources?.length ? { sources: task.sources.map((source) => ({ type: 'url' as const, url: source.url, text: source.text })) } : {}),
    })),
    ...(markdownText ? [{ type: 'markdown_text' as const, text: markdownText }] : []),
  ];
  return { chunks };
}

/**
 * Cuts markdown into pieces of at most `limit` UTF-16 units (at most `limit` characters however
 * Slack counts them), never inside a surrogate pair, at a line end when one is near the limit.
 * The pieces are appended one after the other, so where they are cut changes only what shows
 * between two calls. Empty text gives no pieces.
 */
export function splitMarkdown(text: string, limit: number = STREAM_MARKDOWN_LIMIT): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = limit;
    const newline = rest.lastIndexOf('\n', limit - 1);
    if (newline >= limit - Math.ceil(limit / 10)) cut = newline + 1;
    else if (isHighSurrogate(rest.charCodeAt(cut - 1)) && cut > 1) cut -= 1;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) pieces.push(rest);
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** A failure of a call made of several, after `landed` of them did: what shows in Slack is no longer what it was. */
function partlyLanded(error: unknown, method: string, landed: number): SlackApiError {
  const failure = toSlackApiError(error, method);
  return new SlackApiError(`${failure.message} (after ${landed} earlier part(s) of the text landed)`, failure.code, failure.retryable, { cause: failure, outcome: 'unknown' });
}

