import type { AnswerMessage } from '../queues/tasks-queue';
import type { Pause } from '../stores/pauses';

/**
 * agent-invoker's check of an answer before it resumes anything (docs/architecture.md,
 * "Questions"): the question must still wait on this round, the click must come from the pause's
 * team and channel, and from the asker or one of the agent's approvers; the option must be one
 * the question has (a typed answer only where it takes one). What the answer is comes from the
 * pause, never from the click: a button names only an option's index.
 */
export type Verdict =
  | { ok: true; answer: { value?: string; text?: string; label: string } }
  | { ok: false; reason: 'closed' | 'not-yours' | 'elsewhere' | 'no-such-option' };

/** What an `auth` question's "I have signed in" answers. */
export const SIGNED_IN_TEXT = 'signed in';

export function judgeAnswer(pause: Pause | undefined, answer: AnswerMessage, approvers: readonly string[] | undefined): Verdict {
  if (!pause || pause.round !== answer.round || pause.state !== 'waiting') return { ok: false, reason: 'closed' };
  // A form's submission names no channel (a view has none): its team still must match.
  if (pause.thread.team_id !== answer.team_id || (answer.channel !== '' && pause.thread.channel !== answer.channel)) return { ok: false, reason: 'elsewhere' };
  if (answer.user_id !== pause.asker && !approvers?.includes(answer.user_id)) return { ok: false, reason: 'not-yours' };
  const question = pause.question;
  if (answer.text !== undefined) return question.free_text ? { ok: true, answer: { text: answer.text, label: answer.text } } : { ok: false, reason: 'no-such-option' };
  const options = question.options ?? [];
  if (question.kind === 'auth' && options.length === 0 && answer.option === 0) return { ok: true, answer: { text: SIGNED_IN_TEXT, label: SIGNED_IN_TEXT } };
  const option = answer.option === undefined ? undefined : options[answer.option];
  return option ? { ok: true, answer: { value: option.value, label: option.label } } : { ok: false, reason: 'no-such-option' };
}
