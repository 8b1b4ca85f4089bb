import type { AgentSessionStatus } from '../../slack/slack-assistant';
import type { SlackCallOptions } from '../../slack/slack-port';
import { SlackApiError } from '../../slack/slack-api-error';
import type { LiveReply } from '../stores/live-replies';
import { codeOf, STOPPED, workingTask, type LiveParts } from './live-parts';
import { close } from './live-start';

/**
 * For slack-poster, when a task pauses on a question (docs/architecture.md, "Questions"): the text
 * the agent showed before the question stays where it is, as an interim answer — a stream is
 * stopped as it stands, a message that was updated keeps its text — and the record is set so
 * nothing changes that message again: the resumed task's answer is posted below the question, as
 * a new message, when it is done (its previews are not shown; a Slack stream cannot move below a
 * later message). The session the sign of life started stays on record, for the poster to end.
 * Resolves with whether the thread shows an agent session. Idempotent: a second call finds the
 * record set and does nothing.
 */
export async function interim(p: LiveParts, requestId: string, call: SlackCallOptions = {}): Promise<{ session: boolean }> {
  const { record } = await close(p, requestId);
  if (!record) return { session: false };
  const session = record.session === true;
  if (record.mode === 'none') return { session };
  if (record.mode === 'stream') {
    await p.slack.stopStream({ channel: record.channel, ts: record.ts }, { ...call, task: workingTask(p, 'complete') }).catch((error: unknown) => {
      // Stopped already (a redelivery, Slack's own expiry): it shows what it showed.
      if (!(error instanceof SlackApiError) || !STOPPED.has(error.code)) throw error;
    });
  }
  const next: LiveReply = { mode: 'none', channel: record.channel, ts: '', shown: 0, dirty: true, ...(session ? { session: true } : {}), ...(record.threadTs ? { threadTs: record.threadTs } : {}) };
  // Closed above, so nothing is pending on it: the record moves on from what it showed.
  const now = await p.store.get(requestId);
  if (now && !now.pending && now.mode !== 'none') await p.store.advance(requestId, now.shown, next, p.ttl);
  return { session };
}

/** The thread's agent session, if the sign of life started one, to `status` (suspended while a question waits, processing once answered). Never throws. */
export async function sessionStatus(p: LiveParts, requestId: string, status: AgentSessionStatus, call: SlackCallOptions = {}): Promise<boolean> {
  try {
    const record = await p.store.get(requestId);
    if (!record?.session || !p.slack.setSessionStatus) return false;
    await p.slack.setSessionStatus({ channel: record.channel, threadTs: record.threadTs ?? '', status }, call);
    return true;
  } catch (error) {
    p.log.warn('could not set the agent session', { status, code: codeOf(error) });
    return false;
  }
}
