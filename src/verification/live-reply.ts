import type { Log } from '../observability/logger';
import { SlackApiError } from '../slack/slack-api-error';
import type { MessageBlock } from '../slack/feedback-blocks';
import type { SlackAgent } from '../slack/slack-agent';
import type { LiveTask, SlackLive } from '../slack/slack-live';
import type { SlackCallOptions, SlackReplies } from '../slack/slack-port';
import { toSafeMrkdwn } from '../slack/safe-mrkdwn';
import { SLACK_CHUNK_LIMIT } from '../slack/split-message';
import { replyThreadTs, threadOf, type ReplyMessage, type SlackThread } from './queue-messages';
import type { LiveReplies, LiveReply } from './stores/live-replies';

/**
 * Live answers (docs/architecture.md §2.5): a sign of life as soon as a task is picked up, and the
 * answer shown in Slack while the agent produces it — a Slack stream where Slack allows one, else a
 * message that is updated, else nothing until the final answer. The final answer always ends up
 * exactly once, as the agent wrote it: slack-poster finishes the live message with it.
 *
 * Previews are applied once: each one is counted in characters of the agent's text (`shown`), and
 * a piece is appended only past what the record says is shown, and recorded only if no other writer
 * moved the count meanwhile. An append Slack may or may not have applied (no answer) marks the
 * record dirty: previews stop, and the final answer rewrites the message whole.
 */
export type LiveReplyOptions = {
  /** With `setSessionStatus` (an agent app), the sign of life is the thread's agent session. */
  slack: SlackLive & Pick<SlackReplies, 'post'> & Partial<Pick<SlackAgent, 'setSessionStatus'>>;
  store: LiveReplies;
  /** What the status (and the stream's working step) say while the agent works. */
  workingText: string;
  /** The placeholder message where Slack shows neither a status nor a stream. */
  placeholderText: string;
  log: Log;
  ttlSeconds?: number;
  /** AGENT_SESSIONS: the sign of life is the thread's agent session where Slack allows it. */
  sessions?: boolean;
};

/** Where a task's answer goes, and who asked (streams outside DMs name their recipient). */
type ReplyKind = ReplyMessage['kind'];

export type LiveTarget = SlackThread & { request_id: string; user_id: string };

/** The live target of a task or poll message: its thread, its request and who asked. */
export function liveTargetOf(message: LiveTarget): LiveTarget {
  return { ...threadOf(message), request_id: message.request_id, user_id: message.user_id };
}

/** A live message shows at most one Slack message of the answer; the rest follows at the end, as chunks. */
export const LIVE_TEXT_LIMIT = SLACK_CHUNK_LIMIT;
const DEFAULT_TTL_SECONDS = 24 * 60 * 60;

export type LiveReply_ = LiveReply;

