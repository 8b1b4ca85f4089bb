import { taskLogger, type Log } from '../observability/logger';
import type { PipelineMetrics } from '../observability/metrics';
import type { Delivery } from '../queue/queue';
import { SlackApiError, type SlackReplies } from '../slack/slack-replies';
import { SLACK_CHUNK_LIMIT, splitForSlack } from '../slack/split-message';
import { parseQueueMessage } from './poison-message';
import { ReplyMessageSchema, replyThreadTs, type ReplyMessage, type SlackThread } from './queue-messages';
import type { ClaimStore } from './stores/claim-store';
import { noTrace, type Tracer } from './trace';

/** 👀 while a task runs; ✅ or ⚠️ once its reply is posted. */
export const REACTIONS = { received: 'eyes', answered: 'white_check_mark', failed: 'warning' } as const;

/**
 * How long a posted chunk stays claimed. SQS keeps a message for at most 14 days, so no
 * redelivery of a reply can outlive its claims.
 */
export const DEFAULT_REPLY_CLAIM_TTL_SECONDS = 14 * 24 * 60 * 60;

export type SlackPosterOptions = {
  /** With a bot token that may rotate, build it with `slackRepliesFromSecret`. */
  replies: SlackReplies;
  claims: ClaimStore;
  /** SLACK_REACTIONS: mark the user's message ✅ (answer) or ⚠️ (error) in place of 👀. */
  reactions: boolean;
  log: Log;
  claimTtlSeconds?: number;
  /**
   * The replies queue's maxReceiveCount: a chunk that fails on that receive goes to the DLQ, and
   * the user has not been answered — logged as an error, for an operator to redrive.
   */
  maxReceiveCount?: number;
  /** Longest message posted, in UTF-16 code units. @default SLACK_CHUNK_LIMIT */
  chunkLimit?: number;
  metrics?: PipelineMetrics;
  trace?: Tracer;
  now?: () => number;
};

/**
 * The slack-poster function: one reply message → its text, split to Slack's size, posted in
 * order in the user's thread; then, if enabled, the reaction on the user's message.
 *
 * Each chunk is claimed (`reply#<request_id>#<index>`) before it is posted and released if the
 * post fails, so a redelivered message posts only the chunks that are not out yet. The claim is
 * made first on purpose: if the function dies between claim and post, that chunk is lost rather
 * than posted twice, and a duplicate answer is the more visible fault in a thread.
 */
export type SlackPoster = (delivery: Delivery, context?: { signal?: AbortSignal }) => Promise<void>;

export function createSlackPoster(options: SlackPosterOptions): SlackPoster {
  const slack = options.replies;
  const ttlSeconds = options.claimTtlSeconds ?? DEFAULT_REPLY_CLAIM_TTL_SECONDS;
  const limit = options.chunkLimit ?? SLACK_CHUNK_LIMIT;
  const trace = options.trace ?? noTrace;
  const now = options.now ?? Date.now;

  return async (delivery, context) => {
    const message = parseQueueMessage(ReplyMessageSchema, delivery.body, 'reply message');
    const log = taskLogger(options.log, { request_id: message.request_id, correlation_id: message.request_id });
    const chunks = splitForSlack(message.text, limit);
    if (chunks.length === 0) {
      // Slack refuses a message with no visible text; retrying would not change that.
      log.warn('the reply has no visible text; nothing to post', { kind: message.kind });
      return;
    }

    const threadTs = replyThreadTs(message);
    const startedAt = now();
    let posted = 0;
    for (const [index, text] of chunks.entries()) {
      // Out of time (the Lambda is about to stop): leave the rest unclaimed for the redelivery.
      context?.signal?.throwIfAborted();
      const key = `reply#${message.request_id}#${index}`;
      if (!(await options.claims.claim(key, ttlSeconds))) {
        log.info('chunk already posted by an earlier delivery; skipped', { chunk: index, receive_count: delivery.receiveCount });
        continue;
      }
      try {
        await slack.post({ channel: message.channel, threadTs, text });
        posted += 1;
      } catch (error) {
        await options.claims.release(key).catch((releaseError: unknown) =>
          log.error('could not release the claim of a chunk that was not posted; it will not be retried', { chunk: index, error: releaseError as Error }),
        );
        const code = error instanceof SlackApiError ? error.code : 'unknown_error';
        options.metrics?.slackApiError(code);
        const lastReceive = options.maxReceiveCount !== undefined && delivery.receiveCount >= options.maxReceiveCount;
        const details = { chunk: index, chunks: chunks.length, code, retryable: error instanceof SlackApiError ? error.retryable : undefined, receive_count: delivery.receiveCount };
        if (lastReceive) log.error('posting the reply failed on its last receive: it goes to the replies DLQ and the user has no answer until it is redriven', details);
        else log.warn('posting the reply failed; SQS will deliver it again', details);
        throw error;
      }
    }
    options.metrics?.latency('post', now() - startedAt);
    log.info('reply posted', { kind: message.kind, chunks: chunks.length, posted });
    trace({ requestId: message.request_id, hop: 'reply-posted', at: now(), detail: { kind: message.kind, chunks: chunks.length, posted } });

    // Also on a redelivery that posted nothing new: the earlier delivery may have died before
    // reacting, and reacting twice is harmless (already_reacted and no_reaction are ignored).
    if (options.reactions) await markDone(slack, message, log, options.metrics);
  };
}

/** Adds 👀 to the user's message: the invoker calls this when a task starts (with reactions on). */
export async function acknowledgeReceipt(slack: SlackReplies, thread: Pick<SlackThread, 'channel' | 'ts'>): Promise<void> {
  await slack.addReaction({ channel: thread.channel, timestamp: thread.ts, name: REACTIONS.received });
}

async function markDone(slack: SlackReplies, message: ReplyMessage, log: Log, metrics: PipelineMetrics | undefined): Promise<void> {
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
