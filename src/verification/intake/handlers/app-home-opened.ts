import type { SlackEventCallback } from '../slack-event';
import { ignore, type IntakeHandler } from '../intake';
import { STATE_KEYS } from '../../stores/state-keys';

/**
 * `app_home_opened` on the messages tab: the user opened the agent's DM. It offers the suggested
 * prompts (agent apps set them without a thread; with one, Slack drops them silently).
 */
export const appHomeOpened: IntakeHandler<SlackEventCallback> = (envelope, context) => {
  const event = envelope.event;
  if (event.tab !== 'messages') return ignore('not-the-messages-tab');
  if (!event.channel || context.prompts.home.length === 0) return ignore('no-prompts');
  return {
    kind: 'accept',
    claimKey: `${STATE_KEYS.event.prefix}${envelope.event_id}`,
    results: [{ kind: 'slack', action: { type: 'set-prompts', channel: event.channel, prompts: context.prompts.home.slice(0, 4), ...(context.prompts.title ? { title: context.prompts.title } : {}) } }],
  };
};
