import { systemClock, type Clock } from '../../clock';
import { taskLogger, type Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import { randomUUID } from 'node:crypto';
import type { Delivery, DeliveryContext } from '../../queue/queue';
import { SlackApiError } from '../../slack/slack-api-error';
import type { ReplyMarker, SlackPersona, SlackReplies } from '../../slack/slack-port';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';
import { SLACK_CHUNK_LIMIT, splitForSlack } from '../../slack/split-message';
import { parseQueueMessage } from '../queues/poison-message';
import { ActionMessageSchema, FeedbackMessageSchema, kindOf } from '../queues/surface-messages';
import type { AssistantSurface } from '../surface/assistant-surface';
import type { ThreadWork } from '../stores/thread-work';
import { feedbackBlocks, type MessageBlock } from '../../slack/feedback-blocks';
import { ReplyMessageSchema, conversationOf, replyThreadTs, threadOf, type ReplyMessage, type SlackThread } from '../queues/queue-messages';
import type { LiveReplyService } from '../live/live-reply';
import type { BotThreads } from '../stores/bot-threads';
import type { ClaimStore } from '../stores/claim-store';
import { REPLY_CHUNK_LEASE_SECONDS } from '../pipeline-settings';
import { noTrace, type Tracer } from '../trace';

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
   * The replies queue's maxReceiveCount. A reply that fails on that receive goes to the DLQ: the
   * user is sent `fallbackText` instead (once), and the failure is logged at ERROR for an operator
   * to fix and redrive.
   */
  maxReceiveCount?: number;
  /**
   * What the user is told, once per reply, when their reply cannot be posted: its last receive
   * failed, or it had no visible text. A short message without the answer's content, so it gets
   * through where the answer did not (too long, refused for its text, a chunk in the way). Without
   * it the user is not told.
   */
  fallbackText?: string;
  /**
   * Where an answered thread is recorded, so later replies there are taken without a mention
   * (THREAD_FOLLOW_UPS), for `threadTtlSeconds` after the last answer.
   */
  threads?: { store: BotThreads; ttlSeconds: number };
  /** Live answers (STREAM_REPLIES): the final answer finishes the message its previews were shown in. */
  live?: LiveReplyService;
  /** The agent surface: the Slack calls the intake asks for, and feedback (docs/architecture.md §2.6). */
  surface?: AssistantSurface;
  /** Feedback buttons under every answer (FEEDBACK_BUTTONS). */
  feedbackButtons?: boolean;
  /** What runs in each thread: a task whose final message is out is marked finished, so a later Stop finds nothing. */
  work?: ThreadWork;
  /** Longest message posted, in UTF-16 code units. @default SLACK_CHUNK_LIMIT */
  chunkLimit?: number;
  metrics?: PipelineMetrics;
  trace?: Tracer;
  clock?: Clock;
};

/**
 * The slack-poster function: one reply message → its text, split to Slack's size, posted in
 * order in the user's thread; then, if enabled, the reaction on the user's message.
 *
 * Each chunk is claimed (`reply#<request_id>#<index>`, docs/architecture.md §6) before it is
 * posted and marked done — with the `ts` Slack gave it — only once Slack confirmed it. A
 * redelivery skips done chunks, waits for a chunk another delivery is posting right now (SQS
 * brings it back), and takes over a chunk whose poster died once its lease is over: a dead poster
 * never swallows a chunk. Before posting a taken-over chunk it reads the thread back for the
 * chunk's metadata, so a post that landed unconfirmed is not posted twice; only where the thread
 * cannot be read is it posted again — a repost, never a loss.
 *
 * The last receive (docs/operations.md, "Alarms and dead-letter queues"): when a reply fails on
 * the replies queue's maxReceiveCount it goes to the DLQ, and the user is told with a short
 * fallback post of its own (claimed as `reply#<request_id>#fallback`, so a redrive or a duplicate
 * never posts it twice). A redrive then posts the chunks not yet out.
 */
export type SlackPoster = (delivery: Delivery, context?: DeliveryContext) => Promise<void>;

/** Another delivery of the same reply holds this chunk's claim: come back later (SQS redelivers). */
export class ChunkInProgressError extends Error {
  override name = 'ChunkInProgressError';
}

/** The chunk number the fallback post carries in its metadata (real chunks count from 0). */
export const FALLBACK_CHUNK = -1;

/** Where a reply goes, and who it is posted as (the answering agent's name and icon). */
type PostTarget = { channel: string; threadTs: string; persona?: SlackPersona };
/** One message of a reply: its claim key, its metadata marker, its text. */
type Piece = { key: string; marker: ReplyMarker; text: string; label: string; blocks?: MessageBlock[] };

