import * as z from '../../config/zod-mini';
import { SlackThreadSchema } from './slack-thread';

/**
 * The polls queue (agent-invoker → async-result, and async-result → itself): its message kinds,
 * one union. A body without `kind` is a poll (the queue's first kind).
 */

export const PollMessageSchema = z.extend(SlackThreadSchema, {
  kind: z.optional(z.literal('poll')),
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
  /** Questions answered in the task so far (docs/architecture.md, "Questions"): the next one it asks is this round. Absent: none. */
  round: z.optional(z.int().check(z.nonnegative())),
});
export type PollMessage = z.infer<typeof PollMessageSchema>;


/**
 * The delayed check AGENTCORE_STOP_SESSION=quiet-… puts here (src/verification/stop/agentcore-session-stop.ts):
 * end the thread's session if nothing was asked there since `request_id` ended.
 */
export const SessionCheckSchema = z.extend(SlackThreadSchema, {
  kind: z.literal('session-check'),
  request_id: z.string().check(z.minLength(1)),
  agent: z.optional(z.string()),
});
export type SessionCheck = z.infer<typeof SessionCheckSchema>;

/**
 * A question's timer (src/verification/questions/expire-question.ts): at `expires_at_ms` an unanswered
 * question is closed and its task cancelled. An SQS delay is at most 15 minutes, so the timer is
 * sent again until the time comes.
 */
export const QuestionExpirySchema = z.object({
  kind: z.literal('question-expiry'),
  request_id: z.uuid(),
  round: z.int().check(z.nonnegative()),
  expires_at_ms: z.number(),
});
export type QuestionExpiry = z.infer<typeof QuestionExpirySchema>;

/** What the polls queue carries: polls, delayed session checks, and questions' timers. */
export type PollsQueueMessage = PollMessage | SessionCheck | QuestionExpiry;
