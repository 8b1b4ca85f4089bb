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
 * Each queue's consumer and how many receives a message gets before the DLQ. The consumers read
 * the same number (TASK_/POLL_/REPLY_MAX_RECEIVE_COUNT, set by CDK from this table) so that on the
 * last receive they still tell the user.
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
