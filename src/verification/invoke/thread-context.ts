import type { ThreadMessage } from '../../contract';
import type { SlackThreadMessage } from '../../slack/slack-conversations';
import { REPLY_METADATA_TYPE } from '../../slack/reply-metadata';
import { stripMentions } from '../intake/slack-event';

export type ThreadContextLimits = {
  /** Earlier messages sent at most (THREAD_CONTEXT_MAX_MESSAGES); the newest are kept. */
  maxMessages: number;
  /** Characters of message text sent at most (THREAD_CONTEXT_MAX_CHARS); the newest are kept. */
  maxChars: number;
};

export type ThreadContext = {
  messages: ThreadMessage[];
  /** Earlier messages that were read but left out by the limits (0 when all fit). */
  leftOut: number;
};

/** Message subtypes that are something a person or a bot said; joins, topic changes and tombstones are not. */
const SPOKEN_SUBTYPES: ReadonlySet<string | undefined> = new Set([undefined, 'file_share', 'thread_broadcast', 'bot_message', 'me_message']);

/**
 * Turns a thread read back from Slack into the `messages` of `execute_task` (docs/contract.md,
 * "Thread context"): oldest first, the bot's own replies as `assistant`, everyone else as `user`
 * with their id — other apps and bots included, by their bot id — the bot's mention stripped,
 * files named. When not all fit the limits, the newest messages are kept, and the thread's first
 * message (usually the question that started it) with them, cut to a quarter of the character
 * budget if need be.
 *
 * A reply is the bot's by its user id (`botUserId`: the event's bot authorization, or
 * SLACK_BOT_USER_ID): whatever this app posts with its bot token carries it. The reply metadata
 * is not proof — any app in the channel can post a message with the same `event_type` — so it
 * counts only when the bot's id is unknown, and then only on an app's message (`bot_id`).
 */
export function threadContext(read: readonly SlackThreadMessage[], botUserId: string | undefined, limits: ThreadContextLimits): ThreadContext {
  const own = new Set([botUserId].filter((id): id is string => Boolean(id)));
  const all = read.filter((message) => SPOKEN_SUBTYPES.has(message.subtype)).map((message) => toThreadMessage(message, own)).filter((message) => message.text !== '');
  if (limits.maxMessages <= 0 || limits.maxChars <= 0) return { messages: [], leftOut: all.length };

  const totalChars = all.reduce((sum, message) => sum + message.text.length, 0);
  if (all.length <= limits.maxMessages && totalChars <= limits.maxChars) return { messages: all, leftOut: 0 };

  // Not everything fits: the newest messages, and a place for the first one (cut to at most a
  // quarter of the characters) when the budget has room for both.
  const first = all[0]!;
  const firstRoom = Math.min(first.text.length, Math.floor(limits.maxChars / 4));
  const keepFirst = all.length >= 2 && limits.maxMessages >= 2 && firstRoom >= Math.min(40, first.text.length);
  const newestCount = limits.maxMessages - (keepFirst ? 1 : 0);
  const newestChars = limits.maxChars - (keepFirst ? firstRoom : 0);
  const kept: ThreadMessage[] = [];
  let chars = 0;
  for (let index = all.length - 1; index >= (keepFirst ? 1 : 0) && kept.length < newestCount; index -= 1) {
    const message = all[index]!;
    if (chars + message.text.length > newestChars) {
      // The newest message alone is longer than the budget: send its end rather than nothing.
      if (kept.length === 0) kept.push({ ...message, text: `…${message.text.slice(message.text.length - Math.max(1, newestChars - 1))}` });
      break;
    }
    chars += message.text.length;
    kept.push(message);
  }
  kept.reverse();
  if (keepFirst) kept.unshift(first.text.length <= firstRoom ? first : { ...first, text: `${first.text.slice(0, firstRoom - 1)}…` });
  return { messages: kept, leftOut: all.length - kept.length };
}

function toThreadMessage(message: SlackThreadMessage, own: ReadonlySet<string>): ThreadMessage {
  const fromBot = own.size > 0 ? message.user !== undefined && own.has(message.user) : message.bot_id !== undefined && message.metadata?.event_type === REPLY_METADATA_TYPE;
  const files = (message.files ?? []).map((file) => file.name ?? file.title).filter(Boolean);
  const said = fromBot ? (message.text ?? '').trim() : stripMentions(message.text ?? '', own);
  const text = [said, ...(files.length ? [`[shared ${files.length === 1 ? 'a file' : 'files'}: ${files.join(', ')}]`] : [])].filter(Boolean).join('\n');
  const userId = message.user ?? message.bot_id;
  return fromBot ? { role: 'assistant', text, ts: message.ts } : { role: 'user', text, ...(userId ? { user_id: userId } : {}), ts: message.ts };
}
