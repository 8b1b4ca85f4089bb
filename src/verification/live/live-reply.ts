import type { MessageBlock } from '../../slack/feedback-blocks';
import type { AgentSessionStatus } from '../../slack/slack-assistant';
import type { SlackCallOptions } from '../../slack/slack-port';
import type { StepsShown } from '../../protocols/outcome';
import { endSession, finish, type FinalSteps } from './live-finish';
import { interim, sessionStatus } from './live-interim';
import { showSteps } from './live-steps';
import { livePartsOf, type LiveReplyOptions, type LiveTarget, type ReplyKind } from './live-parts';
import { show } from './live-preview';
import { signOfLife } from './sign-of-life';

/**
 * Live answers (docs/architecture.md §2.5): a sign of life as soon as a task is picked up, and the
 * answer shown in Slack while the agent produces it — a Slack stream where Slack allows one, else a
 * message that is updated, else nothing until the final answer. The final answer always ends up
 * exactly once, as the agent wrote it: slack-poster finishes the live message with it.
 *
 * Every Slack call that makes or changes the live message is claimed on the record first (an
 * intent, `pending`, owned by a random token), and only the writer that holds the claim makes it:
 * - a start (the sign of life, or the live message on the first text): of two copies of one task
 *   (SQS holds two when a send's answer was lost and the client sent it again), one starts it and
 *   the other leaves it alone. A start whose writer died is taken over once its lease is over; a
 *   writer that finds its claim gone when it records what it started (taken over, or closed by the
 *   final answer) stops the stream it made, so no stream stays at "working…";
 * - a preview: the record counts the piece (`shown`) before Slack shows it, then the claim is
 *   settled. A failed write of the intent shows nothing (the piece comes with a later step or the
 *   final answer), so no piece shows twice; a write whose answer was lost recognises itself (its
 *   token), so previews go on. An append Slack may or may not have applied (no answer), or an
 *   intent whose writer is gone, marks the record dirty: previews stop, and the final answer
 *   rewrites the message whole.
 */
export function createLiveReply(options: LiveReplyOptions) {
  // Its steps, one file each: sign-of-life.ts, live-preview.ts and live-steps.ts (agent-invoker and async-result),
  // live-finish.ts (slack-poster); starting the message under its claim, live-start.ts.
  const p = livePartsOf(options);
  return {
    signOfLife: (target: LiveTarget, call: SlackCallOptions = {}, how: { title?: string } = {}) => signOfLife(p, target, call, how),
    show: (target: LiveTarget, before: number, delta: string, call: SlackCallOptions = {}) => show(p, target, before, delta, call),
    showSteps: (target: LiveTarget, steps: StepsShown, call: SlackCallOptions = {}) => showSteps(p, target, steps, call),
    finish: (requestId: string, text: string, kind: ReplyKind, call: SlackCallOptions & { blocks?: readonly MessageBlock[]; steps?: FinalSteps } = {}) => finish(p, requestId, text, kind, call),
    endSession: (requestId: string, call: SlackCallOptions = {}) => endSession(p, requestId, call),
    // A question pauses the task (live-interim.ts): what was shown stays, the session is suspended and resumed.
    interim: (requestId: string, call: SlackCallOptions = {}) => interim(p, requestId, call),
    sessionStatus: (requestId: string, status: AgentSessionStatus, call: SlackCallOptions = {}) => sessionStatus(p, requestId, status, call),
  };
}

export type LiveReplyService = ReturnType<typeof createLiveReply>;
