import type { Clock } from '../../clock';
import type { FeedbackMessage } from '../queues/replies-queue';
import type { ListableRecords, Records } from '../stores/records';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * Feedback on answers (docs/architecture.md §2.6, "Feedback"): one record per answer and user,
 * against the request id, the agent and the thread. The last click wins — by when it reached
 * slack-events, not when it is processed, so a late redelivery never undoes a newer click — and
 * the form's text joins the record whatever the rating.
 */
export type FeedbackRecord = {
  request_id: string;
  agent?: string;
  team_id: string;
  channel: string;
  message_ts: string;
  thread_ts?: string;
  user: string;
  value?: 'positive' | 'negative';
  comment?: string;
  /** Epoch ms of the click that set `value`. */
  clicked_at: number;
  updated_at: number;
};

export type FeedbackRecords = ReturnType<typeof createFeedbackRecords>;

const PREFIX = STATE_KEYS.feedback.prefix;

export function createFeedbackRecords(records: Records, options: { clock: Clock; ttlSeconds: number }) {
  const key = (requestId: string, user: string) => `${PREFIX}${requestId}#${user}`;
  return {
    /** Applies a click or a form; resolves with the record as it is now, and whether this changed the rating. */
    async record(feedback: FeedbackMessage): Promise<{ record: FeedbackRecord; changedValue: boolean }> {
      const current = await records.get<FeedbackRecord>(key(feedback.request_id, feedback.user));
      const newerClick = feedback.value !== undefined && (!current || current.clicked_at <= feedback.clicked_at);
      const next: FeedbackRecord = {
        request_id: feedback.request_id,
        ...(feedback.agent ?? current?.agent ? { agent: feedback.agent ?? current?.agent } : {}),
        team_id: feedback.team_id,
        channel: feedback.channel,
        message_ts: feedback.message_ts,
        ...(feedback.thread_ts ?? current?.thread_ts ? { thread_ts: feedback.thread_ts ?? current?.thread_ts } : {}),
        user: feedback.user,
        ...(newerClick ? { value: feedback.value } : current?.value ? { value: current.value } : {}),
        ...(feedback.comment ?? current?.comment ? { comment: feedback.comment ?? current?.comment } : {}),
        clicked_at: newerClick ? feedback.clicked_at : (current?.clicked_at ?? feedback.clicked_at),
        updated_at: options.clock.now(),
      };
      await records.put(key(feedback.request_id, feedback.user), next, options.ttlSeconds);
      return { record: next, changedValue: newerClick && current?.value !== feedback.value };
    },
  };
}

/** Every feedback record the local stack holds, newest first (`zone feedback`). */
export async function listFeedback(records: ListableRecords): Promise<FeedbackRecord[]> {
  const entries = await records.list<FeedbackRecord>(PREFIX);
  return entries.map((entry) => entry.value).sort((a, b) => b.updated_at - a.updated_at);
}
