import type { Usage } from '../../contract';
import type { SlackThread } from '../queues/slack-thread';

/**
 * What settling a task reports (src/verification/settle/settle-outcome.ts): the seam that usage
 * records, budgets and session stops hang on (FollowUpOptions.onSettled). Its own file, so those
 * import the report without the settlement.
 */

export type SettledTask = SlackThread & { request_id: string; received_at: number; /** The agent it went to (absent: the default). */ agent?: string; /** Who asked (task and poll messages carry it). */ user_id?: string };

/**
 * What a settlement did with the task's end: answered, failed, or nothing (the user had stopped
 * it), with the agent that ran it and what its answer cost when the agent said (docs/contract.md,
 * "Usage") — counted even for a stopped task, whose tokens were spent all the same. The seam for
 * usage records and budgets: `SettlementOptions.onSettled` gets one per settled task.
 */
export type Settled = { ended: 'answered' | 'failed' | 'stopped'; agent?: string; usage?: Usage };
