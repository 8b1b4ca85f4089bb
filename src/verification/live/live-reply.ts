import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../clock';
import type { Log } from '../../observability/logger';
import { SlackApiError } from '../../slack/slack-api-error';
import type { MessageBlock } from '../../slack/feedback-blocks';
import type { SlackAssistant } from '../../slack/slack-assistant';
import type { LiveTask, SlackLive } from '../../slack/slack-live';
import type { SlackCallOptions, SlackPersona, SlackReplies } from '../../slack/slack-port';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';
import { SLACK_CHUNK_LIMIT } from '../../slack/split-message';
import { replyThreadTs, threadOf, type SlackThread } from '../queues/slack-thread';
import { type ReplyMessage } from '../queues/replies-queue';
import type { LiveIntent, LiveReplies, LiveReply } from '../stores/live-replies';

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
export type LiveReplyOptions = {
  /** With `setSessionStatus` (an agent app), the sign of life is the thread's agent session. */
  slack: SlackLive & Pick<SlackReplies, 'post'> & Partial<Pick<SlackAssistant, 'setSessionStatus'>>;
  store: LiveReplies;
  /** What the status (and the stream's working step) say while the agent works. */
  workingText: string;
  /** The placeholder message where Slack shows neither a status nor a stream. */
  placeholderText: string;
  log: Log;
  ttlSeconds?: number;
  /** AGENT_SESSIONS: the sign of life is the thread's agent session where Slack allows it. */
  sessions?: boolean;
  /** For the leases of intents. */
  clock?: Clock;
};

/** Where a task's answer goes, and who asked (streams outside DMs name their recipient). */
type ReplyKind = ReplyMessage['kind'];

export type LiveTarget = SlackThread & { request_id: string; user_id: string; /** Who the live message is posted as: the agent's name and icon. */ persona?: SlackPersona };

/** The live target of a task or poll message: its thread, its request and who asked. */
export function liveTargetOf(message: LiveTarget): LiveTarget {
  return { ...threadOf(message), request_id: message.request_id, user_id: message.user_id };
}

/** A live message shows at most one Slack message of the answer; the rest follows at the end, as chunks. */
export const LIVE_TEXT_LIMIT = SLACK_CHUNK_LIMIT;
const DEFAULT_TTL_SECONDS = 24 * 60 * 60;

/**
 * How long an intent holds the live message for its writer: longer than a Slack call takes (a
 * sign of life has 3 s), short enough that a start whose writer died is taken over while the
 * answer is still being produced. A writer slower than this finds its claim taken: a start stops
 * what it made, an append leaves the record dirty.
 */
export const LIVE_INTENT_LEASE_MS = 10_000;

export type LiveReply_ = LiveReply;

/** A claim on starting the live message: its token, and the record it was taken on. */
type StartClaim = { requestId: string; token: string; previous: LiveReply | undefined };

