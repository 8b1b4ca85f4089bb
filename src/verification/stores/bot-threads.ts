import { STATE_KEYS } from './state-keys';

/** A Slack thread the bot has answered in: where a reply without a mention is still for the bot. */
export type BotThread = { team_id: string; channel: string; thread_ts: string };

/**
 * The record of threads the bot is in (docs/architecture.md §10.1, "Follow-ups"): slack-poster
 * records a thread when it answers there, slack-events asks before taking a reply that does not
 * mention the bot. Entries expire after THREAD_MEMORY_TTL_SECONDS without an answer.
 */
export interface BotThreads {
  /** Records the thread, or moves its expiry on. */
  remember(thread: BotThread, ttlSeconds: number): Promise<void>;
  /** True while the thread's record has not expired. */
  has(thread: BotThread): Promise<boolean>;
}

export function botThreadKey(thread: BotThread): string {
  return `${STATE_KEYS.thread.prefix}${thread.team_id}#${thread.channel}#${thread.thread_ts}`;
}
