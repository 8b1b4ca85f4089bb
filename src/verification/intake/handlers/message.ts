import { classifyEvent, type SlackEventCallback } from '../slack-event';
import { ignore, type IntakeHandler } from '../intake';
import { STATE_KEYS } from '../../stores/state-keys';

/**
 * `app_mention` and `message`: a question for the agent — a mention, a DM (with files too), or a
 * reply without a mention in a thread the bot answered in (one DynamoDB read; a failed read
 * throws, and Slack is asked to retry).
 */
export const messageEvent: IntakeHandler<SlackEventCallback> = async (envelope, context) => {
  const decision = classifyEvent(envelope, context.botUserId);
  if (decision.kind === 'ignore') return ignore(decision.reason);
  const thread = { team_id: envelope.team_id, channel: decision.channel, ts: decision.ts, ...(decision.thread_ts ? { thread_ts: decision.thread_ts } : {}) };
  if (decision.followUp) {
    if (!context.threads) return ignore('follow-ups-off');
    if (!(await context.threads.has({ team_id: envelope.team_id, channel: decision.channel, thread_ts: decision.thread_ts! }))) return ignore('not-in-bot-thread');
  }
  return {
    kind: 'accept',
    claimKey: `${STATE_KEYS.event.prefix}${envelope.event_id}`,
    results: [
      {
        kind: 'task',
        task: {
          thread,
          user: decision.user,
          text: decision.text,
          ...(decision.files ? { files: decision.files } : {}),
          ...(decision.botUserId ? { botUserId: decision.botUserId } : {}),
          ...(envelope.enterprise_id ? { enterpriseId: envelope.enterprise_id } : {}),
          ...(decision.followUp ? { followUp: true as const } : {}),
        },
      },
    ],
  };
};
