import type { StepsShown } from '../../protocols/outcome';
import type { SlackCallOptions } from '../../slack/slack-port';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';
import type { LiveReply } from '../stores/live-replies';
import { codeOf, intent, isStart, isUnknownOutcome, withStepsLine, type LiveParts, type LiveTarget } from './live-parts';
import { changeable, claimStart, holds, startLive } from './live-start';
import { anyCards, cardsOf, changedCards, guardedCards, openCards, stepLineTexts, stepsLine } from './step-cards';

/**
 * The live reply's steps (src/verification/live/live-reply.ts; docs/architecture.md §2.5, "Steps"):
 * agent-invoker and async-result hand over the agent's steps as they come — from a held stream
 * (stream-hold.ts flushes a change at once, not with the words) or a poll — and this shows them in
 * the live message: in a stream, each step a task card (`task_update`), sent only when what it
 * shows changed since the record last counted it; in a message that is updated, the steps folded
 * to one line above the text. No live message yet: the steps start one.
 *
 * Once, as text is: the change is written to the record with an intent before Slack is asked
 * (`cards`, what each card shows), so a redelivered poll or a second hold finds it counted and
 * sends nothing; another writer's intent, a record closed by the final answer or marked dirty,
 * shows nothing. Never throws: a card is never worth a retry of the task.
 */
export async function showSteps(p: LiveParts, target: LiveTarget, shown: StepsShown, call: SlackCallOptions = {}): Promise<void> {
  if (!shown.steps.length) return;
  const requestId = target.request_id;
  try {
    const texts = stepLineTexts(p.options.stepLine);
    const cards = await guardedCards(p.options.guardrail?.guardrail, cardsOf(shown), texts.stepHidden, call.signal ? { signal: call.signal } : {});
    // Made safe as the answer's text is: a title never pings a channel.
    const line = toSafeMrkdwn(stepsLine(cards, texts));
    const record = await p.store.get(requestId);
    if (!record || isStart(record)) {
      // The steps come first (the agent works before it writes): they start the live message.
      const claim = await claimStart(p, target, record);
      if (claim) await startLive(p, target, '', call, claim, undefined, { cards, prints: changedCards(cards).prints, open: openCards(cards), line });
      return;
    }
    const base = await changeable(p, requestId, record);
    if (!base) return;
    const { changed, prints } = changedCards(cards, record.cards);
    if (!anyCards(changed)) return;
    const next: LiveReply = { ...record, cards: prints, openCards: openCards(cards), ...(record.mode === 'update' ? { stepsLine: line } : {}) };
    const mine = intent(p, record.shown);
    if (!(await holds(p, requestId, mine.token, p.store.advance(requestId, record.shown, { ...next, pending: mine }, p.ttl)))) {
      p.log.info('another step is changing the live message at the same time; this one shows no card', { cards: changed.tasks.length });
      return;
    }
    try {
      const message = { channel: record.channel, ts: record.ts };
      if (record.mode === 'stream') await p.slack.appendStream(message, '', { ...call, ...changed });
      else await p.slack.update(message, withStepsLine(line, record.text ? `${record.text} …` : p.options.placeholderText), call);
    } catch (error) {
      // As for a piece of text: no answer may have shown it (counted); a refusal showed nothing. Previews end; the final answer sets the message right.
      p.log.warn('the agent’s steps did not reach Slack; the final answer will set the message right', { code: codeOf(error), mode: record.mode });
      await p.store.settle(requestId, mine.token, { ...(isUnknownOutcome(error) ? next : base), dirty: true }, p.ttl).catch(() => undefined);
      return;
    }
    if (!(await p.store.settle(requestId, mine.token, next, p.ttl).catch(() => false))) {
      p.log.warn('the steps are out but could not be recorded as settled; the final answer will set the message right', { cards: changed.tasks.length });
    }
  } catch (error) {
    p.log.warn('could not show the agent’s steps; the answer shows them when it is done', { code: codeOf(error), error_message: (error as Error).message });
  }
}
