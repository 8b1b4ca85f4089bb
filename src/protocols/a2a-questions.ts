import { createHash } from 'node:crypto';
import type { Question } from '../contract';

/**
 * The question of an interrupted A2A task (docs/contract.md, "Questions"): its status message is
 * the text; A2A gives no options, so the answer is free text. `auth-required` is a question of
 * kind `auth`, its link the first https URL in the message — taken out of the text, which the
 * whole thread sees, since the link goes to the asker alone. The id is the same for every read of
 * one interruption (a poll, a stream's end) and new for the next one, so an answer names the
 * interruption it answers.
 */
export function a2aQuestion(state: 'input-required' | 'auth-required', taskId: string, statusText: string): Question {
  const text = statusText.trim() || (state === 'auth-required' ? 'The agent needs you to sign in first.' : 'The agent needs more input.');
  const id = `a2a-${state}-${createHash('sha256').update(`${taskId}\n${text}`).digest('hex').slice(0, 16)}`;
  if (state === 'input-required') return { id, text: text.slice(0, 3000), free_text: { label: 'Your answer' } };
  const link = /https:\/\/[^\s<>"]+/.exec(text)?.[0];
  if (!link) return { id, text: text.slice(0, 3000), kind: 'auth' };
  return { id, text: text.replace(link, 'the link sent to the asker').slice(0, 3000), kind: 'auth', auth_url: link };
}