export function createSlackPoster(options: SlackPosterOptions): SlackPoster {
  const slack = options.replies;
  const ttlSeconds = options.claimTtlSeconds ?? DEFAULT_REPLY_CLAIM_TTL_SECONDS;
  const limit = options.chunkLimit ?? SLACK_CHUNK_LIMIT;
  const trace = options.trace ?? noTrace;
  const clock = options.clock ?? systemClock;

  return async (delivery, context = {}) => {
    // The replies queue carries the agent surface's Slack calls and feedback too (docs/architecture.md §2.6).
    const kind = kindOf(delivery.body);
    if (kind === 'action' || kind === 'feedback') {
      if (!options.surface) {
        options.log.warn('a Slack action or feedback arrived but this deployment has no agent surface; ignored', { kind });
        return;
      }
      const call = { ...(context.signal ? { signal: context.signal } : {}), ...(context.deadline !== undefined ? { deadline: context.deadline } : {}) };
      if (kind === 'action') return options.surface.act(parseQueueMessage(ActionMessageSchema, delivery.body, 'Slack action message'), call);
      return options.surface.feedback(parseQueueMessage(FeedbackMessageSchema, delivery.body, 'feedback message'), call);
    }
    const message = parseQueueMessage(ReplyMessageSchema, delivery.body, 'reply message');
    const log = taskLogger(options.log, { request_id: message.request_id, correlation_id: message.request_id });
    const chunks = splitForSlack(toSafeMrkdwn(message.text), limit);
    const target: PostTarget = { channel: message.channel, threadTs: replyThreadTs(message), ...personaOf(message) };
    if (chunks.length === 0) {
      // Slack refuses a message with no visible text; retrying would not change that. The
      // functions that write replies never send one (answerReply), so this is a bug upstream: the
      // user gets the fallback rather than silence (a failed fallback is retried by SQS).
      log.error(options.fallbackText === undefined ? 'the reply has no visible text; nothing to post' : 'the reply has no visible text; the user is sent the fallback message instead', { kind: message.kind });
      options.metrics?.replyLost('empty');
      if (options.fallbackText !== undefined) {
        await postPiece(target, fallbackPiece(message), context, log);
        await taskOver(message, context, log);
        if (options.reactions) await markDone(slack, { ...message, kind: 'error' }, log, options.metrics);
      }
      return;
    }

    const startedAt = clock.now();
    let posted = 0;
    const alreadyOut: string[] = [];
    for (const [index, text] of chunks.entries()) {
      // The feedback buttons go under the last message of an answer (docs/architecture.md §2.6, "Feedback").
      const blocks = options.feedbackButtons && message.kind === 'answer' && index === chunks.length - 1 ? feedbackBlocks({ requestId: message.request_id, ...(message.agent ? { agent: message.agent } : {}) }) : undefined;
      // The Stop's note has claims of its own: it never takes (or is taken by) a chunk of the answer.
      const piece: Piece = { key: `${message.kind === 'stopped' ? 'stop-note' : 'reply'}#${message.request_id}#${index}`, marker: { requestId: message.request_id, chunk: index }, text, label: `chunk ${index}`, ...(blocks ? { blocks } : {}) };
      try {
        // The first chunk of a task whose answer was shown live goes into that message (it replaces
        // the previews, exactly once: finishing again rewrites it the same).
        const live = index === 0 && options.live ? options.live : undefined;
        const result = await postPiece(target, piece, context, log, live && (() => live.finish(message.request_id, text, message.kind, { ...context, ...(blocks ? { blocks } : {}) })));
        if (result.posted) posted += 1;
        else alreadyOut.push(result.ts);
      } catch (error) {
        throw await failure(error, { log, delivery, message, target, context, chunk: index, chunks: chunks.length, posted });
      }
    }
    options.metrics?.latency('post', clock.now() - startedAt);
    if (message.kind === 'answer' && message.received_at !== undefined && posted > 0) options.metrics?.answerLatency('final', message.agent ?? 'default', clock.now() - message.received_at);
    if (posted === 0) log.info('every chunk was already posted by an earlier delivery', { chunks: chunks.length, ts: alreadyOut, receive_count: delivery.receiveCount });
    else log.info('reply posted', { kind: message.kind, chunks: chunks.length, posted, receive_count: delivery.receiveCount });
    trace({ requestId: message.request_id, hop: 'reply-posted', at: clock.now(), detail: { kind: message.kind, chunks: chunks.length, posted } });

    // The bot has spoken in this thread: a reply there is for it without a new mention. Notices
    // (refusals) do not count. Best effort: a lost record costs the next reply a mention, no more.
    if (options.threads && message.kind !== 'notice') {
      await options.threads.store
        .remember(conversationOf(message), options.threads.ttlSeconds)
        .catch((error: unknown) => log.warn('could not record the thread as one the bot answered in; a follow-up there needs a mention', { error: error as Error }));
    }

    await taskOver(message, context, log);

    // Also on a redelivery that posted nothing new: the earlier delivery may have died before
    // reacting, and reacting twice is harmless (already_reacted and no_reaction are ignored).
    if (options.reactions) await markDone(slack, message, log, options.metrics);
  };

  /**
   * The task's final message is out — its reply, or the fallback that tells the user instead: its
   * agent session leaves `processing` (Slack's Stop button goes), and a later Stop finds nothing to
   * stop. Notices (refusals) had no task. Never throws.
   */
  async function taskOver(message: ReplyMessage, context: DeliveryContext, log: Log): Promise<void> {
    if (message.kind === 'notice') return;
    await options.live?.endSession(message.request_id, context);
    await options.work?.finished(threadOf(message), message.request_id).catch((error: unknown) => log.warn('could not record the task as finished', { error: error as Error }));
  }

  function fallbackPiece(message: ReplyMessage): Piece {
    const text = splitForSlack(toSafeMrkdwn(options.fallbackText ?? ''), limit)[0] ?? '';
    return { key: `reply#${message.request_id}#fallback`, marker: { requestId: message.request_id, chunk: FALLBACK_CHUNK }, text, label: 'the fallback message' };
  }

  /**
   * Posts one message of a reply exactly once across deliveries: claimed before it is posted,
   * marked done with Slack's `ts` once Slack confirmed it. `posted: false` when an earlier delivery
   * already did. `finishLive` (the first chunk of a reply shown live) puts the text into the live
   * message instead of posting a new one, when Slack takes it there.
   */
  async function postPiece(target: PostTarget, piece: Piece, context: DeliveryContext, log: Log, finishLive?: () => Promise<string | undefined>): Promise<{ ts: string; posted: boolean }> {
    // Out of time (the Lambda is about to stop): leave the rest for the redelivery.
    context.signal?.throwIfAborted();
    const token = randomUUID();
    const claim = await options.claims.acquire(piece.key, { token, leaseSeconds: REPLY_CHUNK_LEASE_SECONDS, ttlSeconds });
    if (claim.status === 'done') return { ts: claim.value ?? '', posted: false };
    if (claim.status === 'busy') throw new ChunkInProgressError(`${piece.label} is being posted by another delivery until ${new Date(claim.leaseEndsAt).toISOString()}`);
    const release = () => options.claims.release(piece.key, token).catch(() => undefined);
    if (finishLive) {
      let live: string | undefined;
      try {
        live = await finishLive();
      } catch (error) {
        const refusedForGood = error instanceof SlackApiError && error.outcome === 'refused' && !error.retryable;
        if (!refusedForGood) {
          if (!(error instanceof SlackApiError && error.outcome === 'unknown')) await release();
          throw error;
        }
        // Slack will not take it into that message (deleted, not editable): a new message then.
        log.warn('could not finish the live message; posting the answer as a new message', { code: error.code });
      }
      if (live !== undefined) {
        await options.claims
          .complete(piece.key, token, { ttlSeconds, value: live })
          .catch((error: unknown) => log.error('the live message was finished but could not be marked done; a redelivery finishes it again', { ts: live, error: error as Error }));
        return { ts: live, posted: true };
      }
    }
    if (claim.takenOver) {
      // The poster before may have died after Slack posted it: look before posting again.
      const found = await findPosted(slack, target, piece.marker, context, log);
      log.warn('took over a chunk whose poster did not finish', { chunk: piece.marker.chunk, already_posted: found !== undefined });
      if (found !== undefined) {
        await options.claims.complete(piece.key, token, { ttlSeconds, value: found });
        return { ts: found, posted: false };
      }
    }
    let ts: string;
    try {
      ({ ts } = await slack.post({ ...target, text: piece.text, marker: piece.marker, ...(piece.blocks ? { blocks: piece.blocks } : {}) }, context));
    } catch (error) {
      // Refused by Slack: nothing was posted, the next delivery may take it at once.
      // Unknown (no answer): it may be out; the lease keeps it until the redelivery.
      if (!(error instanceof SlackApiError && error.outcome === 'unknown')) await release();
      throw error;
    }
    await options.claims
      .complete(piece.key, token, { ttlSeconds, value: ts })
      .catch((error: unknown) => log.error('a chunk was posted but could not be marked done; a redelivery may post it again', { chunk: piece.marker.chunk, ts, error: error as Error }));
    return { ts, posted: true };
  }

  /**
   * Logs a failed delivery and returns the error to throw (SQS redelivers the reply, or moves it to
   * the DLQ). On the last receive the user is told with the fallback message first, and the log
   * line — at ERROR, with a RepliesLost metric — says whether they were.
   */
  async function failure(
    error: unknown,
    at: { log: Log; delivery: Delivery; message: ReplyMessage; target: PostTarget; context: DeliveryContext; chunk: number; chunks: number; posted: number },
  ): Promise<unknown> {
    const code = errorCode(error);
    if (error instanceof SlackApiError) options.metrics?.slackApiError(code);
    const lastReceive = options.maxReceiveCount !== undefined && at.delivery.receiveCount >= options.maxReceiveCount;
    const details = { chunk: at.chunk, chunks: at.chunks, posted: at.posted, code, retryable: error instanceof SlackApiError ? error.retryable : undefined, receive_count: at.delivery.receiveCount, error: error as Error };
    if (!lastReceive) {
      at.log.warn('posting the reply failed; SQS will deliver it again', details);
      return error;
    }
    if (error instanceof ChunkInProgressError) {
      // A second copy of the reply (SQS delivers at least once) is posting this chunk right now:
      // that delivery answers the user, or tells them on its own last receive.
      at.log.error('the reply\'s last receive found another delivery posting the same chunk: it goes to the replies DLQ, and that delivery posts it; a redrive posts only chunks still missing', details);
      return error;
    }
    options.metrics?.replyLost(code);
    const told = await tellUser(at.message, at.target, at.context, at.log);
    if (told.told) {
      at.log.error('posting the reply failed on its last receive: the user was sent the fallback message, and the reply goes to the replies DLQ; fix the cause and redrive it to post the chunks not yet out', { ...details, user_told: true });
    } else {
      at.log.error('posting the reply failed on its last receive and the fallback message could not be posted either: it goes to the replies DLQ and the user has no answer until it is redriven', {
        ...details,
        user_told: false,
        fallback_code: told.code,
      });
    }
    return error;
  }

  /** The fallback post on a last receive; never throws. */
  async function tellUser(message: ReplyMessage, target: PostTarget, context: DeliveryContext, log: Log): Promise<{ told: true } | { told: false; code: string }> {
    if (options.fallbackText === undefined) return { told: false, code: 'no_fallback_text' };
    // The function is about to stop: no call could finish (SQS moves the reply to the DLQ).
    if (context.signal?.aborted) return { told: false, code: 'no_time_left' };
    try {
      await postPiece(target, fallbackPiece(message), context, log);
    } catch (error) {
      const code = errorCode(error);
      if (error instanceof SlackApiError) options.metrics?.slackApiError(code);
      return { told: false, code };
    }
    trace({ requestId: message.request_id, hop: 'dead-lettered', at: clock.now(), detail: { apologized: true } });
    await taskOver(message, context, log);
    // ⚠️ in place of 👀, as for any error reply.
    if (options.reactions) await markDone(slack, { ...message, kind: 'error' }, log, options.metrics);
    return { told: true };
  }
}

function errorCode(error: unknown): string {
  return error instanceof SlackApiError ? error.code : error instanceof ChunkInProgressError ? 'in_progress' : 'unknown_error';
}

/** The chunk's message in the thread, if the sink can look; a failed look is a WARN and counts as "not there". */
async function findPosted(slack: SlackReplies, thread: { channel: string; threadTs: string }, marker: ReplyMarker, context: DeliveryContext, log: Log): Promise<string | undefined> {
  if (!slack.findPosted) return undefined;
  try {
    return await slack.findPosted(thread, marker, context);
  } catch (error) {
    const code = error instanceof SlackApiError ? error.code : 'unknown_error';
    // missing_scope: an install without the *:history scopes. Posting again is the old behaviour.
    log.warn('could not read the thread back to see whether the chunk is already out; posting it', { chunk: marker.chunk, code });
    return undefined;
  }
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

/** The reply's persona as the Slack port takes it. */
function personaOf(message: ReplyMessage): { persona?: SlackPersona } {
  const persona = message.persona;
  if (!persona?.username && !persona?.icon_emoji) return {};
  return { persona: { ...(persona.username ? { username: persona.username } : {}), ...(persona.icon_emoji ? { iconEmoji: persona.icon_emoji } : {}) } };
}
