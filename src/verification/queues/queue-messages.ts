import * as z from '../../config/zod-mini';

/**
 * The verification zone's three queue message shapes: tasks (slack-events → agent-invoker),
 * polls (→ async-result) and replies (→ slack-poster). Every one carries where the reply goes.
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

/**
 * A file shared with the message, as the invoker needs it to download it. The URL stays in the
 * verification zone: the execution zone receives the bytes (docs/contract.md, "Attachments").
 */
export const TaskFileSchema = z.object({
  id: z.string().check(z.minLength(1)),
  name: z.string(),
  /** As Slack declared it; the invoker checks the bytes against it. */
  mimetype: z.string(),
  filetype: z.optional(z.string()),
  size: z.number().check(z.nonnegative()),
  /** Absent for a file Slack no longer serves (deleted, hidden by the plan's limits). */
  url: z.optional(z.string()),
});
export type TaskFile = z.infer<typeof TaskFileSchema>;

/** More file references than this in one task message are cut (Slack attaches at most 10 to a message). */
export const MAX_TASK_FILES = 50;

export const TaskMessageSchema = z.extend(SlackThreadSchema, {
  /** UUID v4 made once when the event was accepted; the JSON-RPC id of execute_task on every retry. */
  request_id: z.uuid(),
  event_id: z.string().check(z.minLength(1)),
  user_id: z.string(),
  text: z.string().check(z.minLength(1)),
  /** Epoch ms when slack-events accepted the event. */
  received_at: z.number(),
  files: z.optional(z.array(TaskFileSchema).check(z.maxLength(MAX_TASK_FILES))),
  /** The bot's user id, when the event named it: the invoker tells the bot's own replies by it. */
  bot_user_id: z.optional(z.string()),
  /** A thread reply without a mention, taken because the bot answered in that thread before. */
  follow_up: z.optional(z.boolean()),
  /**
   * The execution agent slack-events routed the task to (src/verification/routing/agent-routing.ts); its
   * polls and its reply carry it on. Absent in messages of a version before routing: the default agent.
   */
  agent: z.optional(z.string().check(z.minLength(1))),
  /**
   * Times the task was put back on the tasks queue because its AgentCore session was busy with
   * another call (409, src/verification/invoke/session-busy.ts); absent: never.
   */
  requeued: z.optional(z.int().check(z.nonnegative())),
});
export type TaskMessage = z.infer<typeof TaskMessageSchema>;

export const PollMessageSchema = z.extend(SlackThreadSchema, {
  request_id: z.uuid(),
  event_id: z.string(),
  user_id: z.string(),
  /** The protocol's pending handle (task id and extras). */
  handle: z.catchall(z.object({ taskId: z.string().check(z.minLength(1)) }), z.string()),
  /** Polls made so far. */
  attempt: z.int().check(z.nonnegative()),
  /** Epoch ms when the task was accepted: the poll deadline counts from here. */
  accepted_at: z.number(),
  received_at: z.number(),
  /** Notes for the user about what the task was sent without (files skipped, thread not read), added under the answer. */
  notes: z.optional(z.array(z.string())),
  /** A task that streams: characters of its text received so far (docs/contract.md, "Streaming"). */
  streamed: z.optional(z.int().check(z.nonnegative())),
  /** A task that streams: polls since its text last grew (the backoff counts from there). */
  since_text: z.optional(z.int().check(z.nonnegative())),
  /** The agent that accepted the task: every poll and the cancel go to it. Absent (an older version's poll): the default agent. */
  agent: z.optional(z.string().check(z.minLength(1))),
  /** Characters the agent was sent (text and thread): the charge's estimate when it reports no usage. */
  input_chars: z.optional(z.int().check(z.nonnegative())),
});
export type PollMessage = z.infer<typeof PollMessageSchema>;

/** `stopped`: the user pressed Stop; the note goes under what was shown (docs/architecture.md §2.6). */
export const PersonaSchema = z.object({ username: z.optional(z.string().check(z.minLength(1))), icon_emoji: z.optional(z.string().check(z.minLength(1))) });
export type Persona = z.infer<typeof PersonaSchema>;

export const ReplyKindSchema = z.enum(['answer', 'error', 'notice', 'stopped']);

export const ReplyMessageSchema = z.extend(SlackThreadSchema, {
  request_id: z.string().check(z.minLength(1)),
  text: z.string().check(z.minLength(1)),
  /** answer: the task's result; error: a safe failure message; notice: refusals and hints. */
  kind: ReplyKindSchema,
  received_at: z.optional(z.number()),
  /** The execution agent that answered: its name goes into the feedback buttons under the answer. */
  agent: z.optional(z.string()),
  /** Who the answer is posted as: the agent's `displayName` and `icon` (chat:write.customize). */
  persona: z.optional(PersonaSchema),
});
export type ReplyMessage = z.infer<typeof ReplyMessageSchema>;

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
