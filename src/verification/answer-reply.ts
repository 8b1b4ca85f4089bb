import type { UserMessages } from './user-messages';

/** Characters Slack shows as nothing: whitespace, zero-width spaces and joiners, the BOM. */
const INVISIBLE = /^[\s\u200B-\u200D\u2060\uFEFF]*$/u;

/**
 * The reply for a successful outcome: its text, or — when the agent answered nothing visible
 * (empty, only whitespace) — the same safe apology as a failed task, so the user still hears back
 * and Slack is never asked to post an empty message.
 */
export function answerReply(text: string, messages: UserMessages): { kind: 'answer' | 'error'; text: string } {
  return INVISIBLE.test(text) ? { kind: 'error', text: messages.executionFailed } : { kind: 'answer', text };
}
