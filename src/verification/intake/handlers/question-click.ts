import { decodeQuestionRef, QUESTION_ACTION_PREFIX, questionFormView } from '../../questions/question-blocks';
import { DEFAULT_USER_MESSAGES } from '../../messages/user-messages';
import { interactionTeamId, type InteractionPayload } from '../interaction-payload';
import { ignore, type IntakeHandler } from '../intake';

/**
 * `block_actions` from a question's buttons (docs/architecture.md, "Questions"): an option's click
 * goes to the tasks queue as an answer, where agent-invoker checks who clicked against the pause
 * and resumes the task once; "type an answer" opens the answer form with the click's trigger
 * (fresh for 3 s: slack-poster opens it from the replies queue, as the feedback form). No read and
 * no Slack call here: the ack stays fast.
 */
export const questionClick: IntakeHandler<InteractionPayload> = (payload, context) => {
  const action = payload.actions?.find((candidate) => candidate.action_id.startsWith(QUESTION_ACTION_PREFIX));
  if (!action) return ignore('unknown-action');
  const ref = decodeQuestionRef(action.value);
  const channel = payload.container?.channel_id ?? payload.channel?.id;
  if (!ref || !channel) return ignore('not-our-question');
  const claimKey = `interaction#${payload.user.id}#${action.action_ts ?? payload.trigger_id ?? `${ref.requestId}#${ref.round}#${ref.choice}`}`;
  if (ref.choice === 'text') {
    if (!payload.trigger_id) return ignore('no-trigger');
    const view = questionFormView(ref, { title: DEFAULT_USER_MESSAGES.questionFormTitle, submit: DEFAULT_USER_MESSAGES.questionFormSubmit, label: ref.label ?? DEFAULT_USER_MESSAGES.questionFormTitle });
    return { kind: 'accept', claimKey, results: [{ kind: 'slack', action: { type: 'open-view', trigger_id: payload.trigger_id, view } }] };
  }
  return {
    kind: 'accept',
    claimKey,
    results: [{ kind: 'answer', answer: { request_id: ref.requestId, round: ref.round, team_id: interactionTeamId(payload), channel, user_id: payload.user.id, option: ref.choice, clicked_at: context.now } }],
  };
};
