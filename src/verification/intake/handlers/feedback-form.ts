import { FEEDBACK_FORM_CALLBACK_ID, feedbackFormAnswer } from '../../../slack/feedback-blocks';
import { interactionTeamId, type InteractionPayload } from '../interaction-payload';
import { ignore, type IntakeHandler } from '../intake';
import { STATE_KEYS } from '../../stores/state-keys';

/** Characters of "what went wrong" kept at most. */
const MAX_COMMENT = 2000;

/** `view_submission` of the "what went wrong" form: its text joins the feedback record. */
export const feedbackForm: IntakeHandler<InteractionPayload> = (payload) => {
  if (payload.view?.callback_id !== FEEDBACK_FORM_CALLBACK_ID) return ignore('unknown-view');
  const answer = feedbackFormAnswer(payload.view.private_metadata);
  if (!answer) return ignore('not-our-feedback');
  const comment = payload.view.state?.values?.what_went_wrong?.text?.value?.trim().slice(0, MAX_COMMENT);
  if (!comment) return ignore('empty-feedback');
  return {
    kind: 'accept',
    claimKey: `${STATE_KEYS.interaction.prefix}${payload.user.id}#view#${payload.view.id ?? answer.messageTs}`,
    results: [
      {
        kind: 'feedback',
        feedback: {
          team_id: interactionTeamId(payload),
          channel: answer.channel,
          message_ts: answer.messageTs,
          ...(answer.threadTs ? { thread_ts: answer.threadTs } : {}),
          user: payload.user.id,
          request_id: answer.requestId,
          ...(answer.agent ? { agent: answer.agent } : {}),
          comment,
        },
      },
    ],
  };
};
