import type { InputRequiredOutcome, Outcome } from '../../protocols/outcome';
import { askQuestion } from '../questions/ask-question';
import { delayAfterHold } from '../live/stream-hold';
import { pollDelaySeconds } from '../poll-schedule';
import { conversationKey } from '../queues/slack-thread';
import type { Ready } from './before-send';
import { RetryableTaskError, type ChargedTask, type InvokerParts, type TaskRun } from './invoker-parts';
import { requeueForSession, waitsForSession } from './session-busy';
import type { Sent } from './send-task';
import { askerCall } from '../queues/asker';
import type { TaskInputs } from './task-inputs';

/**
 * agent-invoker's last step (src/verification/invoke/agent-invoker.ts): an answer is settled, an
 * accepted task gets its first poll, a failure is retried or told.
 */
type Outcome_ = Extract<Sent, { kind: 'outcome' }> & { inputs: TaskInputs; charged: ChargedTask };

export async function afterOutcome(p: InvokerParts, run: TaskRun, ready: Ready, sent: Outcome_): Promise<void> {
  const { options, clock, trace, settlement } = p;
  const { task, log, delivery } = run;
  const { outcome } = sent;
  switch (outcome.kind) {
    case 'success':
      return settlement.settle(sent.charged, outcome, { log, notes: sent.inputs.notes, details: { duration_ms: clock.now() - sent.sentAt } });
    case 'pending':
      return firstPoll(p, run, ready, { ...sent, outcome });
    case 'input-required':
      return askFromTask(p, run, ready, { ...sent, outcome });
    case 'failure':
      // Its session serves another call of the thread: it waits its turn, spending no receive, telling no one.
      if (options.tasks && waitsForSession(outcome, task)) {
        const requeued = await requeueForSession(options.tasks, task);
        log.info('the AgentCore session is busy with another call; the task waits its turn', { requeued });
        trace({ requestId: task.request_id, hop: 'retry', at: clock.now(), detail: { code: outcome.code, requeued } });
        return;
      }
      if (outcome.retryable && delivery.receiveCount < options.maxReceiveCount) {
        log.warn('transient failure; the task will be retried', { category: outcome.category, code: outcome.code, error_message: outcome.message, receive_count: delivery.receiveCount });
        trace({ requestId: task.request_id, hop: 'retry', at: clock.now(), detail: { code: outcome.code, receive_count: delivery.receiveCount } });
        throw new RetryableTaskError(`transient failure ${outcome.code}`);
      }
      // A permanent failure, or a transient one on the last receive: the user is told the specific
      // reason now. A transient one still fails the record, so the DLQ keeps it.
      await settlement.settle(sent.charged, outcome, { log, details: { receive_count: delivery.receiveCount }, shown: sent.held?.received ?? 0 });
      if (outcome.retryable) throw new RetryableTaskError(`giving up after ${delivery.receiveCount} attempts: ${outcome.code}`, true);
  }
}

