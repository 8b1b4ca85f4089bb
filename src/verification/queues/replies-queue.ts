import * as z from '../../config/zod-mini';
import { PersonaSchema, SlackThreadSchema } from './slack-thread';

/**
 * The replies queue (→ slack-poster, which holds the bot token): its message kinds, one union.
 * A reply's `kind` says what it is (an answer, an error, a notice, a Stop's note); the intake's
 * Slack calls (`action`) and feedback travel here too (docs/architecture.md §2.6).
 */

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
  /**
   * The answer's files (docs/architecture.md, "Files the agent makes"): how many wait in the
   * outgoing files under `request_id` (an SQS message is too small for them), and those already
   * refused with their reason; slack-poster shares them after the text.
   */
  files: z.optional(z.object({ count: z.number().check(z.int(), z.minimum(0)), refused: z.optional(z.array(z.object({ name: z.string(), reason: z.string() }))) })),
  /**
   * The steps the answer's task ended with (docs/contract.md, "Steps"), within Slack's limits
   * (live/step-cards.ts, `queuedSteps`): slack-poster ends the live message's task cards with them,
   * or folds them to a line.
   */
  steps: z.optional(
    z.object({
      steps: z.array(z.object({ id: z.string(), title: z.string(), status: z.enum(['pending', 'in_progress', 'complete', 'error']), details: z.optional(z.string()), sources: z.optional(z.array(z.object({ url: z.string(), title: z.optional(z.string()) }))) })),
      plan_title: z.optional(z.string()),
    }),
  ),
});
export type ReplyMessage = z.infer<typeof ReplyMessageSchema>;


const PromptSchema = z.object({ title: z.string(), message: z.string() });

export const SlackActionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('set-prompts'), channel: z.string(), prompts: z.array(PromptSchema).check(z.maxLength(4)), title: z.optional(z.string()) }),
  z.object({ type: z.literal('ephemeral'), channel: z.string(), user: z.string(), text: z.string(), thread_ts: z.optional(z.string()) }),
  z.object({ type: z.literal('open-view'), trigger_id: z.string(), view: z.record(z.string(), z.unknown()) }),
]);

/** A Slack call for slack-poster to make; `id` names it in logs and traces (the event or click). */
export const ActionMessageSchema = z.object({ kind: z.literal('action'), id: z.string(), action: SlackActionSchema });
export type ActionMessage = z.infer<typeof ActionMessageSchema>;

/** A feedback click (or the form's text) to record against its answer and thank for. */
export const FeedbackMessageSchema = z.object({
  kind: z.literal('feedback'),
  team_id: z.string(),
  channel: z.string(),
  message_ts: z.string(),
  thread_ts: z.optional(z.string()),
  user: z.string(),
  request_id: z.string(),
  agent: z.optional(z.string()),
  value: z.optional(z.enum(['positive', 'negative'])),
  comment: z.optional(z.string()),
  trigger_id: z.optional(z.string()),
  /** Epoch ms the click reached slack-events: the later click wins. */
  clicked_at: z.number(),
});
export type FeedbackMessage = z.infer<typeof FeedbackMessageSchema>;

/**
 * A task's question to show (`question`: posted with its buttons, the session suspended) or to
 * close (`question-closed`: its buttons replaced by who answered what, or why it closed) — read
 * from the pause record (src/verification/questions/show-question.ts).
 */
export const QuestionMessageSchema = z.extend(SlackThreadSchema, {
  kind: z.enum(['question', 'question-closed']),
  request_id: z.uuid(),
  round: z.int().check(z.nonnegative()),
});
export type QuestionMessage = z.infer<typeof QuestionMessageSchema>;

/** What the replies queue carries: replies and notices, Slack calls for the intake, feedback, questions. */
export type RepliesQueueMessage = ReplyMessage | ActionMessage | FeedbackMessage | QuestionMessage;
