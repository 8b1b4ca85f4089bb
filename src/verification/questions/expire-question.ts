import type { Clock } from '../../clock';
import type { Log } from '../../observability/logger';
import type { ExecutionAgent } from '../../protocols/execution-agent';
import type { Queue } from '../../queue/queue';
import type { UserMessages } from '../messages/user-messages';
import type { PollsQueueMessage, QuestionExpiry } from '../queues/polls-queue';
import type { RepliesQueueMessage } from '../queues/replies-queue';
import { conversationKey } from '../queues/slack-thread';
import type { Settlement } from '../settle/settle-outcome';
import { once } from '../stores/once';
import type { ThreadWork } from '../stores/thread-work';
import type { Tracer } from '../trace';
import { EXPIRY_LEASE_S, MAX_TIMER_DELAY_S, pauseTtlSeconds, type QuestionRoom } from './question-room';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * async-result's timer of a question (docs/architecture.md, "Questions"; the polls queue's
 * `question-expiry`): before the time comes it is sent again (an SQS delay is at most 15
 * minutes); then an unanswered question closes (`waiting` → `expired`, one conditional write: an
 * answer that came first wins), and — once (`expire#<request id>#<round>`) — the task is cancelled
 * in the execution zone, the question's buttons go, and the thread is told. A question answered
 * or stopped meanwhile leaves the timer nothing to do.
 */
export type ExpireParts = {
  room: QuestionRoom;
  agentOf: (name: string) => ExecutionAgent | undefined;
  polls: Pick<Queue<PollsQueueMessage>, 'send'>;
  replies: Pick<Queue<RepliesQueueMessage>, 'send'>;
  settlement: Pick<Settlement, 'reply' | 'stopped'>;
  messages: UserMessages;
  work?: ThreadWork;
  clock: Clock;
  trace: Tracer;
  log: Log;
};

export async function expireQuestion(p: ExpireParts, timer: QuestionExpiry, call: { signal?: AbortSignal }): Promise<void> {
  const { room, clock } = p;
  const pause = await room.pauses.get(timer.request_id);
  if (!pause || pause.round !== timer.round) return;
  const now = clock.now();
  if (pause.state === 'waiting' && now < pause.expires_at_ms) {
    const delaySeconds = Math.min(MAX_TIMER_DELAY_S, Math.ceil((pause.expires_at_ms - now) / 1000));
    await p.polls.send({ ...timer, expires_at_ms: pause.expires_at_ms }, { delaySeconds, attributes: { request_id: timer.request_id } });
    return;
  }
  if (pause.state === 'waiting' && !(await room.pauses.close(timer.request_id, timer.round, 'expired', { closed_by: 'expiry' }, pauseTtlSeconds(room)))) {
    p.log.info('the question was closed as it expired; the other close stands', { request_id: timer.request_id });
    return;
  }
  const closed = (await room.pauses.get(timer.request_id)) ?? pause;
  if (closed.state !== 'expired') return;
  const log = p.log;
  const expired = await once(room.claims, `${STATE_KEYS.expire.prefix}${timer.request_id}#${timer.round}`, { leaseSeconds: EXPIRY_LEASE_S, ttlSeconds: pauseTtlSeconds(room) }, async () => {
    const agent = p.agentOf(closed.agent);
    const cancel = agent ? await agent.cancel(closed.handle, { requestId: closed.request_id, sessionKey: conversationKey(closed.thread), correlationId: closed.request_id, ...(call.signal ? { signal: call.signal } : {}) }) : undefined;
    const failed = cancel?.failure;
    if (failed) log.warn('cancel_task failed for an expired question; the execution zone will expire the task', { request_id: closed.request_id, code: failed.kind === 'failure' ? failed.code : undefined });
    await p.replies.send({ ...closed.thread, kind: 'question-closed', request_id: closed.request_id, round: closed.round });
    p.trace({ requestId: closed.request_id, hop: 'question-expired', at: clock.now(), detail: { round: closed.round, cancelled: agent !== undefined && failed === undefined } });
    const task = { ...closed.thread, request_id: closed.request_id, received_at: closed.received_at, agent: closed.agent, user_id: closed.asker, ...(closed.input_chars !== undefined ? { input_chars: closed.input_chars } : {}) };
    // Its end is claimed as a Stop's would be: a Stop pressed now finds it over, and one that came first keeps its own note.
    if (p.work && (await p.work.end(closed.request_id, 'settled')) === 'stopped') return { result: undefined };
    await p.settlement.stopped(task, { log, agent: closed.agent, reached: true, shown: closed.shown ?? 0, ...(cancel?.usage ? { reported: cancel.usage } : {}) });
    await p.settlement.reply(task, 'error', p.messages.questionExpired);
    log.info('an unanswered question expired; the task was cancelled', { request_id: closed.request_id, round: closed.round });
    return { result: undefined };
  });
  // Another delivery is cancelling it now: this one comes back (SQS), and finds it done or takes over a dead one.
  if (expired.status === 'busy') throw new Error('another delivery of this question\'s timer is expiring it');
}
