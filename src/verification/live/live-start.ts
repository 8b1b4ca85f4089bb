import type { SlackCallOptions } from '../../slack/slack-port';
import { SlackApiError } from '../../slack/slack-api-error';
import { replyThreadTs } from '../queues/slack-thread';
import type { LiveReply } from '../stores/live-replies';
import { codeOf, intent, isStart, isUnknownOutcome, lapsed, safePrefix, withStepsLine, workingTask, type LiveParts, type LiveTarget, type StartClaim } from './live-parts';
import type { StepCards } from './step-cards';

/** The steps a live message starts with: the cards to send, their prints for the record, the line they fold to. */
export type StartSteps = { cards: StepCards; prints: Record<string, string>; open: Record<string, string>; line: string };

/**
 * Starting the live message under its claim (src/verification/live/live-reply.ts): the intent on
 * the record that makes one writer of all the copies of a task start it, what it started recorded
 * in the claim's place (or taken back when the claim is no longer this writer's), and the close
 * the final answer puts on the record so nothing starts or changes it after.
 */

/**
 * Whether the write of `token`'s intent is on record. A write with no answer (the client's
 * retries spent) may have been applied: a read tells, by the token.
 */
export async function holds(p: LiveParts, requestId: string, token: string, write: Promise<boolean>): Promise<boolean> {
  try {
    return await write;
  } catch (error) {
    p.log.warn('no answer to the write of a live-message intent; reading it back', { error_message: (error as Error).message });
    return (await p.store.get(requestId))?.pending?.token === token;
  }
}

/**
 * A started live message a preview or a card may change now: undefined when there is none to
 * change (no message, or a dirty one the final answer rewrites) or another step is changing it —
 * past its lease that writer is gone and its change may or may not be out, so the message is
 * marked dirty. Resolves with the record as it is, without an intent.
 */
export async function changeable(p: LiveParts, requestId: string, record: LiveReply): Promise<LiveReply | undefined> {
  if (record.mode === 'none' || record.dirty) return undefined;
  const { pending, ...base } = record;
  if (!pending) return base;
  if (lapsed(p, pending)) await p.store.settle(requestId, pending.token, { ...base, dirty: true }, p.ttl);
  return undefined;
}

/**
 * Claims starting the live message (or the sign of life): on no record, a new `starting` one; on
 * a `status` one (the sign of life showed no message yet), an intent on it; on a start whose
 * writer's lease is over, the intent taken over. Undefined when another writer holds it, or a
 * message is there already.
 */
export async function claimStart(p: LiveParts, target: LiveTarget, record: LiveReply | undefined): Promise<StartClaim | undefined> {
  const requestId = target.request_id;
  const mine = intent(p, 0);
  if (!record) {
    const starting: LiveReply = { mode: 'starting', channel: target.channel, ts: '', shown: 0, threadTs: replyThreadTs(target), pending: mine };
    const claimed = await holds(p, requestId, mine.token, p.store.create(requestId, starting, p.ttl).then((stored) => stored.pending?.token === mine.token));
    return claimed ? { requestId, token: mine.token, previous: undefined } : undefined;
  }
  if (!isStart(record)) return undefined;
  const { pending, ...base } = record;
  if (pending && !lapsed(p, pending)) return undefined;
  if (pending) p.log.warn('taking over the start of a live message whose writer did not finish', { mode: record.mode });
  const write = pending ? p.store.settle(requestId, pending.token, { ...base, pending: mine }, p.ttl) : p.store.advance(requestId, record.shown, { ...base, pending: mine }, p.ttl);
  return (await holds(p, requestId, mine.token, write)) ? { requestId, token: mine.token, previous: base.mode === 'starting' ? undefined : base } : undefined;
}

/**
 * Records what the claim started, in place of the claim. When the claim is not this writer's any
 * more (taken over, or closed by the final answer), what it started is nobody's: a stream is
 * stopped empty (no "working…" for ever), a session it opened is closed; a placeholder stays
 * (the port has no delete). Resolves with the record as it is now.
 */
export async function recordStart(p: LiveParts, claim: StartClaim, started: LiveReply, call: SlackCallOptions, made: { session?: boolean } = {}): Promise<LiveReply> {
  const { previous } = claim;
  // The session the sign of life started stays on record: the poster ends it.
  const next: LiveReply = previous?.session ? { ...started, session: true, ...(previous.threadTs ? { threadTs: previous.threadTs } : {}) } : started;
  let recorded: boolean;
  try {
    recorded = await p.store.settle(claim.requestId, claim.token, next, p.ttl);
  } catch (error) {
    // No answer: read back. Still this claim's: once more.
    const now = await p.store.get(claim.requestId);
    if (now && !now.pending && now.mode === next.mode && now.ts === next.ts) return now;
    if (now?.pending?.token !== claim.token) throw error;
    recorded = await p.store.settle(claim.requestId, claim.token, next, p.ttl);
  }
  if (recorded) return next;
  const now = await p.store.get(claim.requestId);
  p.log.warn('the live message is not this attempt’s any more (another took it over, or the answer is out); taking back what it started', { mode: next.mode, now: now?.mode });
  if (next.mode === 'stream') {
    await p.slack.stopStream({ channel: next.channel, ts: next.ts }, { ...call, task: workingTask(p, 'complete') }).catch((error: unknown) => p.log.warn('could not stop the stream', { code: codeOf(error) }));
  }
  if (made.session && !now?.session && p.slack.setSessionStatus) {
    await p.slack.setSessionStatus({ channel: next.channel, threadTs: next.threadTs ?? '', status: 'active' }, call).catch((error: unknown) => p.log.warn('could not end the agent session', { code: codeOf(error) }));
  }
  return now ?? next;
}

