/**
 * How the four verification functions and their queues are sized: one table that the CDK stack
 * deploys and the local pipeline simulates, so the two cannot drift (docs/architecture.md,
 * "Delivery promise").
 */

export type VerificationFunction = 'slackEvents' | 'agentInvoker' | 'asyncResult' | 'slackPoster';
export type PipelineQueue = 'tasks' | 'polls' | 'replies';

/** Lambda timeouts. slack-events must answer Slack within 3 s; the rest leave room for one slow call. */
export const FUNCTION_TIMEOUT_SECONDS: Readonly<Record<VerificationFunction, number>> = {
  slackEvents: 10,
  agentInvoker: 60,
  asyncResult: 30,
  slackPoster: 60,
};

/**
 * Each queue's consumer and how many receives a message gets before the DLQ, by default. The
 * consumers read the same number (TASK_/POLL_/REPLY_MAX_RECEIVE_COUNT) so that on the last receive
 * they still tell the user; it is one setting: CDK writes the queue's maxReceiveCount and the
 * variable from one context key (taskMaxReceiveCount, …), and the local pipeline builds its queues
 * from the variables.
 */
export const QUEUE_SETTINGS: Readonly<Record<PipelineQueue, { consumer: VerificationFunction; maxReceiveCount: number }>> = {
  tasks: { consumer: 'agentInvoker', maxReceiveCount: 3 },
  polls: { consumer: 'asyncResult', maxReceiveCount: 5 },
  replies: { consumer: 'slackPoster', maxReceiveCount: 5 },
};

/** AWS advises a visibility timeout of 6× the consuming Lambda's timeout for SQS event sources. */
export function visibilityTimeoutSeconds(queue: PipelineQueue): number {
  return FUNCTION_TIMEOUT_SECONDS[QUEUE_SETTINGS[queue].consumer] * 6;
}

/**
 * How long an event claim is held by the delivery that made it. Longer than slack-events can run
 * (its timeout), so a live first delivery is never taken over; shorter than the minute Slack waits
 * before its second retry, so after a delivery that died, one of Slack's retries takes over.
 */
export const EVENT_CLAIM_LEASE_SECONDS = 30;

/**
 * How long a reply chunk is held by the poster posting it: longer than the poster can run, shorter
 * than the replies queue's visibility timeout, so the redelivery after a poster that died finds the
 * lease over and posts the chunk.
 */
export const REPLY_CHUNK_LEASE_SECONDS = FUNCTION_TIMEOUT_SECONDS.slackPoster + 30;
