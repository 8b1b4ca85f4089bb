import type { PollMessage } from '../queues/polls-queue';
import { delayAfterHold } from '../live/stream-hold';
import { pollDelaySeconds } from '../poll-schedule';
import type { PollerParts, PollRun } from './poller-parts';
import type { Look } from './look-at-task';
import { failure, type InputRequiredOutcome } from '../../protocols/outcome';
import { askQuestion } from '../questions/ask-question';

/**
 * async-result's last step (src/verification/poll/async-result.ts): an answer or a permanent
 * failure is settled; past the deadline the task is cancelled and the user told; otherwise the
 * next poll is queued — soon while text flows, at the backoff when it does not.
 */
export async function afterLook(p: PollerParts, run: PollRun, look: Extract<Look, { kind: 'looked' }>): Promise<void> {
  const { options, clock, trace, settlement, deadlineMs } = p;
  const { message, agent, log } = run;
  const { outcome, held, holdMs, partial } = look;
  const attempt = message.attempt + 1;
  trace({ requestId: message.request_id, hop: 'poll', at: clock.now(), detail: { attempt, outcome: outcome.kind, ...(outcome.kind === 'pending' && outcome.state ? { state: outcome.state } : {}), ...(held ? { held_ms: Math.round(held.heldMs) } : {}) } });

  // A question (docs/architecture.md, "Questions"): the task waits for a person, not for a poll.
  if (outcome.kind === 'input-required') {
    return askFromPoll(p, run, outcome, held ? held.received : (message.streamed ?? 0) + partial.length);
  }
  if (outcome.kind === 'success' || (outcome.kind === 'failure' && !outcome.retryable)) {
    return settlement.settle(message, outcome, { log, notes: message.notes, details: { polls: attempt, since_accepted_ms: clock.now() - message.accepted_at }, shown: held ? held.received : (message.streamed ?? 0) + partial.length });
  }
  if (outcome.kind === 'failure') log.warn('transient failure while polling; polling on', { category: outcome.category, code: outcome.code, error_message: outcome.message });

  const elapsed = clock.now() - message.accepted_at;
  if (elapsed >= deadlineMs) {
    log.warn('task passed the poll deadline: cancelling it', { deadline_s: options.schedule.deadlineSeconds, polls: attempt });
    const { failure: cancelFailure, usage } = await agent.cancel(message.handle, run.call);
    if (cancelFailure) log.warn('cancel_task failed; the execution zone will expire the task', { code: cancelFailure.kind === 'failure' ? cancelFailure.code : undefined });
    // Settled like any failure: the user told it took too long, the task charged what its cancel reported (else the estimate), its reservation given back.
    const timedOut = { ...failure('timed-out', 'poll:deadline', 'the task passed the poll deadline and was cancelled', false), ...(usage ? { usage } : {}) };
    return settlement.settle(message, timedOut, { log, notes: message.notes, details: { polls: attempt, since_accepted_ms: elapsed }, shown: held ? held.received : (message.streamed ?? 0) + partial.length });
  }
  // Everything received so far, and whether text came in this look.
  const streamedBefore = message.streamed ?? 0;
  const quietPolls = message.since_text ?? 0;
  const received = held ? held.received : streamedBefore + partial.length;
  const grew = received > streamedBefore;
  const streaming = received > 0;
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
}

/** The task asked a question: it pauses until answered (src/verification/questions/ask-question.ts); polling ends here. */
async function askFromPoll(p: PollerParts, run: PollRun, outcome: InputRequiredOutcome, shown: number): Promise<void> {
  const { options, clock, trace } = p;
  const { message, agent, log } = run;
  if (!options.questions) throw new Error('a question reached a poller that takes none');
  await askQuestion(
    { room: options.questions, replies: options.replies, polls: options.polls, ...(options.work ? { work: options.work } : {}), clock, trace, log },
    { ...message, agent: agent.name, ...(message.notes ? { notes: message.notes } : {}) },
    { outcome, round: message.round ?? 0, shown },
  );
}
