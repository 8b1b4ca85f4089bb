import { FUNCTION_TIMEOUT_SECONDS } from '../pipeline-settings';
import type { ClaimStore } from '../stores/claim-store';
import type { Pauses } from '../stores/pauses';

/**
 * What the questions room is given (docs/architecture.md, "Questions"): where pauses are kept, the
 * claims that make a resume and an expiry happen once, how long a question waits, and who besides
 * the asker may answer for each agent. agent-invoker and async-result get it with their follow-up
 * options; without it an agent's question is a failure, as before.
 */
export type QuestionRoom = {
  pauses: Pauses;
  claims: ClaimStore;
  /** INPUT_TIMEOUT_S: how long a question waits for its answer before the task is cancelled. */
  timeoutSeconds: number;
  /** The users who may answer an agent's questions besides the asker (EXECUTION_AGENTS `approvers`). */
  approvers?: (agent: string) => readonly string[] | undefined;
};

/** How long a pause is kept past its expiry: the expiry's own redeliveries and a late click still find it. */
export const PAUSE_KEPT_AFTER_S = 24 * 60 * 60;

/** An SQS message's longest delay: a question's timer is sent again until its time comes. */
export const MAX_TIMER_DELAY_S = 15 * 60;

/**
 * How long a resume (agent-invoker) or an expiry (async-result) is held by the delivery doing it:
 * longer than its function can run, shorter than its queue's visibility timeout, so the redelivery
 * after a delivery that died finds the lease over and does it (as REPLY_CHUNK_LEASE_SECONDS).
 */
export const RESUME_LEASE_S = FUNCTION_TIMEOUT_SECONDS.agentInvoker + 30;
export const EXPIRY_LEASE_S = FUNCTION_TIMEOUT_SECONDS.asyncResult + 30;

/** The pause's lifetime in the state table. */
export function pauseTtlSeconds(room: QuestionRoom): number {
  return room.timeoutSeconds + PAUSE_KEPT_AFTER_S;
}
