import { systemClock, type Clock } from '../../clock';
import { taskLogger, type Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { Delivery, DeliveryContext } from '../../queue/queue';
import { SlackApiError } from '../../slack/slack-api-error';
import type { SlackPersona, SlackReplies } from '../../slack/slack-port';
import type { Guardrail } from '../../guardrail/guardrail';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';
import { SLACK_CHUNK_LIMIT, splitForSlack } from '../../slack/split-message';
import { ActionMessageSchema, FeedbackMessageSchema, ReplyMessageSchema, type RepliesQueueMessage, type ReplyMessage } from '../queues/replies-queue';
import { consumeByKind, type QueueRow } from '../queues/queue-consumer';
import type { AssistantSurface } from '../surface/assistant-surface';
import type { ThreadWork } from '../stores/thread-work';
import { feedbackBlocks } from '../../slack/feedback-blocks';
import { conversationOf, replyThreadTs, threadOf } from '../queues/slack-thread';
import type { LiveReplyService } from '../live/live-reply';
import { withStepsLine } from '../live/live-parts';
import { finalCards, stepsOfReply, type StepLineTexts } from '../live/step-cards';
import type { BotThreads } from '../stores/bot-threads';
import type { ClaimStore } from '../stores/claim-store';
import { noTrace, type Tracer } from '../trace';
import { ChunkInProgressError, postPiece, type Piece, type PostTarget } from './post-piece';
import { guardedReplyText } from './guard-output';
import { markDone } from './reactions';
import { FileUploader } from '../files-out/file-uploader';
import { MemoryFileUploadStates } from '../files-out/memory-upload-states';
import type { OutgoingFiles } from '../files-out/outgoing-files';
import { shareAnswerFiles } from './share-answer-files';
import type { ReplyFiles } from '../files-out/outgoing-files';
import { NO_OUTGOING_FILES, NO_UPLOADS } from '../files-out/no-uploads';
import { QuestionMessageSchema, type QuestionMessage } from '../queues/replies-queue';
import { showQuestion, type QuestionSlack } from '../questions/show-question';
import type { Pauses } from '../stores/pauses';
import { DEFAULT_USER_MESSAGES, type UserMessages } from '../messages/user-messages';

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
  /**
   * Sharing an answer's files after its text (docs/architecture.md, "Files the agent makes"): the
   * uploader, and where the settlement left the files. Without it a reply's files are named as not shared.
   */
  files?: { uploader: FileUploader; outgoing: OutgoingFiles };
  /** Longest message posted, in UTF-16 code units. @default SLACK_CHUNK_LIMIT */
  chunkLimit?: number;
  /** The texts the agent's steps fold to where the answer is no stream (live/step-cards.ts). */
  stepLine?: StepLineTexts;
  /** GUARDRAIL: a final answer (and its steps) is checked before Slack shows it (guard-output.ts); `blockedText` stands in for one it blocks. */
  guardrail?: { guardrail: Guardrail; blockedText: string };
  /** Questions to a person (docs/architecture.md, "Questions"): posted with their buttons, closed with who answered what. */
  questions?: { slack: QuestionSlack; pauses: Pauses };
  /** What users are told; needed with `questions`. */
  messages?: UserMessages;
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

/** The chunk number the fallback post carries in its metadata (real chunks count from 0). */
export const FALLBACK_CHUNK = -1;

/** What the poster's steps share: its options and what it derived from them once. */
type PosterParts = { options: SlackPosterOptions; slack: SlackReplies; ttlSeconds: number; limit: number; trace: Tracer; clock: Clock };

export function createSlackPoster(options: SlackPosterOptions): SlackPoster {
  const p: PosterParts = {
    options,
    slack: options.replies,
    ttlSeconds: options.claimTtlSeconds ?? DEFAULT_REPLY_CLAIM_TTL_SECONDS,
    limit: options.chunkLimit ?? SLACK_CHUNK_LIMIT,
    trace: options.trace ?? noTrace,
    clock: options.clock ?? systemClock,
  };
  // The replies queue's table: every kind of reply is posted; the assistant surface's Slack calls
  // and feedback go to it (docs/architecture.md §2.6), dropped where this deployment has none.
  const surface = options.surface;
  const questions = questionRowOf(p);
  const reply: QueueRow<ReplyMessage> = { schema: ReplyMessageSchema, what: 'reply message', handle: (message, delivery, context) => postReply(p, message, delivery, context) };
  const consume = consumeByKind<RepliesQueueMessage>(
    {
      answer: reply,
      error: reply,
      notice: reply,
      stopped: reply,
      action: surface ? { schema: ActionMessageSchema, what: 'Slack action message', handle: (action, _delivery, context) => surface.act(action, callOf(context)) } : undefined,
      question: questions,
      'question-closed': questions,
      feedback: surface ? { schema: FeedbackMessageSchema, what: 'feedback message', handle: (feedback, _delivery, context) => surface.feedback(feedback, callOf(context)) } : undefined,
    },
    { log: options.log },
  );
  return (delivery, context = {}) => consume(delivery, context);
}

/** The replies queue's question rows (src/verification/questions/show-question.ts); dropped where questions are not taken. */
function questionRowOf(p: PosterParts): QueueRow<QuestionMessage> | undefined {
  const questions = p.options.questions;
  if (!questions) return undefined;
  const log = p.options.log;
  const sink = { claims: p.options.claims, slack: questions.slack, ttlSeconds: p.ttlSeconds };
  const parts = { ...questions, postOnce: (target: PostTarget, piece: Piece, context: DeliveryContext) => postPiece(sink, target, piece, context, log), ...(p.options.live ? { live: p.options.live } : {}), messages: p.options.messages ?? DEFAULT_USER_MESSAGES, log };
  return { schema: QuestionMessageSchema, what: 'question message', handle: (message, _delivery, context) => showQuestion(parts, message, context) };
}

async function postReply(p: PosterParts, message: ReplyMessage, delivery: Delivery, context: DeliveryContext): Promise<void> {
  const log = taskLogger(p.options.log, { request_id: message.request_id, correlation_id: message.request_id });
  const guard = p.options.guardrail;
  const remaining = context.deadline === undefined ? {} : { remainingMs: context.deadline - p.clock.now() };
  const text = guard ? await guardedReplyText(guard.guardrail, message, guard.blockedText, { ...(context.signal ? { signal: context.signal } : {}), ...remaining }) : message.text;
  // The agent's steps (docs/architecture.md §2.5, "Steps"): the live stream's cards end with them; elsewhere they fold to a line above the answer.
  const steps = message.kind === 'answer' && message.steps?.steps.length ? await finalCards(guard?.guardrail, stepsOfReply(message.steps), p.options.stepLine, { ...(context.signal ? { signal: context.signal } : {}), ...remaining }) : undefined;
  const line = steps?.line ? toSafeMrkdwn(steps.line) : '';
  const chunks = splitForSlack(toSafeMrkdwn(text), p.limit - (line ? line.length + 2 : 0));
  const target: PostTarget = { channel: message.channel, threadTs: replyThreadTs(message), ...personaOf(message) };
  if (chunks.length === 0) {
    // Slack refuses a message with no visible text; retrying would not change that. The
    // functions that write replies never send one (answerReply), so this is a bug upstream: the
    // user gets the fallback rather than silence (a failed fallback is retried by SQS).
    log.error(p.options.fallbackText === undefined ? 'the reply has no visible text; nothing to post' : 'the reply has no visible text; the user is sent the fallback message instead', { kind: message.kind });
    p.options.metrics?.replyLost('empty');
    if (p.options.fallbackText !== undefined) {
      await postPiece({ claims: p.options.claims, slack: p.slack, ttlSeconds: p.ttlSeconds }, target, fallbackPiece(p, message), context, log);
      await taskOver(p, message, context, log);
      if (p.options.reactions) await markDone(p.slack, { ...message, kind: 'error' }, log, p.options.metrics);
    }
    return;
  }

  const startedAt = p.clock.now();
  let posted = 0;
  const alreadyOut: string[] = [];
  for (const [index, text] of chunks.entries()) {
    // The feedback buttons go under the last message of an answer (docs/architecture.md §2.6, "Feedback").
    const blocks = p.options.feedbackButtons && message.kind === 'answer' && index === chunks.length - 1 ? feedbackBlocks({ requestId: message.request_id, ...(message.agent ? { agent: message.agent } : {}) }) : undefined;
    // The Stop's note has claims of its own: it never takes (or is taken by) a chunk of the answer.
    const piece: Piece = { key: `${message.kind === 'stopped' ? 'stop-note' : 'reply'}#${message.request_id}#${index}`, marker: { requestId: message.request_id, chunk: index }, text: index === 0 ? withStepsLine(line, text) : text, label: `chunk ${index}`, ...(blocks ? { blocks } : {}) };
    try {
      // The first chunk of a task whose answer was shown live goes into that message (it replaces
      // the previews, exactly once: finishing again rewrites it the same).
      const live = index === 0 && p.options.live ? p.options.live : undefined;
      const result = await postPiece({ claims: p.options.claims, slack: p.slack, ttlSeconds: p.ttlSeconds }, target, piece, context, log, live && (() => live.finish(message.request_id, text, message.kind, { ...context, ...(blocks ? { blocks } : {}), ...(steps ? { steps: { cards: steps.cards, line } } : {}) })));
      if (result.posted) posted += 1;
      else alreadyOut.push(result.ts);
    } catch (error) {
      throw await failure(p, error, { log, delivery, message, target, context, chunk: index, chunks: chunks.length, posted });
    }
  }
  p.options.metrics?.latency('post', p.clock.now() - startedAt);
  if (message.kind === 'answer' && message.received_at !== undefined && posted > 0) p.options.metrics?.answerLatency('final', message.agent ?? 'default', p.clock.now() - message.received_at);
  if (posted === 0) log.info('every chunk was already posted by an earlier delivery', { chunks: chunks.length, ts: alreadyOut, receive_count: delivery.receiveCount });
  else log.info('reply posted', { kind: message.kind, chunks: chunks.length, posted, receive_count: delivery.receiveCount });
  p.trace({ requestId: message.request_id, hop: 'reply-posted', at: p.clock.now(), detail: { kind: message.kind, chunks: chunks.length, posted } });
  if (message.files) await postFiles(p, { ...message, files: message.files }, target, delivery, context, log);

  // The bot has spoken in this thread: a reply there is for it without a new mention. Notices
  // (refusals) do not count. Best effort: a lost record costs the next reply a mention, no more.
  if (p.options.threads && message.kind !== 'notice') {
    await p.options.threads.store
      .remember(conversationOf(message), p.options.threads.ttlSeconds)
      .catch((error: unknown) => log.warn('could not record the thread as one the bot answered in; a follow-up there needs a mention', { error: error as Error }));
  }

  await taskOver(p, message, context, log);

  // Also on a redelivery that posted nothing new: the earlier delivery may have died before
  // reacting, and reacting twice is harmless (already_reacted and no_reaction are ignored).
  if (p.options.reactions) await markDone(p.slack, message, log, p.options.metrics);
}

/** The answer's files after its text (files-out/share-answer-files.ts); a failure is the reply's, for SQS to deliver again. */
async function postFiles(p: PosterParts, message: ReplyMessage & { files: ReplyFiles }, target: PostTarget, delivery: Delivery, context: DeliveryContext, log: Log): Promise<void> {
  const files = p.options.files ?? { uploader: undefined, outgoing: NO_OUTGOING_FILES };
  const uploader = files.uploader ?? new FileUploader({ slack: NO_UPLOADS, states: new MemoryFileUploadStates(p.clock), claims: p.options.claims, fetchUrl: async () => Buffer.alloc(0) });
  const startedAt = p.clock.now();
  try {
    const guardrail = p.options.guardrail?.guardrail;
    const { shared } = await shareAnswerFiles({ uploader, outgoing: files.outgoing, claims: p.options.claims, slack: p.slack, ttlSeconds: p.ttlSeconds, clock: p.clock, ...(guardrail ? { guardrail } : {}) }, message, target, context, log);
    p.trace({ requestId: message.request_id, hop: 'files-posted', at: p.clock.now(), detail: { files: message.files.count, shared, ms: p.clock.now() - startedAt } });
  } catch (error) {
    throw await failure(p, error, { log, delivery, message, target, context, chunk: -2, chunks: 0, posted: 0 });
  }
}

/**
 * The task's final message is out — its reply, or the fallback that tells the user instead: its
 * agent session leaves `processing` (Slack's Stop button goes), and a later Stop finds nothing to
 * stop. Notices (refusals) had no task. Never throws.
 */
async function taskOver(p: PosterParts, message: ReplyMessage, context: DeliveryContext, log: Log): Promise<void> {
  if (message.kind === 'notice') return;
  await p.options.live?.endSession(message.request_id, context);
  await p.options.work?.finished(threadOf(message), message.request_id).catch((error: unknown) => log.warn('could not record the task as finished', { error: error as Error }));
}

function fallbackPiece(p: PosterParts, message: ReplyMessage): Piece {
  const text = splitForSlack(toSafeMrkdwn(p.options.fallbackText ?? ''), p.limit)[0] ?? '';
  return { key: `reply#${message.request_id}#fallback`, marker: { requestId: message.request_id, chunk: FALLBACK_CHUNK }, text, label: 'the fallback message' };
}

/**
 * Logs a failed delivery and returns the error to throw (SQS redelivers the reply, or moves it to
 * the DLQ). On the last receive the user is told with the fallback message first, and the log
 * line — at ERROR, with a RepliesLost metric — says whether they were.
 */
async function failure(
  p: PosterParts,
  error: unknown,
  at: { log: Log; delivery: Delivery; message: ReplyMessage; target: PostTarget; context: DeliveryContext; chunk: number; chunks: number; posted: number },
): Promise<unknown> {
  const code = errorCode(error);
  if (error instanceof SlackApiError) p.options.metrics?.slackApiError(code);
  const lastReceive = p.options.maxReceiveCount !== undefined && at.delivery.receiveCount >= p.options.maxReceiveCount;
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
  p.options.metrics?.replyLost(code);
  const told = await tellUser(p, at.message, at.target, at.context, at.log);
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
async function tellUser(p: PosterParts, message: ReplyMessage, target: PostTarget, context: DeliveryContext, log: Log): Promise<{ told: true } | { told: false; code: string }> {
  if (p.options.fallbackText === undefined) return { told: false, code: 'no_fallback_text' };
  // The function is about to stop: no call could finish (SQS moves the reply to the DLQ).
  if (context.signal?.aborted) return { told: false, code: 'no_time_left' };
  try {
    await postPiece({ claims: p.options.claims, slack: p.slack, ttlSeconds: p.ttlSeconds }, target, fallbackPiece(p, message), context, log);
  } catch (error) {
    const code = errorCode(error);
    if (error instanceof SlackApiError) p.options.metrics?.slackApiError(code);
    return { told: false, code };
  }
  p.trace({ requestId: message.request_id, hop: 'dead-lettered', at: p.clock.now(), detail: { apologized: true } });
  await taskOver(p, message, context, log);
  // ⚠️ in place of 👀, as for any error reply.
  if (p.options.reactions) await markDone(p.slack, { ...message, kind: 'error' }, log, p.options.metrics);
  return { told: true };
}

/** The Slack call options of a delivery: its signal and deadline. */
function callOf(context: DeliveryContext): { signal?: AbortSignal; deadline?: number } {
  return { ...(context.signal ? { signal: context.signal } : {}), ...(context.deadline !== undefined ? { deadline: context.deadline } : {}) };
}

function errorCode(error: unknown): string {
  return error instanceof SlackApiError ? error.code : error instanceof ChunkInProgressError ? 'in_progress' : 'unknown_error';
}

/** The reply's persona as the Slack port takes it. */
function personaOf(message: ReplyMessage): { persona?: SlackPersona } {
  const persona = message.persona;
  if (!persona?.username && !persona?.icon_emoji) return {};
  return { persona: { ...(persona.username ? { username: persona.username } : {}), ...(persona.icon_emoji ? { iconEmoji: persona.icon_emoji } : {}) } };
}
