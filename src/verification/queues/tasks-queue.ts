import * as z from '../../config/zod-mini';
import { SlackThreadSchema } from './slack-thread';
import { MAX_TASK_FILES, TaskFileSchema } from './task-file';

/**
 * The tasks queue (slack-events → agent-invoker): its message kinds, one union. A body without
 * `kind` is a task (the queue's first kind). agent-invoker's consumer is a table of these kinds
 * (src/verification/invoke/agent-invoker.ts).
 */

export const TaskMessageSchema = z.extend(SlackThreadSchema, {
  kind: z.optional(z.literal('task')),
  /** UUID v4 made once when the event was accepted; the JSON-RPC id of execute_task on every retry. */
  request_id: z.uuid(),
  event_id: z.string().check(z.minLength(1)),
  user_id: z.string(),
  text: z.string().check(z.minLength(1)),
  /** Epoch ms when slack-events accepted the event. */
  received_at: z.number(),
  files: z.optional(z.array(TaskFileSchema).check(z.maxLength(MAX_TASK_FILES))),
  /** The asker's Enterprise Grid organisation, when Slack gave one (docs/contract.md, "Who is asking"). */
  enterprise_id: z.optional(z.string()),
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


/** A Stop pressed on a thread's agent session: agent-invoker holds the execution agent that cancels. */
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

/**
 * An answer to a task's question (docs/architecture.md, "Questions"): a click on one of its buttons
 * (`option`, its index), or the answer form's `text`. agent-invoker checks who answered against the
 * pause and resumes the task once (src/verification/invoke/resume-task.ts).
 */
export const AnswerMessageSchema = z.object({
  kind: z.literal('answer'),
  /** The click's claim key: the pause records which answer won by it, so a redelivery of the winner goes on. */
  event_id: z.string().check(z.minLength(1)),
  request_id: z.uuid(),
  round: z.int().check(z.nonnegative()),
  team_id: z.string(),
  channel: z.string(),
  user_id: z.string().check(z.minLength(1)),
  option: z.optional(z.int().check(z.nonnegative())),
  text: z.optional(z.string().check(z.minLength(1), z.maxLength(3000))),
  clicked_at: z.number(),
});
export type AnswerMessage = z.infer<typeof AnswerMessageSchema>;

/** What the tasks queue carries: tasks, Stops, and answers to questions. */
export type TasksQueueMessage = TaskMessage | StopMessage | AnswerMessage;
