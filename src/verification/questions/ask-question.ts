import type { Log } from '../../observability/logger';
import type { InputRequiredOutcome } from '../../protocols/outcome';
import type { Queue } from '../../queue/queue';
import type { Clock } from '../../clock';
import type { PollsQueueMessage } from '../queues/polls-queue';
import type { RepliesQueueMessage } from '../queues/replies-queue';
import { threadOf, type SlackThread } from '../queues/slack-thread';
import type { ThreadWork } from '../stores/thread-work';
import type { Pause } from '../stores/pauses';
import type { Tracer } from '../trace';
import { MAX_TIMER_DELAY_S, pauseTtlSeconds, type QuestionRoom } from './question-room';

/**
 * agent-invoker and async-result, when an agent answers with a question (docs/architecture.md,
 * "Questions"): the task pauses. Its pause is recorded (who asked, the agent and its handle, the
 * question, the expiry), the question goes to slack-poster to be posted with its buttons
 * (show-question.ts), and its timer to the polls queue (expire-question.ts). The thread's task
 * keeps its handle, so a Stop cancels it while it waits. Every step may be repeated: a redelivered
 * question finds its pause and posts nothing twice.
 */
export type AskParts = {
  room: QuestionRoom;
  replies: Pick<Queue<RepliesQueueMessage>, 'send'>;
  polls: Pick<Queue<PollsQueueMessage>, 'send'>;
  work?: ThreadWork;
  clock: Clock;
  trace: Tracer;
  log: Log;
};

/** The task that asks: where it answers, who asked it, and what its settlement will need. */
export type AskingTask = SlackThread & { request_id: string; event_id: string; user_id: string; received_at: number; agent: string; input_chars?: number; notes?: readonly string[] };

export async function askQuestion(p: AskParts, task: AskingTask, asked: { outcome: InputRequiredOutcome; round: number; shown: number }): Promise<void> {
  const { room, clock } = p;
  const thread = threadOf(task);
  const { outcome, round } = asked;
  const now = clock.now();
  // A Stop cancels it from now on: the thread's task holds the handle.
  await p.work?.accepted({ request_id: task.request_id, user_id: task.user_id, thread, agent: task.agent, handle: outcome.handle });
  const pause: Pause = {
    request_id: task.request_id,
    round,
    state: 'waiting',
    thread,
    event_id: task.event_id,
    asker: task.user_id,
    agent: task.agent,
    handle: outcome.handle,
    question: outcome.question,
    expires_at_ms: now + room.timeoutSeconds * 1000,
    received_at: task.received_at,
    ...(task.input_chars !== undefined ? { input_chars: task.input_chars } : {}),
    ...(task.notes?.length ? { notes: [...task.notes] } : {}),
    ...(asked.shown > 0 ? { shown: asked.shown } : {}),
  };
  const stored = await room.pauses.open(pause, pauseTtlSeconds(room));
  if (stored.round !== round || stored.state !== 'waiting') {
    p.log.info('the question was asked before and no longer waits; nothing to post', { round, state: stored.state });
    return;
  }
  await p.replies.send({ ...thread, kind: 'question', request_id: task.request_id, round });
  const delaySeconds = Math.min(MAX_TIMER_DELAY_S, Math.max(0, Math.ceil((stored.expires_at_ms - now) / 1000)));
  await p.polls.send({ kind: 'question-expiry', request_id: task.request_id, round, expires_at_ms: stored.expires_at_ms }, { delaySeconds, attributes: { request_id: task.request_id } });
  p.log.info('the agent asked a question; the task waits for an answer', { question_id: outcome.question.id, round, options: outcome.question.options?.length ?? 0, free_text: outcome.question.free_text !== undefined, expires_in_s: room.timeoutSeconds });
  p.trace({ requestId: task.request_id, hop: 'asked', at: now, detail: { question_id: outcome.question.id, round, task_id: outcome.handle.taskId } });
}