export function createLiveReply(options: LiveReplyOptions) {
  const ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  const { slack, store } = options;

  /** Records the live message: a new record, or in place of the `status` one the sign of life left. */
  async function saveLive(target: LiveTarget, started: LiveReply, previous: LiveReply | undefined): Promise<LiveReply> {
    // The session the sign of life started stays on record: the poster ends it.
    const reply: LiveReply = previous?.session ? { ...started, session: true, ...(previous.threadTs ? { threadTs: previous.threadTs } : {}) } : started;
    if (!previous) return store.create(target.request_id, reply, ttl);
    return (await store.advance(target.request_id, previous.shown, reply, ttl)) ? reply : ((await store.get(target.request_id)) ?? reply);
  }

  /** Starts a live message holding `text` (may be empty): a stream, else a posted message; records it. */
  async function startLive(target: LiveTarget, text: string, call: SlackCallOptions, previous?: LiveReply): Promise<LiveReply> {
    const threadTs = replyThreadTs(target);
    const shownText = safePrefix(text);
    try {
      const { ts } = await slack.startStream(
        { channel: target.channel, threadTs, recipientUserId: target.user_id, recipientTeamId: target.team_id, task: workingTask('in_progress'), ...(shownText.raw ? { markdownText: shownText.safe } : {}) },
        call,
      );
      // The text it shows is kept: a stream Slack stopped (a Stop, an expiry) can only be rewritten whole.
      return saveLive(target, { mode: 'stream', channel: target.channel, ts, shown: shownText.raw.length, ...(shownText.safe ? { text: shownText.safe } : {}) }, previous);
    } catch (error) {
      if (isUnknownOutcome(error)) throw error;
      options.log.info('Slack refused a stream here; showing the answer in a message that is updated', { code: codeOf(error) });
    }
    try {
      const body = shownText.raw ? `${shownText.safe} …` : options.placeholderText;
      const { ts } = await slack.post({ channel: target.channel, threadTs, text: body }, call);
      return saveLive(target, { mode: 'update', channel: target.channel, ts, shown: shownText.raw.length, text: shownText.safe }, previous);
    } catch (error) {
      if (isUnknownOutcome(error)) throw error;
      options.log.warn('Slack refused the live message too; the answer comes when it is done', { code: codeOf(error) });
      return saveLive(target, { mode: 'none', channel: target.channel, ts: '', shown: 0, dirty: true }, previous);
    }
  }

  /** The stream's one timeline step: the agent working on the answer. */
  const workingTask = (status: LiveTask['status']): LiveTask => ({ id: 'answer', title: options.workingText, status });

  return {
    /**
     * A sign of life when the task is picked up: the thread's status ("is working…") where Slack
     * supports it, else a live message started empty (a stream, or a placeholder). Never throws.
     */
    async signOfLife(target: LiveTarget, call: SlackCallOptions = {}, how: { title?: string } = {}): Promise<LiveReply['mode'] | 'session'> {
      try {
        // A task queued twice (a Slack retry that took over its claim) shows it once.
        const existing = await store.get(target.request_id);
        if (existing) return existing.session ? 'session' : existing.mode;
        // Where Slack allows it, the thread's agent session: `processing`, with the Stop button
        // (docs/architecture.md §2.6). Created by this call, titled after the question.
        if (options.sessions && slack.setSessionStatus) {
          try {
            await slack.setSessionStatus({ channel: target.channel, threadTs: replyThreadTs(target), status: 'processing', ...(how.title ? { title: how.title } : {}), initiatorUserId: target.user_id }, call);
            await store.create(target.request_id, { mode: 'status', channel: target.channel, ts: '', shown: 0, session: true, threadTs: replyThreadTs(target) }, ttl);
            return 'session';
          } catch (error) {
            if (!(error instanceof SlackApiError) || error.outcome === 'unknown') throw error;
            options.log.debug('no agent session here; showing the thread status instead', { code: codeOf(error) });
          }
        }
        try {
          await slack.setStatus({ channel: target.channel, threadTs: replyThreadTs(target) }, options.workingText, call);
          return (await store.create(target.request_id, { mode: 'status', channel: target.channel, ts: '', shown: 0 }, ttl)).mode;
        } catch (error) {
          if (!(error instanceof SlackApiError)) throw error;
          options.log.debug('no thread status here; starting the live message instead', { code: codeOf(error) });
        }
        return (await startLive(target, '', call)).mode;
      } catch (error) {
        options.log.warn('could not show a sign of life; the answer still comes', { code: codeOf(error), error_message: (error as Error).message });
        return 'none';
      }
    },

    /**
     * Shows `delta`, the agent's text from character `before` on. Applies only what is not shown
     * yet; never throws (a preview is never worth a retry of the task).
     */
    async show(target: LiveTarget, before: number, delta: string, call: SlackCallOptions = {}): Promise<void> {
      if (!delta) return;
      try {
        const record = await store.get(target.request_id);
        if (!record || record.mode === 'status') {
          if (before === 0) await startLive(target, delta, call, record);
          return;
        }
        if (record.mode === 'none' || record.dirty) return;
        const end = before + delta.length;
        // Already shown (a redelivered poll), or a gap an earlier step left: the final answer fills it.
        if (record.shown >= end || record.shown < before) return;
        const piece = safePrefix(delta.slice(record.shown - before));
        if (!piece.raw) return;
        if (record.shown + piece.raw.length > LIVE_TEXT_LIMIT) return;
        let next: LiveReply;
        try {
          if (record.mode === 'stream') {
            await slack.appendStream({ channel: record.channel, ts: record.ts }, piece.safe, call);
            next = { ...record, shown: record.shown + piece.raw.length, text: `${record.text ?? ''}${piece.safe}` };
          } else {
            const text = `${record.text ?? ''}${piece.safe}`;
            await slack.update({ channel: record.channel, ts: record.ts }, `${text} …`, call);
            next = { ...record, shown: record.shown + piece.raw.length, text };
          }
        } catch (error) {
          // No answer: it may be there. A refusal (an expired stream): previews end. Either way the final answer rewrites the message.
          options.log.warn('a preview of the answer did not reach Slack; the final answer will replace the message', { code: codeOf(error), mode: record.mode });
          await store.advance(target.request_id, record.shown, { ...record, dirty: true }, ttl).catch(() => undefined);
          return;
        }
        if (!(await store.advance(target.request_id, record.shown, next, ttl))) {
          options.log.warn('another step showed text at the same time; the final answer will replace the message', { shown: record.shown });
          const now = await store.get(target.request_id);
          if (now) await store.advance(target.request_id, now.shown, { ...now, dirty: true }, ttl).catch(() => undefined);
        }
      } catch (error) {
        options.log.warn('could not show the answer so far; it comes when it is done', { code: codeOf(error), error_message: (error as Error).message });
      }
    },

    /**
     * For slack-poster: puts `text` (the final message of the answer, already safe and at most one
     * Slack message) into the live message, or for an error adds it under what was shown. Returns
     * the live message's ts, or undefined when there is none (post the answer as usual).
     * Idempotent: a stream already stopped is rewritten with chat.update, which replaces.
     */
    async finish(requestId: string, text: string, kind: ReplyKind, call: SlackCallOptions & { blocks?: readonly MessageBlock[] } = {}): Promise<string | undefined> {
      const { blocks, ...callOptions } = call;
      const record = await store.get(requestId);
      if (!record || record.mode === 'none' || record.mode === 'status') return undefined;
      const message = { channel: record.channel, ts: record.ts };
      // The reply's metadata, as on posted chunks: a poster that takes the reply over finds it.
      const marker = { requestId, chunk: 0 };
      const withBlocks = blocks?.length ? { blocks } : {};
      if (record.mode === 'stream') {
        try {
          await slack.stopStream(message, { ...callOptions, marker, task: workingTask(kind === 'answer' ? 'complete' : 'error'), ...(kind === 'answer' ? withBlocks : { markdownText: `\n\n${text}` }) });
          if (kind !== 'answer' && !record.dirty) return record.ts;
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
        options.log.warn('could not move the agent session out of processing', { code: codeOf(error) });
      }
    },
  };
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
