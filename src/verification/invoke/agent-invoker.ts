import { systemClock } from '../../clock';
import { taskLogger } from '../../observability/logger';
import type { Delivery, DeliveryContext, DeliveryHandler } from '../../queue/queue';
import { consumeByKind, type QueueTable } from '../queues/queue-consumer';
import { threadOf } from '../queues/slack-thread';
import { AnswerMessageSchema, StopMessageSchema, TaskMessageSchema, type TaskMessage, type TasksQueueMessage } from '../queues/tasks-queue';
import { createSettlement } from '../settle/settle-outcome';
import { createStopTask } from '../stop/stop-task';
import { noTrace } from '../trace';
import { afterOutcome } from './after-send';
import { readyToSend } from './before-send';
import { guardedTask } from './guard-input';
import { RetryableTaskError, type AgentInvokerOptions, type InvokerParts, type TaskRun } from './invoker-parts';
import { inputCharsOf, sendTask, taskParams } from './send-task';
import { resumeTask } from './resume-task';
import { closeQuestionOnStop } from '../questions/close-on-stop';

/**
 * The agent-invoker function's steps (docs/architecture.md §2.2), one file each: before-send.ts
 * (stopped already? which agent? within budget? a sign of life), send-task.ts (the task's params,
 * then `execute_task`, its stream held while text flows), after-send.ts (the answer settled, or the
 * first poll queued, or a retry). Its options and what they share: invoker-parts.ts.
 */


/**
 * The agent-invoker function: one task message → one `execute_task` through the agent it names
 * (routed by slack-events; the default agent when it names none).
 * success → reply; pending → first poll message; permanent failure → safe error reply;
 * transient failure → SQS retry, and on the last receive the user is told.
 */
export function createAgentInvoker(options: AgentInvokerOptions): DeliveryHandler {
  const clock = options.clock ?? systemClock;
  const trace = options.trace ?? noTrace;
  const p: InvokerParts = { options, clock, trace, settlement: createSettlement({ ...options, trace, clock }) };
  const questions = options.questions;
  const closeQuestion = questions && ((requestId: string) => closeQuestionOnStop(questions, options.replies, requestId));
  const stopTask = options.work ? createStopTask({ ...options, work: options.work, ...(options.session ? { session: options.session } : {}), ...(closeQuestion ? { closeQuestion } : {}) }) : undefined;

  const invoke = async (task: TaskMessage, delivery: Delivery, context: DeliveryContext): Promise<void> => {
    // Every line names the agent the task went to (a message without one: the default's).
    const log = taskLogger(options.log, { request_id: task.request_id, correlation_id: task.request_id, event_id: task.event_id, agent: task.agent ?? options.agent.name });
    const run: TaskRun = { task, thread: threadOf(task), log, delivery, context };
    const ready = await readyToSend(p, run);
    if (!ready) return;
    // Read afresh on every receive: the execution zone keys a task by its request id, not by its context.
    const read = await taskParams(p, run, ready);
    const guarded = options.guardrail ? await guardedTask(p, run, options.guardrail, read) : read;
    if (!guarded) return;
    const { params, inputs } = guarded;
    // What the agent is sent, in characters: the charge's estimate when it reports no usage (src/verification/settle/task-charge.ts).
    const charged = { ...task, input_chars: inputCharsOf(params) };
    const sent = await sendTask(p, run, ready, params, charged);
    if (sent.kind === 'stopped') return;
    await afterOutcome(p, run, ready, { ...sent, inputs, charged });
  };

  // The tasks queue's table: tasks, and Stops (docs/architecture.md §2.6: this function holds the
  // agent that cancels; a deployment that keeps no record of running tasks drops them).
  const table: QueueTable<TasksQueueMessage> = {
    task: { schema: TaskMessageSchema, what: 'task message', handle: invoke },
    // Answers to agents' questions (docs/architecture.md, "Questions"): dropped where questions are not taken.
    answer: questions ? { schema: AnswerMessageSchema, what: 'answer message', handle: (answer, delivery, context) => resumeTask(p, answer, delivery, context) } : undefined,
    stop: stopTask ? { schema: StopMessageSchema, what: 'stop message', handle: (stop, _delivery, { signal, deadline }) => stopTask(stop, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) }) } : undefined,
  };
  // A retryable failure on the last receive has already replied with its reason; only unexpected
  // errors (poison bodies, queue outages) need the generic apology.
  return p.settlement.lastReceiveApology(consumeByKind(table, { unmarked: 'task', log: options.log }), 'execute', (error) => error instanceof RetryableTaskError && error.userNotified);
}
