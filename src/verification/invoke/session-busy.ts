import type { Queue } from '../../queue/queue';
import type { Outcome } from '../../protocols/outcome';
import type { TaskMessage } from '../queues/tasks-queue';

/**
 * One call at a time per AgentCore session (docs/operations.md, "AgentCore sessions"). Every task
 * of a Slack thread shares the thread's session, and AgentCore answers a call to a session that is
 * serving another one with 409 RetryableConflictException. The SDK retries it with backoff inside
 * the call's deadline; what is still refused comes here as `transport:session-busy`, and the task
 * goes back on the tasks queue with a short delay — a fresh message, so the wait spends none of
 * its receives and the user is never told it failed. The other call (a held stream, a poll) ends
 * within its own bound, so the task gets its turn: calls of one session are serialized.
 *
 * Bounded: after MAX_SESSION_BUSY_REQUEUES puts back (about two minutes) the session is not busy
 * but stuck, and the failure is settled like any other (the user is told the assistant is busy).
 */
export const MAX_SESSION_BUSY_REQUEUES = 24;
/** How long a put-back task waits before it is tried again: about one short call's length. */
export const SESSION_BUSY_DELAY_SECONDS = 5;

export const SESSION_BUSY_CODE = 'transport:session-busy';

/** True when the outcome is a busy session and the task may still wait for its turn. */
export function waitsForSession(outcome: Outcome, task: TaskMessage): boolean {
  return outcome.kind === 'failure' && outcome.code === SESSION_BUSY_CODE && (task.requeued ?? 0) < MAX_SESSION_BUSY_REQUEUES;
}

/** Puts the task back on the tasks queue, counted, after the delay. */
export async function requeueForSession(tasks: Pick<Queue<TaskMessage>, 'send'>, task: TaskMessage): Promise<number> {
  const requeued = (task.requeued ?? 0) + 1;
  await tasks.send({ ...task, requeued }, { delaySeconds: SESSION_BUSY_DELAY_SECONDS, attributes: { request_id: task.request_id } });
  return requeued;
}
