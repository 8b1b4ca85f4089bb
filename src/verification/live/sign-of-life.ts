import type { SlackCallOptions } from '../../slack/slack-port';
import { SlackApiError } from '../../slack/slack-api-error';
import { replyThreadTs } from '../queues/slack-thread';
import type { LiveReply } from '../stores/live-replies';
import { codeOf, isStart, lapsed, shownAs, type LiveParts, type LiveTarget, type StartClaim } from './live-parts';
import { claimStart, recordStart, startLive } from './live-start';

/**
 * A sign of life when the task is picked up: the thread's agent session or status ("is
 * working…") where Slack supports it, else a live message started empty (a stream, or a
 * placeholder). Once per task, whatever the copies of it: the first to claim the record shows
 * it. Never throws.
 */
export async function signOfLife(p: LiveParts, target: LiveTarget, call: SlackCallOptions = {}, how: { title?: string } = {}): Promise<LiveReply['mode'] | 'session'> {
  // The claim while it is held and nothing is recorded under it yet.
  let held: StartClaim | undefined;
  let sessionTried = false;
  try {
    // A task queued twice (a send repeated, a Slack retry that took over its claim) shows it once.
    const existing = await p.store.get(target.request_id);
    if (existing && !(existing.pending && isStart(existing) && lapsed(p, existing.pending))) return shownAs(existing);
    const claim = await claimStart(p, target, existing);
    if (!claim) return shownAs((await p.store.get(target.request_id)) ?? existing);
    held = claim;
    const thread = { channel: target.channel, threadTs: replyThreadTs(target) };
    // Where Slack allows it, the thread's agent session: `processing`, with the Stop button
    // (docs/architecture.md §2.6). Created by this call, titled after the question.
    if (p.options.sessions && p.slack.setSessionStatus) {
      try {
        sessionTried = true;
        await p.slack.setSessionStatus({ ...thread, status: 'processing', ...(how.title ? { title: how.title } : {}), initiatorUserId: target.user_id }, call);
        const recorded = await recordStart(p, claim, { mode: 'status', channel: target.channel, ts: '', shown: 0, session: true, threadTs: thread.threadTs }, call, { session: true });
        held = undefined;
        return shownAs(recorded);
      } catch (error) {
        if (!(error instanceof SlackApiError) || error.outcome === 'unknown') throw error;
        sessionTried = false;
        p.log.debug('no agent session here; showing the thread status instead', { code: codeOf(error) });
      }
    }
    try {
      await p.slack.setStatus(thread, p.options.workingText, call);
      const recorded = await recordStart(p, claim, { mode: 'status', channel: target.channel, ts: '', shown: 0 }, call);
      held = undefined;
      return shownAs(recorded);
    } catch (error) {
      if (!(error instanceof SlackApiError)) throw error;
      p.log.debug('no thread status here; starting the live message instead', { code: codeOf(error) });
    }
    const recorded = await startLive(p, target, '', call, claim);
    held = undefined;
    return shownAs(recorded);
  } catch (error) {
    p.log.warn('could not show a sign of life; the answer still comes', { code: codeOf(error), error_message: (error as Error).message });
    // Nothing started under the claim (or nobody knows): the claim is given back, so the first
    // text can start the live message. A session that may have opened stays on record.
    if (held) {
      const released: LiveReply = { mode: 'status', channel: target.channel, ts: '', shown: 0, ...(sessionTried ? { session: true as const, threadTs: replyThreadTs(target) } : {}) };
      await p.store.settle(target.request_id, held.token, released, p.ttl).catch(() => undefined);
    }
    return 'none';
  }
}
