import { askerOf } from '../../contract';
import { taskLogger } from '../../observability/logger';
import type { Delivery, DeliveryContext } from '../../queue/queue';
import { liveTargetOf } from '../live/live-parts';
import type { UserMessages } from '../messages/user-messages';
import { judgeAnswer, type Verdict } from '../questions/answer-rules';
import { pauseTtlSeconds, RESUME_LEASE_S } from '../questions/question-room';
import { conversationKey, replyThreadTs } from '../queues/slack-thread';
import type { AnswerMessage, TaskMessage } from '../queues/tasks-queue';
import { agentNamed, personaFor } from '../routing/agent-directory';
import { once } from '../stores/once';
import type { Pause } from '../stores/pauses';
import { afterOutcome } from './after-send';
import { RetryableTaskError, type InvokerParts, type TaskRun } from './invoker-parts';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * agent-invoker's answer to a question (docs/architecture.md, "Questions"): a click or a typed
 * answer, checked against the pause (answer-rules.ts) — anyone but the asker and the agent's
 * approvers gets an ephemeral refusal, and nothing changes. The first answer closes the pause
 * (`waiting` → `answered`, one conditional write); a later one is told the question is closed.
 * Then the **same** task is resumed once (`once`, `resume#<request id>#<round>`): a redelivery of
 * the winning answer finds the pause closed by it and the resume done, or takes over a resume whose
 * delivery died. The question's buttons go (slack-poster's `question-closed`), and the resumed
 * task goes on as a sent one does (after-send.ts): answered, polled, or asking again.
 */
export async function resumeTask(p: InvokerParts, answer: AnswerMessage, delivery: Delivery, context: DeliveryContext): Promise<void> {
  const { options, clock, trace } = p;
  const log = taskLogger(options.log, { request_id: answer.request_id, correlation_id: answer.request_id, event_id: answer.event_id });
  const room = options.questions;
  if (!room) {
    log.warn('an answer to a question arrived where questions are not taken; dropped');
    return;
  }
  const pause = await room.pauses.get(answer.request_id);
  const verdict = judgeAnswer(pause, answer, pause ? room.approvers?.(pause.agent) : undefined);
  // A redelivery of the answer that won: the pause is closed by it, and the resume goes on.
  const winner = pause?.round === answer.round && pause.state === 'answered' && pause.closed_by === answer.event_id;
  if (!verdict.ok && !winner) return refuse(p, answer, pause, verdict.reason);
  if (verdict.ok) {
    const by = { ...verdict.answer, user: answer.user_id };
    const closed = await room.pauses.close(answer.request_id, answer.round, 'answered', { closed_by: answer.event_id, answer: by }, pauseTtlSeconds(room));
    if (!closed) {
      // Another answer (or the expiry, or a Stop) got there first — unless this is its own write, resent after its answer was lost.
      const now = await room.pauses.get(answer.request_id);
      if (now?.closed_by !== answer.event_id) return refuse(p, answer, now, 'closed');
    }
  }
  const closedPause = await room.pauses.get(answer.request_id);
  if (!closedPause?.answer) {
    log.warn('the answered pause is gone (its lifetime ended); nothing to resume', { round: answer.round });
    return;
  }
  trace({ requestId: answer.request_id, hop: 'answered', at: clock.now(), detail: { round: answer.round, user: answer.user_id, answer: closedPause.answer?.label } });
  const resumed = await once(room.claims, `${STATE_KEYS.resume.prefix}${answer.request_id}#${answer.round}`, { leaseSeconds: RESUME_LEASE_S, ttlSeconds: pauseTtlSeconds(room) }, async () => {
    await resumeOnce(p, closedPause, { delivery, context, log });
    return { result: undefined };
  });
  if (resumed.status === 'busy') throw new RetryableTaskError('another delivery of this answer is resuming the task');
  if (resumed.status === 'duplicate') log.info('the task was resumed already by this answer; nothing to do', { round: answer.round });
}

