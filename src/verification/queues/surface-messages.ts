import * as z from '../../config/zod-mini';
import { SlackThreadSchema, type ReplyMessage, type TaskMessage } from './queue-messages';

/**
 * The queue messages of the agent surface (docs/architecture.md §2.6), beside the task, poll and
 * reply messages: a Stop travels on the tasks queue (agent-invoker holds the execution agent that
 * cancels), Slack calls the intake asks for and feedback travel on the replies queue (slack-poster
 * holds the bot token). Each carries `kind`, which the task and reply messages leave out or use
 * for other values, so a consumer tells them apart before it parses.
 */

/** A Stop pressed on a thread's agent session. */
export const StopMessageSchema = z.extend(SlackThreadSchema, {
  kind: z.literal('stop'),
  event_id: z.string(),
  user_id: z.string(),
  /** Epoch ms of the click: a task the user asked before it is stopped, one asked after runs. */
  stopped_at: z.number(),
  /** The app's streams Slack already stopped. */
  streaming_ts: z.optional(z.array(z.string())),
});
export type StopMessage = z.infer<typeof StopMessageSchema>;

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

/** The `kind` of a queue body, without parsing the rest (a poison body has none). */
export function kindOf(body: string): string | undefined {
  try {
    const kind = (JSON.parse(body) as { kind?: unknown } | null)?.kind;
    return typeof kind === 'string' ? kind : undefined;
  } catch {
    return undefined;
  }
}

/** What the tasks queue carries: tasks, and Stops. */
export type TaskQueueMessage = TaskMessage | StopMessage;
/** What the replies queue carries: replies and notices, Slack calls for the intake, feedback. */
export type ReplyQueueMessage = ReplyMessage | ActionMessage | FeedbackMessage;
