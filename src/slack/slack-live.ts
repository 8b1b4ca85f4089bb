/*
 * The port for replies that show up while they are being written: a status under the thread
 * ("is thinking…"), a message streamed into the thread, or — where Slack refuses streaming — one
 * message edited in place. Types only, free of @slack/web-api: the pipeline depends on this, the
 * adapter (src/slack/web-api/live.ts) implements it.
 *
 * Every method rejects with a SlackApiError carrying Slack's code. Refusals that mean "not
 * available here, fall back" are listed in slack-api-error.ts (`isLiveReplyRefusal`).
 */
import type { MessageBlock } from './feedback-blocks';
import type { AgentSessionStatus } from './slack-assistant';
import type { ReplyMarker, SlackCallOptions, SlackPersona } from './slack-port';

/** A thread: the channel and the `ts` of its parent message. */
export type LiveThread = { channel: string; threadTs: string };

/** One message the app wrote: a stream it started, or a message it posted. */
export type LiveMessage = { channel: string; ts: string };

/**
 * A step shown in a streamed message's timeline (`chunks` item `task_update`): e.g. a "working"
 * step while the answer is produced, marked `complete` when the stream stops.
 */
export type LiveTask = {
  id: string;
  title: string;
  status: 'pending' | 'in_progress' | 'complete' | 'error';
  details?: string;
  /** Links the step used, shown on its card (Slack's `url` source elements). */
  sources?: ReadonlyArray<{ url: string; text: string }>;
};

/**
 * Task cards for a stream call (docs/architecture.md §2.5, "Steps"): `task_update` chunks, each
 * the card's latest state (Slack draws one card per id, and a later chunk with the same id changes
 * it), and a `plan_update` chunk with the plan's title.
 */
export type LiveCards = { tasks?: readonly LiveTask[]; planTitle?: string };

/** Slack's limit on the markdown of one `chat.startStream` / `appendStream` / `stopStream` call. */
export const STREAM_MARKDOWN_LIMIT = 12_000;

export interface SlackLive {
  /**
   * `assistant.threads.setStatus`: a status under the thread ("is thinking…"), optionally with up
   * to 10 `loadingMessages` Slack rotates through; `''` clears it. Slack clears it by itself when
   * the app writes in the thread, or after 2 minutes without a message. Outside an assistant or
   * agent thread Slack may refuse it (any refusal means "not supported here"). Idempotent: tried
   * again after no answer.
   */
  setStatus(thread: LiveThread, status: string, options?: SlackCallOptions & { loadingMessages?: readonly string[] }): Promise<void>;
  /**
   * `chat.startStream`: a new reply in the thread, streamed; resolves with its `ts`. Outside a DM
   * Slack needs the recipient (the user being answered, and that user's team): without it, it
   * refuses with `missing_recipient_user_id` / `missing_recipient_team_id`. `markdownText` longer
   * than one call takes is sent as the start and then appends. Like a post, never tried again
   * after no answer (it may have landed): an `outcome: 'unknown'` error means a stream may exist.
   */
  startStream(
    stream: LiveThread & LiveCards & { recipientUserId?: string; recipientTeamId?: string; markdownText?: string; task?: LiveTask; /** Who the stream is posted as (chat.startStream takes `username` and `icon_emoji`). */ persona?: SlackPersona },
    options?: SlackCallOptions,
  ): Promise<{ ts: string }>;
  /**
   * `chat.appendStream`: adds `markdownText` to the streamed message. More than 12,000 characters
   * go as several calls, in order; if one fails after others landed, the error's outcome is
   * `unknown`. Never tried again after no answer (a repeat would show the text twice). A stopped
   * or expired stream refuses with `message_not_in_streaming_state`. `tasks` and `planTitle`
   * (task cards) go first, in the first call; `markdownText` may then be empty.
   */
  appendStream(message: LiveMessage, markdownText: string, options?: SlackCallOptions & LiveCards): Promise<void>;
  /**
   * `chat.stopStream`: ends the stream, with optional final `markdownText` (appended), the reply
   * `marker` as the message's metadata (so `findPosted` finds it), and a final state of `task`.
   * Tried again after no answer: a stop cannot land twice. When such a retry is refused with
   * `message_not_in_streaming_state`, the error's outcome is `unknown` (the first stop may have
   * landed, or the stream expired).
   */
  stopStream(
    message: LiveMessage,
    options?: SlackCallOptions & {
      markdownText?: string;
      marker?: ReplyMarker;
      task?: LiveTask;
      /** The task cards' final states, before `task`. */
      tasks?: readonly LiveTask[];
      /** Under the final text: the feedback buttons (src/slack/feedback-blocks.ts). */
      blocks?: readonly MessageBlock[];
      /** Moves the thread's agent session out of `processing` in the same call. */
      sessionStatus?: AgentSessionStatus;
    },
  ): Promise<void>;
  /**
   * `chat.update`: replaces the text of a message the app posted (the fallback where streaming is
   * refused: post once, then update at a bounded rate — the rate is the caller's). A `marker`
   * replaces the message's metadata; without one Slack keeps what the message had. Idempotent:
   * tried again after no answer.
   */
  update(message: LiveMessage, text: string, options?: SlackCallOptions & { marker?: ReplyMarker; blocks?: readonly MessageBlock[] }): Promise<void>;
}
