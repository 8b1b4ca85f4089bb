import { systemClock } from '../clock';
import { taskLogger } from '../observability/logger';
import type { DeliveryHandler } from '../queue/queue';
import type { FollowUpOptions } from './follow-up-options';
import { pollDelaySeconds } from './poll-schedule';
import { parseQueueMessage } from './poison-message';
import { PollMessageSchema, conversationKey, type PollMessage } from './queue-messages';
import { createSettlement } from './settle-outcome';
import { liveTargetOf } from './live-reply';
import { noTrace } from './trace';

export type AsyncResultOptions = FollowUpOptions;

/**
 * The async-result function: one poll per invocation. Still pending (or a transient fault) →
 * the next poll message with the next backoff delay; done → reply; past the deadline → cancel
 * the task in the execution zone, so it stops spending model time, and tell the user.
 * Nothing sleeps here: the wait between polls is an SQS message timer.
 */
export function createAsyncResult(options: AsyncResultOptions): DeliveryHandler {
  const clock = options.clock ?? systemClock;
  const trace = options.trace ?? noTrace;
  const settlement = createSettlement({ ...options, trace, clock });
  const deadlineMs = options.schedule.deadlineSeconds * 1000;

  const poll: DeliveryHandler = async (delivery, { signal, deadline }) => {
    const message = parseQueueMessage(PollMessageSchema, delivery.body, 'poll message');
    const log = taskLogger(options.log, { request_id: message.request_id, correlation_id: message.request_id, event_id: message.event_id, task_id: message.handle.taskId });
    // The conversation's session: the one that runs the task (agent-invoker started it there).
    const call = { requestId: message.request_id, sessionKey: conversationKey(message), correlationId: message.request_id, signal };
    // Stopped by the user: the Stop cancelled the task and sent its one final message; polling ends here.
    if (options.work && (await options.work.isStopped(message.request_id))) {
      log.info('the task was stopped; polling ends');
      return;
    }
    const started = clock.now();
    const outcome = await options.agent.poll(message.handle, call);
    settlement.counted('poll', outcome, started);
    const attempt = message.attempt + 1;
    trace({ requestId: message.request_id, hop: 'poll', at: clock.now(), detail: { attempt, outcome: outcome.kind, ...(outcome.kind === 'pending' && outcome.state ? { state: outcome.state } : {}) } });

    if (outcome.kind === 'success' || (outcome.kind === 'failure' && !outcome.retryable)) {
      return settlement.settle(message, outcome, { log, notes: message.notes, details: { polls: attempt, since_accepted_ms: clock.now() - message.accepted_at } });
    }
    if (outcome.kind === 'failure') log.warn('transient failure while polling; polling on', { category: outcome.category, code: outcome.code, error_message: outcome.message });

    // A task that streams: show what it produced since the last poll, and look again soon.
    const streamedBefore = message.streamed ?? 0;
    const partial = outcome.kind === 'pending' ? (outcome.partial ?? '') : '';
    if (partial && options.live) {
      await options.live.reply.show(liveTargetOf(message), streamedBefore, partial, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) });
      trace({ requestId: message.request_id, hop: 'streamed', at: clock.now(), detail: { chars: streamedBefore + partial.length } });
    }
    const streaming = streamedBefore + partial.length > 0;
    const quietPolls = message.since_text ?? 0;

    const elapsed = clock.now() - message.accepted_at;
    if (elapsed >= deadlineMs) {
      log.warn('task passed the poll deadline: cancelling it', { deadline_s: options.schedule.deadlineSeconds, polls: attempt });
      const cancelFailure = await options.agent.cancel(message.handle, call);
      if (cancelFailure) log.warn('cancel_task failed; the execution zone will expire the task', { code: cancelFailure.kind === 'failure' ? cancelFailure.code : undefined });
      return settlement.reply(message, 'error', options.messages.timedOut);
    }
    // Never wait past the deadline: the last poll lands on it. While text flows, look again soon;
    // when it stops, back off from there.
    const nextDelay = partial && options.live ? options.live.pollDelaySeconds : pollDelaySeconds(options.schedule, streaming ? quietPolls : attempt);
    const delaySeconds = Math.min(nextDelay, Math.ceil((deadlineMs - elapsed) / 1000));
    const next: PollMessage = {
      ...message,
      attempt,
      // The handle of the latest answer: with a cursor, the next poll gets only newer text.
      handle: outcome.kind === 'pending' ? outcome.handle : message.handle,
      ...(streaming ? { streamed: streamedBefore + partial.length, since_text: partial ? 0 : quietPolls + 1 } : {}),
    };
    await options.polls.send(next, { delaySeconds, attributes: { request_id: message.request_id } });
    log.debug('still pending; next poll queued', { attempt, delay_seconds: delaySeconds });
  };

  return settlement.lastReceiveApology(poll, 'poll');
}