/** The answered pause's task, resumed: its buttons replaced, the agent given the answer, its outcome taken as a sent task's. */
async function resumeOnce(p: InvokerParts, pause: Pause, how: { delivery: Delivery; context: DeliveryContext; log: TaskRun['log'] }): Promise<void> {
  const { options, clock } = p;
  const { delivery, context, log } = how;
  const given = pause.answer!;
  await options.replies.send({ ...pause.thread, kind: 'question-closed', request_id: pause.request_id, round: pause.round });
  const agent = agentNamed(options, pause.agent);
  const task: TaskMessage = {
    ...pause.thread,
    request_id: pause.request_id,
    event_id: pause.event_id,
    user_id: pause.asker,
    text: pause.question.text,
    received_at: pause.received_at,
    agent: pause.agent,
  };
  if (!agent) {
    log.warn('the task was paused by an execution agent that is no longer configured; telling the user', { agent: pause.agent });
    return p.settlement.reply(task, 'error', options.messages.agentRemoved);
  }
  const sentAt = clock.now();
  const call = { requestId: pause.request_id, sessionKey: conversationKey(pause.thread), correlationId: pause.request_id, signal: context.signal, ...askerIdOf(pause) };
  const answeredBy = askerOf(pause.thread.team_id, given.user);
  const outcome = await agent.resume(pause.handle, { question_id: pause.question.id, ...(given.value !== undefined ? { value: given.value } : { text: given.text ?? '' }), ...(answeredBy ? { answered_by: answeredBy } : {}) }, call);
  p.settlement.counted('execute', outcome, sentAt, agent);
  log.info('task resumed with the answer', { round: pause.round, outcome: outcome.kind, task_id: pause.handle.taskId });
  const run: TaskRun = { task, thread: pause.thread, log, delivery, context, round: pause.round + 1 };
  const ready = { agent, target: { ...liveTargetOf(task), ...personaFor(options, agent) } };
  await afterOutcome(p, run, ready, { kind: 'outcome', outcome, sentAt, holdMs: 0, acceptedTraced: false, inputs: { notes: pause.notes ?? [] }, charged: { ...task, input_chars: pause.input_chars ?? 0 } });
}

/** Who asked, for the transport (AgentCore's runtimeUserId, the https header): the same on a resume as on the task. */
function askerIdOf(pause: Pause): { askerId?: string } {
  const asker = askerOf(pause.thread.team_id, pause.asker);
  return asker ? { askerId: asker.id } : {};
}

/** The one who answered is told why nothing happened (ephemeral); the question stays as it is. */
async function refuse(p: InvokerParts, answer: AnswerMessage, pause: Pause | undefined, reason: Extract<Verdict, { ok: false }>['reason']): Promise<void> {
  const { options, clock, trace } = p;
  options.log.info('an answer to a question was refused', { request_id: answer.request_id, round: answer.round, user: answer.user_id, reason });
  trace({ requestId: answer.request_id, hop: 'answer-refused', at: clock.now(), detail: { user: answer.user_id, reason } });
  // Clicked in another team or channel than the question's: not ours to answer there. The one who
  // answered it clicking again (a double click) is not told their own answer closed it.
  if (reason === 'elsewhere' || (!answer.channel && !pause)) return;
  if (reason === 'closed' && pause?.state === 'answered' && pause.answer?.user === answer.user_id) return;
  const text = refusalText(options.messages, reason);
  const channel = answer.channel || pause!.thread.channel;
  await options.replies.send({ kind: 'action', id: answer.event_id, action: { type: 'ephemeral', channel, user: answer.user_id, text, ...(pause ? { thread_ts: replyThreadTs(pause.thread) } : {}) } });
}

function refusalText(messages: UserMessages, reason: 'closed' | 'not-yours' | 'no-such-option'): string {
  return reason === 'not-yours' ? messages.questionNotYours : messages.questionClosed;
}
