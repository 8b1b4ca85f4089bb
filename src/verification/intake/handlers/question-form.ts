import { decodeQuestionRef, QUESTION_FORM_ACTION_ID, QUESTION_FORM_BLOCK_ID, QUESTION_FORM_CALLBACK_ID } from '../../questions/question-blocks';
import { interactionTeamId, type InteractionPayload } from '../interaction-payload';
import { ignore, type IntakeHandler } from '../intake';

/** Characters of a typed answer kept at most (the contract's limit on `answer.text`). */
const MAX_ANSWER = 3000;

/**
 * `view_submission` of a question's answer form: the typed text goes to the tasks queue as the
 * answer, checked and resumed as a click is (question-click.ts). The form names its question in
 * `private_metadata`; the channel is not in a view's payload, so the pause's own is taken.
 */
export const questionForm: IntakeHandler<InteractionPayload> = (payload, context) => {
  if (payload.view?.callback_id !== QUESTION_FORM_CALLBACK_ID) return ignore('unknown-view');
  const ref = decodeQuestionRef(payload.view.private_metadata);
  if (!ref || ref.choice !== 'text') return ignore('not-our-question');
  const text = payload.view.state?.values?.[QUESTION_FORM_BLOCK_ID]?.[QUESTION_FORM_ACTION_ID]?.value?.trim().slice(0, MAX_ANSWER);
  if (!text) return ignore('empty-answer');
  return {
    kind: 'accept',
    claimKey: `interaction#${payload.user.id}#view#${payload.view.id ?? `${ref.requestId}#${ref.round}`}`,
    results: [{ kind: 'answer', answer: { request_id: ref.requestId, round: ref.round, team_id: interactionTeamId(payload), channel: '', user_id: payload.user.id, text, clicked_at: context.now } }],
  };
};
