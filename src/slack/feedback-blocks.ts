/**
 * The feedback buttons under every final answer (docs/architecture.md §2.6, "Feedback"): a
 * `context_actions` block holding Slack's `feedback_buttons` (👍 / 👎). Each button's `value`
 * names the answer — its request id and the agent that wrote it — so a click is recorded against
 * them without any lookup. Types only from Slack's side: a block is plain JSON here.
 */

/** A Block Kit block, as JSON (the pipeline builds few and reads none). */
export type MessageBlock = { type: string } & Record<string, unknown>;

export type FeedbackValue = 'positive' | 'negative';

/** The `action_id` of the feedback buttons: how the intake tells a feedback click from other clicks. */
export const FEEDBACK_ACTION_ID = 'answer_feedback';
/** The `callback_id` of the "what went wrong" form. */
export const FEEDBACK_FORM_CALLBACK_ID = 'answer_feedback_form';
/** Slack's limit on a button's `value`. */
const MAX_VALUE_LENGTH = 2000;

export type FeedbackTarget = { requestId: string; agent?: string };

export function feedbackBlocks(target: FeedbackTarget, labels: { positive: string; negative: string } = { positive: 'Good answer', negative: 'Bad answer' }): MessageBlock[] {
  const value = (rating: FeedbackValue) => encodeFeedbackValue({ rating, ...target });
  return [
    {
      type: 'context_actions',
      elements: [
        {
          type: 'feedback_buttons',
          action_id: FEEDBACK_ACTION_ID,
          positive_button: { text: { type: 'plain_text', text: '👍' }, value: value('positive'), accessibility_label: labels.positive },
          negative_button: { text: { type: 'plain_text', text: '👎' }, value: value('negative'), accessibility_label: labels.negative },
        },
      ],
    },
  ];
}

/** `v1|<rating>|<request id>|<agent>`: short, and safe to read back from an untrusted click. */
export function encodeFeedbackValue(value: { rating: FeedbackValue } & FeedbackTarget): string {
  return `v1|${value.rating}|${value.requestId}|${value.agent ?? ''}`.slice(0, MAX_VALUE_LENGTH);
}

/** What a clicked button's `value` says, or undefined when it is not one of ours. */
export function decodeFeedbackValue(raw: string | undefined): ({ rating: FeedbackValue } & FeedbackTarget) | undefined {
  const parts = raw?.split('|');
  if (!parts || parts.length !== 4 || parts[0] !== 'v1') return undefined;
  const [, rating, requestId, agent] = parts as [string, string, string, string];
  if ((rating !== 'positive' && rating !== 'negative') || !/^[0-9a-f-]{36}$/i.test(requestId)) return undefined;
  return { rating, requestId, ...(agent ? { agent } : {}) };
}

/** The one-field "what went wrong" modal a negative click opens; `private_metadata` carries the answer. */
export function feedbackFormView(answer: { requestId: string; agent?: string; channel: string; messageTs: string; threadTs?: string }, texts: { title: string; label: string; submit: string }): Record<string, unknown> {
  return {
    type: 'modal',
    callback_id: FEEDBACK_FORM_CALLBACK_ID,
    private_metadata: JSON.stringify({ r: answer.requestId, a: answer.agent ?? '', c: answer.channel, m: answer.messageTs, t: answer.threadTs ?? '' }),
    title: { type: 'plain_text', text: texts.title.slice(0, 24) },
    submit: { type: 'plain_text', text: texts.submit.slice(0, 24) },
    blocks: [
      {
        type: 'input',
        block_id: 'what_went_wrong',
        label: { type: 'plain_text', text: texts.label.slice(0, 2000) },
        element: { type: 'plain_text_input', action_id: 'text', multiline: true, max_length: 2000 },
      },
    ],
  };
}

/** The answer a submitted form is about (from its `private_metadata`), or undefined when it is not ours. */
export function feedbackFormAnswer(privateMetadata: string | undefined): { requestId: string; agent?: string; channel: string; messageTs: string; threadTs?: string } | undefined {
  try {
    const parsed = JSON.parse(privateMetadata ?? '') as Record<string, unknown>;
    const { r, a, c, m, t } = parsed;
    if (typeof r !== 'string' || !/^[0-9a-f-]{36}$/i.test(r) || typeof c !== 'string' || typeof m !== 'string') return undefined;
    return { requestId: r, ...(typeof a === 'string' && a ? { agent: a } : {}), channel: c, messageTs: m, ...(typeof t === 'string' && t ? { threadTs: t } : {}) };
  } catch {
    return undefined;
  }
}
