import type { MessageBlock } from '../../slack/feedback-blocks';
import type { SlackCallOptions } from '../../slack/slack-port';
import { SlackApiError } from '../../slack/slack-api-error';
import { codeOf, isStart, STOPPED, withStepsLine, workingTask, type LiveParts, type ReplyKind } from './live-parts';
import { changedCards, failedCards, type StepCards } from './step-cards';
import { close } from './live-start';

/**
 * For slack-poster: puts `text` (the final message of the answer, already safe and at most one
 * Slack message) into the live message, or for an error adds it under what was shown. Returns
 * the live message's ts, or undefined when there is none (post the answer as usual) — also
 * when a start is under way: it is closed, and its writer stops what it made.
 * Idempotent: a stream already stopped is rewritten with chat.update, which replaces.
 */
export async function finish(p: LiveParts, requestId: string, text: string, kind: ReplyKind, call: SlackCallOptions & { blocks?: readonly MessageBlock[]; steps?: FinalSteps } = {}): Promise<string | undefined> {
  const { blocks, steps, ...callOptions } = call;
  const { record, unsure } = await close(p, requestId);
  if (!record || record.mode === 'none' || isStart(record)) return undefined;
  const dirty = record.dirty === true || unsure;
  const message = { channel: record.channel, ts: record.ts };
  // The reply's metadata, as on posted chunks: a poster that takes the reply over finds it.
  const marker = { requestId, chunk: 0 };
  const withBlocks = blocks?.length ? { blocks } : {};
  if (record.mode === 'stream') {
    try {
      // The cards end as the agent's steps did: those not shown so (or at all) are sent with the stop;
      // a task that failed (or was stopped) ends those still open as errors.
      const cards = kind !== 'answer' ? failedCards(record.openCards) : steps ? changedCards(steps.cards, record.cards).changed.tasks : [];
      await p.slack.stopStream(message, { ...callOptions, marker, ...(cards.length ? { tasks: cards } : {}), task: workingTask(p, kind === 'answer' ? 'complete' : 'error'), ...(kind === 'answer' ? withBlocks : { markdownText: `\n\n${text}` }) });
      if (kind !== 'answer' && !dirty) return record.ts;
    } catch (error) {
      // Stopped already (an earlier delivery, a Stop, or Slack let it expire): the update below sets it right.
      if (!(error instanceof SlackApiError) || !STOPPED.has(error.code)) throw error;
    }
    // The answer as the agent wrote it (mrkdwn, links made safe), whatever the previews showed.
    await p.slack.update(message, kind === 'answer' ? text : `${record.text ?? ''}\n\n${text}`.trim(), { ...callOptions, marker, ...(kind === 'answer' ? withBlocks : {}) });
    return record.ts;
  }
  // No stream: the steps fold to their line above the answer.
  await p.slack.update(message, kind === 'answer' ? withStepsLine(steps?.line, text) : `${record.text ?? ''}\n\n${text}`.trim(), { ...callOptions, marker, ...(kind === 'answer' ? withBlocks : {}) });
  return record.ts;
}

/** The steps a final answer ended with, as slack-poster hands them over: guarded cards, and the line they fold to. */
export type FinalSteps = { cards: StepCards; line: string };

/**
 * For slack-poster, once the final message is out: the thread's agent session leaves
 * `processing` (its Stop button goes), if the sign of life started one. Never throws.
 */
export async function endSession(p: LiveParts, requestId: string, call: SlackCallOptions = {}): Promise<void> {
  try {
    const record = await p.store.get(requestId);
    if (!record?.session || !p.slack.setSessionStatus) return;
    await p.slack.setSessionStatus({ channel: record.channel, threadTs: record.threadTs ?? '', status: 'active' }, call);
  } catch (error) {
    p.log.warn('could not move the agent session out of processing', { code: codeOf(error) });
  }
}