export function createLiveReply(options: LiveReplyOptions) {
  const ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  const clock = options.clock ?? systemClock;
  const { slack, store, log } = options;

  const intent = (from: number): LiveIntent => ({ token: randomUUID(), from, until: clock.now() + LIVE_INTENT_LEASE_MS });
  const lapsed = (pending: LiveIntent) => pending.until <= clock.now();
  const isStart = (record: LiveReply) => record.mode === 'starting' || record.mode === 'status';

  /**
   * Whether the write of `token`'s intent is on record. A write with no answer (the client's
   * retries spent) may have been applied: a read tells, by the token.
   */
  async function holds(requestId: string, token: string, write: Promise<boolean>): Promise<boolean> {
    try {
      return await write;
    } catch (error) {
      log.warn('no answer to the write of a live-message intent; reading it back', { error_message: (error as Error).message });
      return (await store.get(requestId))?.pending?.token === token;
    }
  }

  /**
   * Claims starting the live message (or the sign of life): on no record, a new `starting` one; on
   * a `status` one (the sign of life showed no message yet), an intent on it; on a start whose
   * writer's lease is over, the intent taken over. Undefined when another writer holds it, or a
   * message is there already.
   */
  async function claimStart(target: LiveTarget, record: LiveReply | undefined): Promise<StartClaim | undefined> {
    const requestId = target.request_id;
    const mine = intent(0);
    if (!record) {
      const starting: LiveReply = { mode: 'starting', channel: target.channel, ts: '', shown: 0, threadTs: replyThreadTs(target), pending: mine };
      const claimed = await holds(requestId, mine.token, store.create(requestId, starting, ttl).then((stored) => stored.pending?.token === mine.token));
      return claimed ? { requestId, token: mine.token, previous: undefined } : undefined;
    }
    if (!isStart(record)) return undefined;
    const { pending, ...base } = record;
    if (pending && !lapsed(pending)) return undefined;
    if (pending) log.warn('taking over the start of a live message whose writer did not finish', { mode: record.mode });
    const write = pending ? store.settle(requestId, pending.token, { ...base, pending: mine }, ttl) : store.advance(requestId, record.shown, { ...base, pending: mine }, ttl);
    return (await holds(requestId, mine.token, write)) ? { requestId, token: mine.token, previous: base.mode === 'starting' ? undefined : base } : undefined;
  }

  /**
   * Records what the claim started, in place of the claim. When the claim is not this writer's any
   * more (taken over, or closed by the final answer), what it started is nobody's: a stream is
   * stopped empty (no "working…" for ever), a session it opened is closed; a placeholder stays
   * (the port has no delete). Resolves with the record as it is now.
   */
  async function recordStart(claim: StartClaim, started: LiveReply, call: SlackCallOptions, made: { session?: boolean } = {}): Promise<LiveReply> {
    const { previous } = claim;
    // The session the sign of life started stays on record: the poster ends it.
    const next: LiveReply = previous?.session ? { ...started, session: true, ...(previous.threadTs ? { threadTs: previous.threadTs } : {}) } : started;
    let recorded: boolean;
    try {
      recorded = await store.settle(claim.requestId, claim.token, next, ttl);
    } catch (error) {
      // No answer: read back. Still this claim's: once more.
      const now = await store.get(claim.requestId);
      if (now && !now.pending && now.mode === next.mode && now.ts === next.ts) return now;
      if (now?.pending?.token !== claim.token) throw error;
      recorded = await store.settle(claim.requestId, claim.token, next, ttl);
    }
    if (recorded) return next;
    const now = await store.get(claim.requestId);
    log.warn('the live message is not this attempt’s any more (another took it over, or the answer is out); taking back what it started', { mode: next.mode, now: now?.mode });
    if (next.mode === 'stream') {
      await slack.stopStream({ channel: next.channel, ts: next.ts }, { ...call, task: workingTask('complete') }).catch((error: unknown) => log.warn('could not stop the stream', { code: codeOf(error) }));
    }
    if (made.session && !now?.session && slack.setSessionStatus) {
      await slack.setSessionStatus({ channel: next.channel, threadTs: next.threadTs ?? '', status: 'active' }, call).catch((error: unknown) => log.warn('could not end the agent session', { code: codeOf(error) }));
    }
    return now ?? next;
  }

  /** Starts a live message holding `text` (may be empty) under the claim: a stream, else a posted message; records it. */
  async function startLive(target: LiveTarget, text: string, call: SlackCallOptions, claim: StartClaim): Promise<LiveReply> {
    const threadTs = replyThreadTs(target);
    const shownText = safePrefix(text);
    const none: LiveReply = { mode: 'none', channel: target.channel, ts: '', shown: 0, dirty: true };
    let started: LiveReply | undefined;
    try {
      const { ts } = await slack.startStream(
        { channel: target.channel, threadTs, recipientUserId: target.user_id, recipientTeamId: target.team_id, task: workingTask('in_progress'), ...(shownText.raw ? { markdownText: shownText.safe } : {}), ...(target.persona ? { persona: target.persona } : {}) },
        call,
      );
      // The text it shows is kept: a stream Slack stopped (a Stop, an expiry) can only be rewritten whole.
      started = { mode: 'stream', channel: target.channel, ts, shown: shownText.raw.length, ...(shownText.safe ? { text: shownText.safe } : {}) };
    } catch (error) {
      if (!(error instanceof SlackApiError)) throw error;
      // No answer: Slack may have started it, and nobody knows its ts. No second one: the answer is posted when it is done.
      if (isUnknownOutcome(error)) {
        log.warn('no answer to starting a stream; the answer comes when it is done', { code: codeOf(error) });
        started = none;
      } else log.info('Slack refused a stream here; showing the answer in a message that is updated', { code: codeOf(error) });
    }
    if (!started) {
      try {
        const body = shownText.raw ? `${shownText.safe} …` : options.placeholderText;
        const { ts } = await slack.post({ channel: target.channel, threadTs, text: body, ...(target.persona ? { persona: target.persona } : {}) }, call);
        started = { mode: 'update', channel: target.channel, ts, shown: shownText.raw.length, text: shownText.safe };
      } catch (error) {
        if (!(error instanceof SlackApiError)) throw error;
        log.warn(isUnknownOutcome(error) ? 'no answer to posting the live message; the answer comes when it is done' : 'Slack refused the live message too; the answer comes when it is done', { code: codeOf(error) });
        started = none;
      }
    }
    return recordStart(claim, started, call);
  }

  /**
   * The final answer is going out: no step may start or change the live message from now on (a
   * second copy of the task may still be polling). A start under way is closed — its writer, when
   * it records, finds its claim gone and stops what it made; a live message is marked dirty; an
   * append under way counts as unknown. Resolves with the record as it was found (for the message),
   * `unsure` when a piece may or may not be shown. Never throws: at worst the record stays open.
   */
  async function close(requestId: string): Promise<{ record: LiveReply | undefined; unsure: boolean }> {
    let record: LiveReply | undefined;
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        record = await store.get(requestId);
        if (!record || record.mode === 'none' || (record.dirty && !record.pending)) return { record, unsure: false };
        const { pending, ...base } = record;
        const closed: LiveReply = isStart(record) ? { ...base, mode: 'none', ts: '', dirty: true } : { ...base, dirty: true };
        const written = pending ? await store.settle(requestId, pending.token, closed, ttl) : await store.advance(requestId, record.shown, closed, ttl);
        if (written) return { record: isStart(record) ? closed : record, unsure: pending !== undefined };
      }
    } catch (error) {
      log.warn('could not close the live message record; finishing it as found', { error_message: (error as Error).message });
    }
    return { record: record && isStart(record) ? undefined : record, unsure: record?.pending !== undefined };
  }

  /** The stream's one timeline step: the agent working on the answer. */
  const workingTask = (status: LiveTask['status']): LiveTask => ({ id: 'answer', title: options.workingText, status });

  return {
    /**
     * A sign of life when the task is picked up: the thread's agent session or status ("is
     * working…") where Slack supports it, else a live message started empty (a stream, or a
     * placeholder). Once per task, whatever the copies of it: the first to claim the record shows
     * it. Never throws.
     */
    async signOfLife(target: LiveTarget, call: SlackCallOptions = {}, how: { title?: string } = {}): Promise<LiveReply['mode'] | 'session'> {
      // The claim while it is held and nothing is recorded under it yet.
      let held: StartClaim | undefined;
      let sessionTried = false;
      try {
        // A task queued twice (a send repeated, a Slack retry that took over its claim) shows it once.
        const existing = await store.get(target.request_id);
        if (existing && !(existing.pending && isStart(existing) && lapsed(existing.pending))) return shownAs(existing);
        const claim = await claimStart(target, existing);
        if (!claim) return shownAs((await store.get(target.request_id)) ?? existing);
        held = claim;
        const thread = { channel: target.channel, threadTs: replyThreadTs(target) };
        // Where Slack allows it, the thread's agent session: `processing`, with the Stop button
        // (docs/architecture.md §2.6). Created by this call, titled after the question.
        if (options.sessions && slack.setSessionStatus) {
          try {
            sessionTried = true;
            await slack.setSessionStatus({ ...thread, status: 'processing', ...(how.title ? { title: how.title } : {}), initiatorUserId: target.user_id }, call);
            const recorded = await recordStart(claim, { mode: 'status', channel: target.channel, ts: '', shown: 0, session: true, threadTs: thread.threadTs }, call, { session: true });
            held = undefined;
            return shownAs(recorded);
          } catch (error) {
            if (!(error instanceof SlackApiError) || error.outcome === 'unknown') throw error;
            sessionTried = false;
            log.debug('no agent session here; showing the thread status instead', { code: codeOf(error) });
          }
        }
        try {
          await slack.setStatus(thread, options.workingText, call);
          const recorded = await recordStart(claim, { mode: 'status', channel: target.channel, ts: '', shown: 0 }, call);
          held = undefined;
          return shownAs(recorded);
        } catch (error) {
          if (!(error instanceof SlackApiError)) throw error;
          log.debug('no thread status here; starting the live message instead', { code: codeOf(error) });
        }
        const recorded = await startLive(target, '', call, claim);
        held = undefined;
        return shownAs(recorded);
      } catch (error) {
        log.warn('could not show a sign of life; the answer still comes', { code: codeOf(error), error_message: (error as Error).message });
        // Nothing started under the claim (or nobody knows): the claim is given back, so the first
        // text can start the live message. A session that may have opened stays on record.
        if (held) {
          const released: LiveReply = { mode: 'status', channel: target.channel, ts: '', shown: 0, ...(sessionTried ? { session: true as const, threadTs: replyThreadTs(target) } : {}) };
          await store.settle(target.request_id, held.token, released, ttl).catch(() => undefined);
        }
        return 'none';
      }
    },

    /**
     * Shows `delta`, the agent's text from character `before` on. Applies only what is not shown
     * yet, and only while no other step is showing text; never throws (a preview is never worth a
     * retry of the task).
     */
    async show(target: LiveTarget, before: number, delta: string, call: SlackCallOptions = {}): Promise<void> {
      if (!delta) return;
      const requestId = target.request_id;
      try {
        const record = await store.get(requestId);
        if (!record || isStart(record)) {
          if (before !== 0) return;
          const claim = await claimStart(target, record);
          if (claim) await startLive(target, delta, call, claim);
          return;
        }
        if (record.mode === 'none' || record.dirty) return;
        const { pending, ...base } = record;
        if (pending) {
          // Another step is showing its piece; past its lease its writer is gone, and the piece may or may not be out.
          if (lapsed(pending)) await store.settle(requestId, pending.token, { ...base, dirty: true }, ttl);
          return;
        }
        const end = before + delta.length;
        // Already shown (a redelivered poll), or a gap an earlier step left: the final answer fills it.
        if (record.shown >= end || record.shown < before) return;
        const piece = safePrefix(delta.slice(record.shown - before));
        if (!piece.raw) return;
        if (record.shown + piece.raw.length > LIVE_TEXT_LIMIT) return;
        const text = `${record.text ?? ''}${piece.safe}`;
        const next: LiveReply = { ...record, shown: record.shown + piece.raw.length, text };
        // The intent first: once Slack shows the piece, the record already counts it.
        const mine = intent(record.shown);
        if (!(await holds(requestId, mine.token, store.advance(requestId, record.shown, { ...next, pending: mine }, ttl)))) {
          log.info('another step is showing text at the same time; this one shows nothing', { shown: record.shown });
          return;
        }
        try {
          if (record.mode === 'stream') await slack.appendStream({ channel: record.channel, ts: record.ts }, piece.safe, call);
          else await slack.update({ channel: record.channel, ts: record.ts }, `${text} …`, call);
        } catch (error) {
          // No answer: it may be there. A refusal (an expired stream): previews end. Either way the final answer rewrites the message.
          log.warn('a preview of the answer did not reach Slack; the final answer will replace the message', { code: codeOf(error), mode: record.mode });
          // A refusal (the user pressed Stop, the stream expired) showed nothing: the piece is not counted, so a stopped answer ends with what was shown.
          await store.settle(requestId, mine.token, { ...(isUnknownOutcome(error) ? next : base), dirty: true }, ttl).catch(() => undefined);
          return;
        }
        // Not settled (no answer even after the client's retries): the intent lapses, and the next step marks the record dirty.
        if (!(await store.settle(requestId, mine.token, next, ttl).catch(() => false))) {
          log.warn('the preview is out but could not be recorded as settled; the final answer will replace the message', { shown: next.shown });
        }
      } catch (error) {
        log.warn('could not show the answer so far; it comes when it is done', { code: codeOf(error), error_message: (error as Error).message });
      }
    },

    /**
     * For slack-poster: puts `text` (the final message of the answer, already safe and at most one
     * Slack message) into the live message, or for an error adds it under what was shown. Returns
     * the live message's ts, or undefined when there is none (post the answer as usual) — also
     * when a start is under way: it is closed, and its writer stops what it made.
     * Idempotent: a stream already stopped is rewritten with chat.update, which replaces.
     */
    async finish(requestId: string, text: string, kind: ReplyKind, call: SlackCallOptions & { blocks?: readonly MessageBlock[] } = {}): Promise<string | undefined> {
      const { blocks, ...callOptions } = call;
      const { record, unsure } = await close(requestId);
      if (!record || record.mode === 'none' || isStart(record)) return undefined;
      const dirty = record.dirty === true || unsure;
      const message = { channel: record.channel, ts: record.ts };
      // The reply's metadata, as on posted chunks: a poster that takes the reply over finds it.
      const marker = { requestId, chunk: 0 };
      const withBlocks = blocks?.length ? { blocks } : {};
      if (record.mode === 'stream') {
        try {
          await slack.stopStream(message, { ...callOptions, marker, task: workingTask(kind === 'answer' ? 'complete' : 'error'), ...(kind === 'answer' ? withBlocks : { markdownText: `\n\n${text}` }) });
          if (kind !== 'answer' && !dirty) return record.ts;
        } catch (error) {
          // Stopped already (an earlier delivery, a Stop, or Slack let it expire): the update below sets it right.
          if (!(error instanceof SlackApiError) || !STOPPED.has(error.code)) throw error;
        }
        // The answer as the agent wrote it (mrkdwn, links made safe), whatever the previews showed.
        await slack.update(message, kind === 'answer' ? text : `${record.text ?? ''}\n\n${text}`.trim(), { ...callOptions, marker, ...(kind === 'answer' ? withBlocks : {}) });
        return record.ts;
      }
      await slack.update(message, kind === 'answer' ? text : `${record.text ?? ''}\n\n${text}`.trim(), { ...callOptions, marker, ...(kind === 'answer' ? withBlocks : {}) });
      return record.ts;
    },

    /**
     * For slack-poster, once the final message is out: the thread's agent session leaves
     * `processing` (its Stop button goes), if the sign of life started one. Never throws.
     */
    async endSession(requestId: string, call: SlackCallOptions = {}): Promise<void> {
      try {
        const record = await store.get(requestId);
        if (!record?.session || !slack.setSessionStatus) return;
        await slack.setSessionStatus({ channel: record.channel, threadTs: record.threadTs ?? '', status: 'active' }, call);
      } catch (error) {
        log.warn('could not move the agent session out of processing', { code: codeOf(error) });
      }
    },
  };
}

