import type { UserMessages } from '../messages/user-messages';

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

/** An answer with the notes about what its task went without (skipped files, an unread thread) under it. */
export function withNotes(text: string, notes: readonly string[] | undefined): string {
  return notes?.length ? `${text}\n\n${notes.map((note) => `ℹ️ ${note}`).join('\n')}` : text;
}
