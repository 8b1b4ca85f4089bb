import type { Clock } from '../../clock';
import type { Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { Delivery, DeliveryHandler, Queue } from '../../queue/queue';
import { SlackThreadSchema } from '../queues/slack-thread';
import { type ReplyMessage } from '../queues/replies-queue';
import type { Tracer } from '../trace';

/**
 * Every verified event ends in exactly one reply. When a task or poll message fails on its last
 * receive (it is about to go to the DLQ), the user is told — if the message says where the
 * thread is — and the failure is rethrown so the record still reaches the DLQ for operators.
 */
export function withLastReceiveApology(
  handler: DeliveryHandler,
  options: {
    maxReceiveCount: number;
    replies: Queue<ReplyMessage>;
    apology: string;
    log: Log;
    trace?: Tracer;
    /** The clock the dead-lettered hop is traced on. */
    clock: Clock;
    /** Errors whose handler already told the user. */
    skip?: (error: unknown) => boolean;
    /** Counts the message given up on (MessagesAbandoned, alarmed on). */
    metrics?: PipelineMetrics;
    stage: 'execute' | 'poll';
  },
): DeliveryHandler {
  return async (delivery, context) => {
    try {
      await handler(delivery, context);
    } catch (error) {
      if (delivery.receiveCount >= options.maxReceiveCount) {
        options.metrics?.messageAbandoned(options.stage);
        if (!options.skip?.(error)) await apologize(delivery, options);
      }
      throw error;
    }
  };
}

async function apologize(delivery: Delivery, options: { replies: Queue<ReplyMessage>; apology: string; log: Log; trace?: Tracer; clock: Clock }): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse(delivery.body);
  } catch {
    body = undefined;
  }
  const thread = SlackThreadSchema.safeParse(body);
  const requestId = typeof (body as { request_id?: unknown })?.request_id === 'string' ? (body as { request_id: string }).request_id : delivery.messageId;
  if (!thread.success) {
    options.log.error('a message is going to the DLQ and names no Slack thread: nobody can be told', { message_id: delivery.messageId });
    return;
  }
  try {
    await options.replies.send({ ...thread.data, request_id: requestId, kind: 'error', text: options.apology });
    options.log.error('last receive failed: the user was sent an apology and the message goes to the DLQ', { request_id: requestId, receive_count: delivery.receiveCount });
    options.trace?.({ requestId, hop: 'dead-lettered', at: options.clock.now(), detail: { apologized: true } });
  } catch (error) {
    options.log.error('could not queue the apology for a dead-lettered message', { request_id: requestId, error: error as Error });
  }
}