/**
 * Starts a live message holding `text` (may be empty) under the claim: a stream, else a posted
 * message; records it. `guarded`: the characters of the answer taken in and what the output
 * guardrail keeps on the record, when `text` is what it released of them (live-guard.ts).
 * `steps`: the agent's steps so far (live-steps.ts) — cards in a stream, their line above a
 * posted message.
 */
export async function startLive(p: LiveParts, target: LiveTarget, text: string, call: SlackCallOptions, claim: StartClaim, guarded?: { shown: number; fields: Partial<LiveReply> }, steps?: StartSteps): Promise<LiveReply> {
  const threadTs = replyThreadTs(target);
  const shownText = safePrefix(text);
  const taken = guarded ? { shown: guarded.shown, ...guarded.fields } : { shown: shownText.raw.length };
  const none: LiveReply = { mode: 'none', channel: target.channel, ts: '', shown: 0, dirty: true };
  let started: LiveReply | undefined;
  try {
    const { ts } = await p.slack.startStream(
      { channel: target.channel, threadTs, recipientUserId: target.user_id, recipientTeamId: target.team_id, task: workingTask(p, 'in_progress'), ...steps?.cards, ...(shownText.raw ? { markdownText: shownText.safe } : {}), ...(target.persona ? { persona: target.persona } : {}) },
      call,
    );
    // The text it shows is kept: a stream Slack stopped (a Stop, an expiry) can only be rewritten whole.
    started = { mode: 'stream', channel: target.channel, ts, ...taken, ...(shownText.safe ? { text: shownText.safe } : {}), ...(steps ? { cards: steps.prints, openCards: steps.open } : {}) };
  } catch (error) {
    if (!(error instanceof SlackApiError)) throw error;
    // No answer, and the port found no stream it started (src/slack/web-api/live.ts): nobody knows its ts. No second one: the answer is posted when it is done.
    if (isUnknownOutcome(error)) {
      p.log.warn('no answer to starting a stream; the answer comes when it is done', { code: codeOf(error) });
      started = none;
    } else p.log.info('Slack refused a stream here; showing the answer in a message that is updated', { code: codeOf(error) });
  }
  if (!started) {
    try {
      const body = withStepsLine(steps?.line, shownText.raw ? `${shownText.safe} …` : p.options.placeholderText);
      const { ts } = await p.slack.post({ channel: target.channel, threadTs, text: body, ...(target.persona ? { persona: target.persona } : {}) }, call);
      started = { mode: 'update', channel: target.channel, ts, ...taken, text: shownText.safe, ...(steps?.line ? { stepsLine: steps.line } : {}) };
    } catch (error) {
      if (!(error instanceof SlackApiError)) throw error;
      p.log.warn(isUnknownOutcome(error) ? 'no answer to posting the live message; the answer comes when it is done' : 'Slack refused the live message too; the answer comes when it is done', { code: codeOf(error) });
      started = none;
    }
  }
  return recordStart(p, claim, started, call);
}

/**
 * The final answer is going out: no step may start or change the live message from now on (a
 * second copy of the task may still be polling). A start under way is closed — its writer, when
 * it records, finds its claim gone and stops what it made; a live message is marked dirty; an
 * append under way counts as unknown. Resolves with the record as it was found (for the message),
 * `unsure` when a piece may or may not be shown. Never throws: at worst the record stays open.
 */
export async function close(p: LiveParts, requestId: string): Promise<{ record: LiveReply | undefined; unsure: boolean }> {
  let record: LiveReply | undefined;
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      record = await p.store.get(requestId);
      // Closed already, unless text the output guardrail held back is still on it.
      if (!record || record.mode === 'none' || (record.dirty && !record.pending && !record.mask?.held)) return { record, unsure: false };
      // What the output guardrail held back goes with the close: the final answer is checked whole.
      const { pending, mask: _held, ...base } = record;
      const closed: LiveReply = isStart(record) ? { ...base, mode: 'none', ts: '', dirty: true } : { ...base, dirty: true };
      const written = pending ? await p.store.settle(requestId, pending.token, closed, p.ttl) : await p.store.advance(requestId, record.shown, closed, p.ttl);
      if (written) return { record: isStart(record) ? closed : record, unsure: pending !== undefined };
    }
  } catch (error) {
    p.log.warn('could not close the live message record; finishing it as found', { error_message: (error as Error).message });
  }
  return { record: record && isStart(record) ? undefined : record, unsure: record?.pending !== undefined };
}
