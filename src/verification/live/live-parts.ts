import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../clock';
import type { Guardrail } from '../../guardrail/guardrail';
import type { Log } from '../../observability/logger';
import { SlackApiError } from '../../slack/slack-api-error';
import type { SlackAssistant } from '../../slack/slack-assistant';
import type { LiveTask, SlackLive } from '../../slack/slack-live';
import type { SlackPersona, SlackReplies } from '../../slack/slack-port';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';
import { SLACK_CHUNK_LIMIT } from '../../slack/split-message';
import type { ReplyMessage } from '../queues/replies-queue';
import { threadOf, type SlackThread } from '../queues/slack-thread';
import type { LiveIntent, LiveReplies, LiveReply } from '../stores/live-replies';
import type { StepLineTexts } from './step-cards';

/** What the live reply is given, and what its steps share (src/verification/live/live-reply.ts). */

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
  /**
   * GUARDRAIL: previews show only text the output guardrail released (src/verification/live/live-guard.ts),
   * `blockedText` ends a blocked one; the agent's step titles and details pass it too (step-cards.ts).
   */
  guardrail?: { guardrail: Guardrail; blockedText: string };
  /** The texts the steps fold to where the answer is no stream (messages/user-messages.ts). */
  stepLine?: StepLineTexts;
};


/** Where a task's answer goes, and who asked (streams outside DMs name their recipient). */
export type ReplyKind = ReplyMessage['kind'];

export type LiveTarget = SlackThread & { request_id: string; user_id: string; /** Who the live message is posted as: the agent's name and icon. */ persona?: SlackPersona };

/** The live target of a task or poll message: its thread, its request and who asked. */
export function liveTargetOf(message: LiveTarget): LiveTarget {
  return { ...threadOf(message), request_id: message.request_id, user_id: message.user_id };
}

/** A live message shows at most one Slack message of the answer; the rest follows at the end, as chunks. */
export const LIVE_TEXT_LIMIT = SLACK_CHUNK_LIMIT;
export const DEFAULT_TTL_SECONDS = 24 * 60 * 60;

/**
 * How long an intent holds the live message for its writer: longer than a Slack call takes (a
 * sign of life has 3 s), short enough that a start whose writer died is taken over while the
 * answer is still being produced. A writer slower than this finds its claim taken: a start stops
 * what it made, an append leaves the record dirty.
 */
export const LIVE_INTENT_LEASE_MS = 10_000;

/** A claim on starting the live message: its token, and the record it was taken on. */
export type StartClaim = { requestId: string; token: string; previous: LiveReply | undefined };


/** The live reply's options with their defaults applied, handed to each of its steps. */
export type LiveParts = { options: LiveReplyOptions; slack: LiveReplyOptions['slack']; store: LiveReplies; log: Log; ttl: number; clock: Clock };

export function livePartsOf(options: LiveReplyOptions): LiveParts {
  return { options, slack: options.slack, store: options.store, log: options.log, ttl: options.ttlSeconds ?? DEFAULT_TTL_SECONDS, clock: options.clock ?? systemClock };
}

/** A new intent of this writer's, from character `from`, held for LIVE_INTENT_LEASE_MS. */
export const intent = (p: LiveParts, from: number): LiveIntent => ({ token: randomUUID(), from, until: p.clock.now() + LIVE_INTENT_LEASE_MS });
/** An intent whose writer is taken for gone. */
export const lapsed = (p: LiveParts, pending: LiveIntent) => pending.until <= p.clock.now();
/** A record on which nothing is shown in a message yet. */
export const isStart = (record: LiveReply) => record.mode === 'starting' || record.mode === 'status';
/** The stream's one timeline step: the agent working on the answer. */
export const workingTask = (p: LiveParts, status: LiveTask['status']): LiveTask => ({ id: 'answer', title: p.options.workingText, status });

/** A message's text under the steps' line (an answer that is no stream: docs/architecture.md §2.5, "Steps"). */
export function withStepsLine(line: string | undefined, text: string): string {
  return line ? `${line}\n\n${text}` : text;
}

/** How the sign of life shows, for the trace. */
export function shownAs(record: LiveReply | undefined): LiveReply['mode'] | 'session' {
  if (!record) return 'none';
  return record.session ? 'session' : record.mode;
}

/** Slack's answers to stopping a stream that is no longer streaming. */
export const STOPPED = new Set(['message_not_in_streaming_state', 'user_not_found']);

/**
 * A piece of the agent's text as a preview shows it: made safe like a posted answer, and with a
 * Slack `<…>` token that the piece leaves open shown as `‹`, so a token cut in two (`<!chan` …
 * `nel>`) can never come together into one that pings everyone. The length of `raw` is what counts
 * as shown; the final answer replaces the preview with the exact text.
 */
export function safePrefix(raw: string): { raw: string; safe: string } {
  const open = raw.lastIndexOf('<');
  const shown = open >= 0 && raw.indexOf('>', open) < 0 ? `${raw.slice(0, open)}‹${raw.slice(open + 1)}` : raw;
  return { raw, safe: raw ? toSafeMrkdwn(shown) : '' };
}

export function isUnknownOutcome(error: unknown): boolean {
  return error instanceof SlackApiError && error.outcome === 'unknown';
}

export function codeOf(error: unknown): string {
  return error instanceof SlackApiError ? error.code : 'unknown_error';
}