/** An accepted task: recorded so a Stop finds it, what it brought shown, and its first poll queued. */
async function firstPoll(p: InvokerParts, run: TaskRun, ready: Ready, sent: Outcome_ & { outcome: Extract<Outcome, { kind: 'pending' }> }): Promise<void> {
  const { options, clock, trace, settlement } = p;
  const { task, thread, log } = run;
  const { agent, target } = ready;
  const { outcome, held, holdMs } = sent;
  const call = { requestId: task.request_id, sessionKey: conversationKey(thread), correlationId: task.request_id, signal: run.context.signal, ...askerCall(task) };
  if (options.work) {
    // A Stop that came while execute_task was on its way had no handle to cancel with: cancel now.
    if (await options.work.isStopped(task.request_id)) {
      const cancelled = await agent.cancel(outcome.handle, call);
      log.info('the task was stopped while it was being sent; cancelled it', { task_id: outcome.handle.taskId, cancelled: cancelled.failure === undefined });
      return settlement.stopped(sent.charged, { log, agent: agent.name, reached: true, shown: outcome.partial?.length ?? 0, ...(cancelled.usage ? { reported: cancelled.usage } : {}) });
    }
    if (!held) await options.work.accepted({ request_id: task.request_id, user_id: task.user_id, thread, agent: agent.name, handle: outcome.handle });
  }
  // A held stream showed its text as it came; otherwise the text the answer brought is shown now.
  const streamed = held ? held.received : (outcome.partial?.length ?? 0);
  if (!held && outcome.steps && options.live) {
    const { signal, deadline } = run.context;
    await options.live.reply.showSteps(target, outcome.steps, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) });
  }
  if (!held && outcome.partial && options.live) {
    const { signal, deadline } = run.context;
    await options.live.reply.show(target, 0, outcome.partial, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) });
    options.metrics?.answerLatency('first-text', agent.name, clock.now() - task.received_at);
    trace({ requestId: task.request_id, hop: 'streamed', at: clock.now(), detail: { chars: streamed } });
  }
  // While text flows, the next look comes soon (at once after a whole hold: it holds again); otherwise the usual backoff.
  const delaySeconds = held ? delayAfterHold(held, holdMs, { flowingSeconds: options.live?.pollDelaySeconds ?? 0, quietSeconds: pollDelaySeconds(options.schedule, 0) }) : streamed > 0 && options.live ? options.live.pollDelaySeconds : pollDelaySeconds(options.schedule, 0);
  await options.polls.send(
    {
      ...thread,
      request_id: task.request_id,
      event_id: task.event_id,
      user_id: task.user_id,
      handle: outcome.handle,
      attempt: 0,
      // The poll deadline counts from when the task was sent when its stream was held.
      accepted_at: held ? sent.sentAt : clock.now(),
      received_at: task.received_at,
      // Every poll and the cancel go to the agent that accepted it, whatever the configuration says later.
      agent: agent.name,
      ...(sent.inputs.notes.length ? { notes: sent.inputs.notes } : {}),
      ...(streamed > 0 ? { streamed, since_text: held && !held.texted ? 1 : 0 } : {}),
      input_chars: sent.charged.input_chars,
      ...(run.round ? { round: run.round } : {}),
    },
    { delaySeconds, attributes: { request_id: task.request_id } },
  );
  log.info('task accepted; first poll queued', { task_id: outcome.handle.taskId, delay_seconds: delaySeconds, ...(held ? { held_ms: Math.round(held.heldMs), streamed } : {}) });
  if (!sent.acceptedTraced) trace({ requestId: task.request_id, hop: 'accepted', at: clock.now(), detail: { task_id: outcome.handle.taskId, next_poll_s: delaySeconds } });
}

/** The agent asked a question: the task pauses until it is answered (src/verification/questions/ask-question.ts). */
async function askFromTask(p: InvokerParts, run: TaskRun, ready: Ready, sent: Outcome_ & { outcome: InputRequiredOutcome }): Promise<void> {
  const { options, clock, trace, settlement } = p;
  const { task, thread, log } = run;
  const { agent } = ready;
  const { outcome } = sent;
  if (!options.questions) throw new Error('a question reached an invoker that takes none');
  // A Stop that came while the call was on its way had no handle to cancel with: cancel now.
  if (options.work && (await options.work.isStopped(task.request_id))) {
    const failure = await agent.cancel(outcome.handle, { requestId: task.request_id, sessionKey: conversationKey(thread), correlationId: task.request_id, signal: run.context.signal });
    log.info('the task was stopped while it was being sent; cancelled it', { task_id: outcome.handle.taskId, cancelled: failure === undefined });
    return settlement.stopped(sent.charged, { log, agent: agent.name, reached: true, shown: sent.held?.received ?? 0 });
  }
  await askQuestion(
    { room: options.questions, replies: options.replies, polls: options.polls, ...(options.work ? { work: options.work } : {}), clock, trace, log },
    { ...task, agent: agent.name, input_chars: sent.charged.input_chars, notes: sent.inputs.notes },
    { outcome, round: run.round ?? 0, shown: sent.held?.received ?? 0 },
  );
}
