import * as z from '../../config/zod-mini';

/**
 * What every message on the verification zone's queues carries: where in Slack it belongs (the
 * thread), and the helpers that name its conversation. The queues' own vocabularies are
 * tasks-queue.ts, polls-queue.ts and replies-queue.ts, one union of message kinds each.
 */

/** Where in Slack the reply belongs, and which message to react to. */
export const SlackThreadSchema = z.object({
  team_id: z.string(),
  channel: z.string().check(z.minLength(1)),
  /** The user's message. */
  ts: z.string().check(z.minLength(1)),
  /** The thread the user's message is in, if any. Replies go to `thread_ts ?? ts`. */
  thread_ts: z.optional(z.string()),
});
export type SlackThread = z.infer<typeof SlackThreadSchema>;

/** Who a reply is posted as: the agent's `displayName` and `icon` (chat:write.customize). */
export const PersonaSchema = z.object({ username: z.optional(z.string().check(z.minLength(1))), icon_emoji: z.optional(z.string().check(z.minLength(1))) });
export type Persona = z.infer<typeof PersonaSchema>;

/**
 * The Slack thread a message is about, as one value: its four coordinates and nothing else of the
 * message (a task, poll or reply message carries them flat, beside its own fields).
 */
export function threadOf(message: SlackThread): SlackThread {
  return { team_id: message.team_id, channel: message.channel, ts: message.ts, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) };
}

/** A conversation: the thread the replies go to, in a channel of a team (no matter which message in it). */
export type Conversation = { team_id: string; channel: string; thread_ts: string };

/** The conversation a message's reply goes to: its thread, or the new one under the message. */
export function conversationOf(thread: SlackThread): Conversation {
  return { team_id: thread.team_id, channel: thread.channel, thread_ts: replyThreadTs(thread) };
}

/**
 * The conversation a message belongs to — team, channel and the thread its reply goes to — as the
 * execution agent's session key: every task of one Slack thread shares an AgentCore session (a
 * warm microVM), and no two threads, channels or teams ever do (docs/operations.md, "AgentCore
 * sessions"). The transport hashes it into the session id.
 */
export function conversationKey(thread: SlackThread): string {
  const { team_id, channel, thread_ts } = conversationOf(thread);
  return `slack:${team_id}:${channel}:${thread_ts}`;
}

/** Replies go in the user's thread: the thread it was in, or a new one under the message. */
export function replyThreadTs(thread: Pick<SlackThread, 'ts' | 'thread_ts'>): string {
  return thread.thread_ts ?? thread.ts;
}
