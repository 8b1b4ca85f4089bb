import type { SlackCallOptions } from '../../slack/slack-port';
import type { LiveReply } from '../stores/live-replies';
import { codeOf, intent, isStart, isUnknownOutcome, LIVE_TEXT_LIMIT, safePrefix, withStepsLine, type LiveParts, type LiveTarget } from './live-parts';
import { guardPiece, withoutPreviews } from './live-guard';
import { changeable, claimStart, holds, startLive } from './live-start';

/**
 * Shows `delta`, the agent's text from character `before` on. Applies only what is not shown
 * yet, and only while no other step is showing text; with GUARDRAIL, only what the output
 * guardrail released, masked (live-guard.ts). Never throws (a preview is never worth a retry of
 * the task).
 */
export async function show(p: LiveParts, target: LiveTarget, before: number, delta: string, call: SlackCallOptions = {}): Promise<void> {
  if (!delta) return;
  const requestId = target.request_id;
  try {
    const record = await p.store.get(requestId);
    if (!record || isStart(record)) {
      if (before !== 0) return;
      // Checked before the claim: a check that fails starts nothing, and the final answer comes as usual.
      const guarded = await guardPiece(p, undefined, delta, call);
      const claim = await claimStart(p, target, record);
      if (claim) await startLive(p, target, guarded.show, call, claim, { shown: delta.length, fields: guarded.fields });
      return;
    }
    const base = await changeable(p, requestId, record);
    if (!base) return;
    const end = before + delta.length;
    // Already shown (a redelivered poll), or a gap an earlier step left: the final answer fills it.
    if (record.shown >= end || record.shown < before) return;
    const fresh = delta.slice(record.shown - before);
    if (!fresh) return;
    if (record.shown + fresh.length > LIVE_TEXT_LIMIT) return;
    const guarded = await guardPiece(p, record, fresh, call).catch(async (error: unknown) => {
      p.log.warn('the output guardrail could not check a preview; nothing more is shown until the final answer', { error_name: (error as Error).name });
      await p.store.advance(requestId, record.shown, withoutPreviews(record), p.ttl);
      return undefined;
    });
    if (!guarded) return;
    const piece = safePrefix(guarded.show);
    const text = `${record.text ?? ''}${piece.safe}`;
    const next: LiveReply = { ...record, shown: record.shown + fresh.length, text, ...guarded.fields };
    // All of it held back (an entity may still be forming): recorded, and shown with a later piece.
    if (!piece.raw) {
      await p.store.advance(requestId, record.shown, next, p.ttl);
      return;
    }
    // The intent first: once Slack shows the piece, the record already counts it.
    const mine = intent(p, record.shown);
    if (!(await holds(p, requestId, mine.token, p.store.advance(requestId, record.shown, { ...next, pending: mine }, p.ttl)))) {
      p.log.info('another step is showing text at the same time; this one shows nothing', { shown: record.shown });
      return;
    }
    try {
      if (record.mode === 'stream') await p.slack.appendStream({ channel: record.channel, ts: record.ts }, piece.safe, call);
      else await p.slack.update({ channel: record.channel, ts: record.ts }, withStepsLine(record.stepsLine, next.dirty ? text : `${text} …`), call);
    } catch (error) {
      // No answer: it may be there. A refusal (an expired stream): previews end. Either way the final answer rewrites the message.
      p.log.warn('a preview of the answer did not reach Slack; the final answer will replace the message', { code: codeOf(error), mode: record.mode });
      // A refusal (the user pressed Stop, the stream expired) showed nothing: the piece is not counted, so a stopped answer ends with what was shown.
      await p.store.settle(requestId, mine.token, { ...(isUnknownOutcome(error) ? next : base), dirty: true }, p.ttl).catch(() => undefined);
      return;
    }
    // Not settled (no answer even after the client's retries): the intent lapses, and the next step marks the record dirty.
    if (!(await p.store.settle(requestId, mine.token, next, p.ttl).catch(() => false))) {
      p.log.warn('the preview is out but could not be recorded as settled; the final answer will replace the message', { shown: next.shown });
    }
  } catch (error) {
    p.log.warn('could not show the answer so far; it comes when it is done', { code: codeOf(error), error_message: (error as Error).message });
  }
}
