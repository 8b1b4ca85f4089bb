import type { Queue } from '../../queue/queue';
import type { RepliesQueueMessage } from '../queues/replies-queue';
import { pauseTtlSeconds, type QuestionRoom } from './question-room';

/**
 * A Stop while a question waits (src/verification/stop/stop-task.ts; docs/architecture.md,
 * "Questions"): the pause closes (`waiting` → `stopped`, so a later click is told it is closed and
 * the timer finds nothing to do), and the question's buttons go. The Stop itself cancels the task
 * and sends the stopped note, as for any task. Idempotent: a redelivered Stop finds it closed.
 */
export async function closeQuestionOnStop(room: QuestionRoom, replies: Pick<Queue<RepliesQueueMessage>, 'send'>, requestId: string): Promise<void> {
  const pause = await room.pauses.get(requestId);
  if (!pause) return;
  if (pause.state === 'waiting' && !(await room.pauses.close(requestId, pause.round, 'stopped', { closed_by: 'stop' }, pauseTtlSeconds(room)))) return;
  if (pause.state !== 'waiting' && pause.closed_by !== 'stop') return;
  await replies.send({ ...pause.thread, kind: 'question-closed', request_id: requestId, round: pause.round });
}
