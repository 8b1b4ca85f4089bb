import { decodeFeedbackValue, FEEDBACK_ACTION_ID } from '../../../slack/feedback-blocks';
import { interactionTeamId, type InteractionPayload } from '../interaction-payload';
import { ignore, type IntakeHandler } from '../intake';
import { STATE_KEYS } from '../../stores/state-keys';

/**
 * `block_actions` from the feedback buttons under an answer. The click is recorded (last click
 * wins) and thanked by slack-poster; a negative one carries its `trigger_id`, so the poster can
 * open the "what went wrong" form while the trigger is fresh (3 s).
 */
export const feedbackClick: IntakeHandler<InteractionPayload> = (payload) => {
  const action = payload.actions?.find((candidate) => candidate.action_id === FEEDBACK_ACTION_ID);
  if (!action) return ignore('unknown-action');
  const value = decodeFeedbackValue(action.value);
  const channel = payload.container?.channel_id ?? payload.channel?.id;
  const messageTs = payload.container?.message_ts ?? payload.message?.ts;
  if (!value || !channel || !messageTs) return ignore('not-our-feedback');
  const threadTs = payload.message?.thread_ts ?? payload.container?.thread_ts;
  return {
    kind: 'accept',
    claimKey: `${STATE_KEYS.interaction.prefix}${payload.user.id}#${action.action_ts ?? payload.trigger_id ?? messageTs}`,
    results: [
      {
        kind: 'feedback',
        feedback: {
          team_id: interactionTeamId(payload),
          channel,
          message_ts: messageTs,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          user: payload.user.id,
          request_id: value.requestId,
          ...(value.agent ? { agent: value.agent } : {}),
          value: value.rating,
          ...(value.rating === 'negative' && payload.trigger_id ? { trigger_id: payload.trigger_id } : {}),
        },
      },
    ],
  };
};
