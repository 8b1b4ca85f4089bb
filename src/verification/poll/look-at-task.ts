import type { AgentOutcome, PendingHandle } from '../../protocols/outcome';
import { liveTargetOf } from '../live/live-parts';
import { FLUSH_RULES, holdMsFor, holdStream, type HoldEnd } from '../live/stream-hold';
import { personaFor } from '../routing/agent-directory';
import type { PollerParts, PollRun } from './poller-parts';

/**
 * async-result's look at the task (src/verification/poll/async-result.ts): a plain
 * `get_task_result`, or — while text flows, for an answer shown live — the stream held from its
 * cursor (docs/architecture.md §2.5). What the look brought is shown as it comes.
 */
export type Look =
  | { kind: 'looked'; outcome: AgentOutcome; held?: HoldEnd; holdMs: number; /** Text a plain poll brought. */ partial: string }
  /** The user stopped the task while its stream was held. */
  | { kind: 'stopped'; /** Characters shown before the Stop. */ shown: number };

export async function lookAtTask(p: PollerParts, run: PollRun): Promise<Look> {
  const { options, clock, trace } = p;
  const { message, agent } = run;
  const streamedBefore = message.streamed ?? 0;
  const quietPolls = message.since_text ?? 0;
  const hold = heldStream(p, run);
  let held: HoldEnd | undefined;
  let holdMs = 0;
  // Text flowed at the last look: hold the stream from its cursor straight away.
  const flowing = streamedBefore > 0 && quietPolls === 0;
  if (flowing && (holdMs = holdMsOf(p, run)) > 0) {
    held = await hold(message.handle, streamedBefore, holdMs);
    return held.outcome ? { kind: 'looked', outcome: held.outcome, held, holdMs, partial: '' } : { kind: 'stopped', shown: held.received };
  }
  const polled: AgentOutcome = await agent.poll(message.handle, run.call);
  const partial = polled.kind === 'pending' ? (polled.partial ?? '') : '';
  // The steps the poll found (no stream between polls): shown once, as the record counts them.
  if (polled.kind === 'pending' && polled.steps && options.live) await options.live.reply.showSteps(targetOf(p, run), polled.steps, slackCallOf(run));
  // A task that streams: show what it produced since the last poll.
  if (partial && options.live) {
    await options.live.reply.show(targetOf(p, run), streamedBefore, partial, slackCallOf(run));
    if (streamedBefore === 0) options.metrics?.answerLatency('first-text', agent.name, clock.now() - message.received_at);
    trace({ requestId: message.request_id, hop: 'streamed', at: clock.now(), detail: { chars: streamedBefore + partial.length } });
  }
  // Text is flowing now: hold the stream from here instead of polling again in a moment.
  if (partial && polled.kind === 'pending' && (holdMs = holdMsOf(p, run)) > 0) {
    held = await hold(polled.handle, streamedBefore + partial.length, holdMs);
    if (!held.outcome) return { kind: 'stopped', shown: held.received };
    return { kind: 'looked', outcome: held.outcome, held, holdMs, partial };
  }
  return { kind: 'looked', outcome: polled, holdMs, partial };
}

/** How long this poll may hold the stream: 0 where answers are not shown live or the agent does not stream. */
function holdMsOf(p: PollerParts, run: PollRun): number {
  const { options, clock, deadlineMs } = p;
  const { message, agent } = run;
  return options.live && agent.streams ? holdMsFor(agent.streamHoldMs, clock.now(), run.context.deadline, deadlineMs - (clock.now() - message.accepted_at)) : 0;
}

/** Holds the task's stream from `before`, showing its text, until the hold's end, the answer's, or a Stop. */
function heldStream(p: PollerParts, run: PollRun): (handle: PendingHandle, before: number, holdMs: number) => Promise<HoldEnd> {
  const { options, clock, trace } = p;
  const { message, agent } = run;
  const signal = run.context.signal;
  return (handle, before, holdMs) =>
    holdStream((holdSignal) => agent.pollStreaming(handle, { ...run.call, signal: holdSignal, holdMs }), {
      before,
      handle,
      show: async (from, delta) => {
        await options.live!.reply.show(targetOf(p, run), from, delta, slackCallOf(run));
        if (from === 0) options.metrics?.answerLatency('first-text', agent.name, clock.now() - message.received_at);
        trace({ requestId: message.request_id, hop: 'streamed', at: clock.now(), detail: { chars: from + delta.length } });
      },
      showSteps: (steps) => options.live!.reply.showSteps(targetOf(p, run), steps, slackCallOf(run)),
      ...(options.work ? { stopped: () => options.work!.isStopped(message.request_id) } : {}),
      rules: { ...FLUSH_RULES, quietMs: agent.streamQuietMs },
      ...(signal ? { signal } : {}),
    });
}

/** Where the live answer shows, posted as the agent. */
function targetOf(p: PollerParts, run: PollRun) {
  return { ...liveTargetOf(run.message), ...personaFor(p.options, run.agent) };
}

/** The Slack calls' options: the delivery's signal and deadline. */
function slackCallOf(run: PollRun): { signal?: AbortSignal; deadline?: number } {
  const { signal, deadline } = run.context;
  return { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) };
}
