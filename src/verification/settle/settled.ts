import type { Usage } from '../../contract';
import type { SlackThread } from '../queues/slack-thread';

/**
 * What settling a task reports (src/verification/settle/settle-outcome.ts): the seam that usage
 * records, budgets and session stops hang on (FollowUpOptions.onSettled). Its own file, so those
 * import the report without the settlement.
 */

export type SettledTask = SlackThread & {
  request_id: string;
  received_at: number;
  /** The agent it went to (absent: the default). */
  agent?: string;
  /** Who asked (task and poll messages carry it). */
  user_id?: string;
  /** Characters the agent was sent (text and thread), for the estimate when it reports no usage (poll messages carry it). */
  input_chars?: number;
  /** The task's own text (a task message): its characters when `input_chars` is not given. */
  text?: string;
};

/**
 * What a settlement did with the task's end: answered, failed, or nothing (the user had stopped
 * it), with the agent that ran it and what its answer cost when the agent said (docs/contract.md,
 * "Usage") — counted even for a stopped task, whose tokens were spent all the same. The seam for
 * usage records and budgets: `SettlementOptions.onSettled` gets one per settled task.
 */
export type Settled = {
  ended: 'answered' | 'failed' | 'stopped';
  agent?: string;
  /** What it is charged (src/verification/settle/task-charge.ts); absent only for a task that never reached its agent. */
  usage?: Usage;
  /** True when `usage` is an estimate from characters: the agent reported none. */
  estimated?: boolean;
};
