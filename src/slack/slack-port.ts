/*
 * The types-only port the pipeline imports for Slack replies (docs/architecture.md §4.5): what a
 * reply, a reaction and a call's bounds are. Free of @slack/web-api; the adapter in
 * src/slack/web-api/ implements it (and SlackConversations, SlackLive and SlackAssistant beside it),
 * the local console in src/local too. test/architecture/boundaries.test.ts keeps the pipeline on
 * the ports and src/slack free of import circles.
 */
import type { MessageBlock } from './feedback-blocks';

export type ReactionTarget = {
  channel: string;
  /** The `ts` of the message to react to. */
  timestamp: string;
  /** Emoji name without colons, e.g. `eyes`. */
  name: string;
};

/** Bounds on one Slack call: it never outlives the caller's time. */
export type SlackCallOptions = {
  /** Aborts the wait for Slack's answer (the Lambda is about to stop). */
  signal?: AbortSignal;
  /** Epoch ms by which the call must be over: a longer `Retry-After` ends the call at once. */
  deadline?: number;
};

/**
 * Who a message is posted as, instead of the app's own name and icon (`username`, `icon_emoji`;
 * needs the `chat:write.customize` scope). Set when a message is created: `chat.update` keeps it.
 */
export type SlackPersona = { username?: string; iconEmoji?: string };

/** Which reply chunk a message is: sent as the message's metadata, so it can be found again. */
export type ReplyMarker = { requestId: string; chunk: number };

export interface SlackReplies {
  /**
   * Posts `text` in the thread whose parent is `threadTs`; resolves with the new message's `ts`.
   * A SlackApiError with `outcome: 'unknown'` means Slack may have posted it anyway.
   */
  post(message: { channel: string; threadTs: string; text: string; marker?: ReplyMarker; /** Under the text (the feedback buttons). */ blocks?: readonly MessageBlock[]; persona?: SlackPersona }, options?: SlackCallOptions): Promise<{ ts: string }>;
  /**
   * The `ts` of a message posted with `marker` in the thread, if there is one — how a poster that
   * takes over a chunk learns that the post it could not confirm did land. Needs the
   * `*:history` scopes; optional for sinks that cannot read a thread back.
   */
  findPosted?(thread: { channel: string; threadTs: string }, marker: ReplyMarker, options?: SlackCallOptions): Promise<string | undefined>;
  /** Adding a reaction that is already there, or to a deleted message, is not an error. */
  addReaction(reaction: ReactionTarget): Promise<void>;
  /** Removing a reaction that is not there, or from a deleted message, is not an error. */
  removeReaction(reaction: ReactionTarget): Promise<void>;
}