/** How the sign of life shows, for the trace. */
function shownAs(record: LiveReply | undefined): LiveReply['mode'] | 'session' {
  if (!record) return 'none';
  return record.session ? 'session' : record.mode;
}

export type LiveReplyService = ReturnType<typeof createLiveReply>;

/** Slack's answers to stopping a stream that is no longer streaming. */
const STOPPED = new Set(['message_not_in_streaming_state', 'user_not_found']);

/**
 * A piece of the agent's text as a preview shows it: made safe like a posted answer, and with a
 * Slack `<…>` token that the piece leaves open shown as `‹`, so a token cut in two (`<!chan` …
 * `nel>`) can never come together into one that pings everyone. The length of `raw` is what counts
 * as shown; the final answer replaces the preview with the exact text.
 */
function safePrefix(raw: string): { raw: string; safe: string } {
  const open = raw.lastIndexOf('<');
  const shown = open >= 0 && raw.indexOf('>', open) < 0 ? `${raw.slice(0, open)}‹${raw.slice(open + 1)}` : raw;
  return { raw, safe: raw ? toSafeMrkdwn(shown) : '' };
}

function isUnknownOutcome(error: unknown): boolean {
  return error instanceof SlackApiError && error.outcome === 'unknown';
}

function codeOf(error: unknown): string {
  return error instanceof SlackApiError ? error.code : 'unknown_error';
}
