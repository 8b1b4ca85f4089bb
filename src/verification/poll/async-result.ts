import { systemClock } from '../../clock';
import { taskLogger } from '../../observability/logger';
import type { DeliveryHandler } from '../../queue/queue';
import { agentNamed, personaFor } from '../routing/agent-directory';
import type { FollowUpOptions } from '../follow-up-options';
import { pollDelaySeconds } from './poll-schedule';
import { parseQueueMessage } from '../queues/poison-message';
import { PollMessageSchema, conversationKey, type PollMessage } from '../queues/queue-messages';
import { createSettlement } from '../settle/settle-outcome';
import { kindOf } from '../queues/surface-messages';
import { liveTargetOf } from '../live/live-reply';
import { noTrace } from '../trace';
import type { Outcome, PendingHandle } from '../../protocols/outcome';
import { delayAfterHold, FLUSH_RULES, holdMsFor, holdStream, type HoldEnd } from '../live/stream-hold';

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
    // The polls queue carries the delayed session checks too (AGENTCORE_STOP_SESSION=quiet-…).
    if (kindOf(delivery.body) === 'session-check') {
      if (options.sessions) return options.sessions.check(delivery.body, signal ? { signal } : {});
      options.log.info('a session check arrived but AGENTCORE_STOP_SESSION no longer asks for it; ignored');
      return;
    }
    const message = parseQueueMessage(PollMessageSchema, delivery.body, 'poll message');
    const log = taskLogger(options.log, { request_id: message.request_id, correlation_id: message.request_id, event_id: message.event_id, task_id: message.handle.taskId, agent: message.agent ?? options.agent.name });
    // The conversation's session: the one that runs the task (agent-invoker started it there).
    const call = { requestId: message.request_id, sessionKey: conversationKey(message), correlationId: message.request_id, signal };
    // The agent that accepted the task (a poll of a version before routing names none: the default).
    const agent = agentNamed(options, message.agent);
    if (!agent) {
      if (options.work && (await options.work.isStopped(message.request_id))) return;
      log.warn('the task was accepted by an execution agent that is no longer configured; telling the user', { agent: message.agent });
      trace({ requestId: message.request_id, hop: 'failed', at: clock.now(), detail: { code: 'agent-removed', agent: message.agent } });
      return settlement.reply(message, 'error', options.messages.agentRemoved);
    }
    // Stopped by the user: the Stop cancelled the task and sent its one final message; polling ends here.
    if (options.work && (await options.work.isStopped(message.request_id))) {
      log.info('the task was stopped; polling ends');
      return settlement.stopped(message, { log, agent: agent.name, reached: true, shown: message.streamed ?? 0 });
    }
    const started = clock.now();
    const slackCall = { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) };
    const target = { ...liveTargetOf(message), ...personaFor(options, agent) };
    const streamedBefore = message.streamed ?? 0;
    const quietPolls = message.since_text ?? 0;
    // Live answers from an agent that streams: while text flows, the stream is held (docs/architecture.md §2.5).
    const holdFor = () => (options.live && agent.streams ? holdMsFor(agent.streamHoldMs, clock.now(), deadline, deadlineMs - (clock.now() - message.accepted_at)) : 0);
    const hold = (handle: PendingHandle, before: number, holdMs: number): Promise<HoldEnd> =>
      holdStream((holdSignal) => agent.pollStreaming(handle, { ...call, signal: holdSignal, holdMs }), {
        before,
        handle,
        show: async (from, delta) => {
          await options.live!.reply.show(target, from, delta, slackCall);
          if (from === 0) options.metrics?.answerLatency('first-text', agent.name, clock.now() - message.received_at);
          trace({ requestId: message.request_id, hop: 'streamed', at: clock.now(), detail: { chars: from + delta.length } });
        },
        ...(options.work ? { stopped: () => options.work!.isStopped(message.request_id) } : {}),
        rules: { ...FLUSH_RULES, quietMs: agent.streamQuietMs },
        ...(signal ? { signal } : {}),
      });

    let polled: Outcome | undefined;
    let partial = '';
    let held: HoldEnd | undefined;
    let holdMs = 0;
    // Text flowed at the last look: hold the stream from its cursor straight away.
    const flowing = streamedBefore > 0 && quietPolls === 0;
    if (flowing && (holdMs = holdFor()) > 0) {
      held = await hold(message.handle, streamedBefore, holdMs);
    } else {
      polled = await agent.poll(message.handle, call);
      partial = polled.kind === 'pending' ? (polled.partial ?? '') : '';
      // A task that streams: show what it produced since the last poll.
      if (partial && options.live) {
        await options.live.reply.show(target, streamedBefore, partial, slackCall);
        if (streamedBefore === 0) options.metrics?.answerLatency('first-text', agent.name, clock.now() - message.received_at);
        trace({ requestId: message.request_id, hop: 'streamed', at: clock.now(), detail: { chars: streamedBefore + partial.length } });
      }
      // Text is flowing now: hold the stream from here instead of polling again in a moment.
      if (partial && polled.kind === 'pending' && (holdMs = holdFor()) > 0) held = await hold(polled.handle, streamedBefore + partial.length, holdMs);
    }
    if (held && !held.outcome) {
      log.info('the task was stopped while its stream was held; polling ends');
      return settlement.stopped(message, { log, agent: agent.name, reached: true, shown: held.received });
    }
    const outcome: Outcome = held?.outcome ?? polled!;
    settlement.counted('poll', outcome, started, agent);
    const attempt = message.attempt + 1;
    trace({ requestId: message.request_id, hop: 'poll', at: clock.now(), detail: { attempt, outcome: outcome.kind, ...(outcome.kind === 'pending' && outcome.state ? { state: outcome.state } : {}), ...(held ? { held_ms: Math.round(held.heldMs) } : {}) } });

    if (outcome.kind === 'success' || (outcome.kind === 'failure' && !outcome.retryable)) {
      return settlement.settle(message, outcome, { log, notes: message.notes, details: { polls: attempt, since_accepted_ms: clock.now() - message.accepted_at }, shown: held ? held.received : streamedBefore + partial.length });
    }
    if (outcome.kind === 'failure') log.warn('transient failure while polling; polling on', { category: outcome.category, code: outcome.code, error_message: outcome.message });

    // Everything received so far, and whether text came in this look.
    const received = held ? held.received : streamedBefore + partial.length;
    const grew = received > streamedBefore;
    const streaming = received > 0;

    const elapsed = clock.now() - message.accepted_at;
    if (elapsed >= deadlineMs) {
      log.warn('task passed the poll deadline: cancelling it', { deadline_s: options.schedule.deadlineSeconds, polls: attempt });
      const cancelFailure = await agent.cancel(message.handle, call);
      if (cancelFailure) log.warn('cancel_task failed; the execution zone will expire the task', { code: cancelFailure.kind === 'failure' ? cancelFailure.code : undefined });
      return settlement.reply(message, 'error', options.messages.timedOut);
    }
    // Never wait past the deadline: the last poll lands on it. While text flows, look again soon;
    // when it stops, back off from there.
    const quietSeconds = pollDelaySeconds(options.schedule, streaming ? quietPolls : attempt);
    // Text this look counts whether the hold or the plain poll before it brought it: an agent that
    // cannot stream a poll (an A2A agent has no streamed poll) answers the hold at once, textless.
    const heldNow = held && { ...held, texted: held.texted || partial.length > 0 };
    const nextDelay = heldNow ? delayAfterHold(heldNow, holdMs, { flowingSeconds: options.live?.pollDelaySeconds ?? quietSeconds, quietSeconds }) : grew && options.live ? options.live.pollDelaySeconds : quietSeconds;
    const delaySeconds = Math.min(nextDelay, Math.ceil((deadlineMs - elapsed) / 1000));
    const next: PollMessage = {
      ...message,
      attempt,
      // The handle of the latest answer: with a cursor, the next poll gets only newer text.
      handle: outcome.kind === 'pending' ? outcome.handle : (held?.handle ?? message.handle),
      ...(streaming ? { streamed: received, since_text: grew ? 0 : quietPolls + 1 } : {}),
    };
    await options.polls.send(next, { delaySeconds, attributes: { request_id: message.request_id } });
    log.debug('still pending; next poll queued', { attempt, delay_seconds: delaySeconds });
  };

  return settlement.lastReceiveApology(poll, 'poll');
}
