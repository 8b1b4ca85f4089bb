import type { Question } from '../../contract';
import type { MessageBlock } from '../../slack/feedback-blocks';
import { toSafeMrkdwn } from '../../slack/safe-mrkdwn';

/**
 * What a question looks like in Slack (docs/architecture.md, "Questions"), for slack-poster
 * (show-question.ts) and the intake's click handlers: a section with the question, then an
 * `actions` block — one button per option, a button that opens the answer form where the agent
 * takes typed text, or "I have signed in" for an `auth` question. Every button's `value` is a
 * compact reference, `q1|<request id>|<round>|<option index or "text">`: never the answer alone,
 * so a forged click names at most an option the pause holds, and the pause says who may answer.
 */

/** Every question button's `action_id` starts with this (an id is unique within its block, so the option's index follows). */
export const QUESTION_ACTION_PREFIX = 'question_answer';
/** The answer form's `callback_id`. */
export const QUESTION_FORM_CALLBACK_ID = 'question_answer_form';
/** The answer form's one input: its block and action ids. */
export const QUESTION_FORM_BLOCK_ID = 'answer';
export const QUESTION_FORM_ACTION_ID = 'text';

/** What a button (or the form's `private_metadata`) names: the task, the question's round, and the option or the form. */
export type QuestionRef = { requestId: string; round: number; choice: number | 'text'; /** The form's field label, on a "type an answer" button: the form opens without a read. */ label?: string };

export function encodeQuestionRef(ref: QuestionRef): string {
  return `q1|${ref.requestId}|${ref.round}|${ref.choice}${ref.label ? `|${ref.label.slice(0, 48)}` : ''}`;
}

/** What a button's `value` says, or undefined when it is not one of ours (read from an untrusted click). */
export function decodeQuestionRef(raw: string | undefined): QuestionRef | undefined {
  const parts = raw?.split('|');
  if (!parts || parts.length < 4 || parts[0] !== 'q1') return undefined;
  const [, requestId, round, choice, ...label] = parts as [string, string, string, string, ...string[]];
  if (!/^[0-9a-f-]{36}$/i.test(requestId) || !/^\d{1,4}$/.test(round)) return undefined;
  if (choice !== 'text' && !/^\d$/.test(choice)) return undefined;
  const labelText = label.join('|').slice(0, 48);
  return { requestId, round: Number(round), choice: choice === 'text' ? 'text' : Number(choice), ...(choice === 'text' && labelText ? { label: labelText } : {}) };
}

export type QuestionTexts = { typeAnswer: string; signedIn: string };

/** The question as posted: its text and its buttons. */
export function questionBlocks(question: Question, at: { requestId: string; round: number }, texts: QuestionTexts): MessageBlock[] {
  const button = (text: string, choice: number | 'text', index: number, style?: 'primary') => ({
    type: 'button',
    action_id: `${QUESTION_ACTION_PREFIX}_${index}`,
    text: { type: 'plain_text', text: text.slice(0, 75), emoji: true },
    value: encodeQuestionRef({ ...at, choice, ...(choice === 'text' && question.free_text ? { label: question.free_text.label } : {}) }),
    ...(style ? { style } : {}),
  });
  const options = question.options ?? [];
  const elements =
    question.kind === 'auth' && options.length === 0
      ? [button(texts.signedIn, 0, 0, 'primary')]
      : [...options.map((option, index) => button(option.label, index, index)), ...(question.free_text ? [button(texts.typeAnswer, 'text', options.length)] : [])];
  return [
    { type: 'section', text: { type: 'mrkdwn', text: toSafeMrkdwn(question.text).slice(0, 3000) } },
    { type: 'actions', block_id: `question_${at.round}`, elements },
  ];
}

/** The question once closed: its text, and under it what closed it (who answered what, or why) — no buttons. */
export function closedQuestionBlocks(question: Question, note: string): MessageBlock[] {
  return [
    { type: 'section', text: { type: 'mrkdwn', text: toSafeMrkdwn(question.text).slice(0, 3000) } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: note.slice(0, 3000) }] },
  ];
}

/** The answer form a "type an answer" click opens; `private_metadata` names the question as a button does. */
export function questionFormView(at: { requestId: string; round: number }, texts: { title: string; submit: string; label: string }): Record<string, unknown> {
  return {
    type: 'modal',
    callback_id: QUESTION_FORM_CALLBACK_ID,
    private_metadata: encodeQuestionRef({ ...at, choice: 'text' }),
    title: { type: 'plain_text', text: texts.title.slice(0, 24) },
    submit: { type: 'plain_text', text: texts.submit.slice(0, 24) },
    blocks: [
      {
        type: 'input',
        block_id: QUESTION_FORM_BLOCK_ID,
        label: { type: 'plain_text', text: texts.label.slice(0, 2000) },
        element: { type: 'plain_text_input', action_id: QUESTION_FORM_ACTION_ID, multiline: true, max_length: 3000 },
      },
    ],
  };
}
