import type { Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import { SlackApiError } from '../../slack/slack-api-error';
import type { SlackReplies } from '../../slack/slack-port';
import type { ReplyMessage } from '../queues/replies-queue';
import type { SlackThread } from '../queues/slack-thread';

/**
 * SLACK_REACTIONS: the user's message says how its task is going — agent-invoker adds 👀 when a
 * task starts, slack-poster puts ✅ or ⚠️ in its place once the reply is out.
 */
/** 👀 while a task runs; ✅ or ⚠️ once its reply is posted. */
export const REACTIONS = { received: 'eyes', answered: 'white_check_mark', failed: 'warning' } as const;

/** Adds 👀 to the user's message: the invoker calls this when a task starts (with reactions on). */
export async function acknowledgeReceipt(slack: SlackReplies, thread: Pick<SlackThread, 'channel' | 'ts'>): Promise<void> {
  await slack.addReaction({ channel: thread.channel, timestamp: thread.ts, name: REACTIONS.received });
}

export async function markDone(slack: SlackReplies, message: ReplyMessage, log: Log, metrics: PipelineMetrics | undefined): Promise<void> {
  // A notice (refusal, hint) never had a task, so there is no 👀 to replace.
  const done = message.kind === 'answer' ? REACTIONS.answered : message.kind === 'error' ? REACTIONS.failed : undefined;
  if (!done) return;
  const target = { channel: message.channel, timestamp: message.ts };
  const steps: Array<[string, () => Promise<void>]> = [
    [`remove ${REACTIONS.received}`, () => slack.removeReaction({ ...target, name: REACTIONS.received })],
    [`add ${done}`, () => slack.addReaction({ ...target, name: done })],
  ];
  for (const [step, run] of steps) {
    try {
      await run();
    } catch (error) {
      // The reply is out; a missing emoji is not worth a redelivery that could not repost anyway.
      const code = error instanceof SlackApiError ? error.code : 'unknown_error';
      metrics?.slackApiError(code);
      log.warn('could not update the reaction; the reply itself was posted', { step, code });
    }
  }
}

