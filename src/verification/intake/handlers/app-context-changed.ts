import type { SlackEventCallback } from '../slack-event';
import type { SuggestedPrompt } from '../../../slack/slack-assistant';
import { ignore, type ContextEntity, type IntakeHandler, type IntakeResult } from '../intake';
import { STATE_KEYS } from '../../stores/state-keys';

/** Slack's entity types (`context.entities[].type`) and what the contract calls them. */
const ENTITY_TYPES: Readonly<Record<string, ContextEntity['type']>> = {
  'slack#/types/channel_id': 'channel',
  'slack#/types/canvas_id': 'canvas',
  'slack#/types/list_id': 'list',
  'slack#/types/message_context': 'message',
};

/** Entities kept for the next task at most (Slack orders them by relevance). */
const MAX_ENTITIES = 10;

/**
 * What a Slack id looks like (a channel's `C…`, `G…` or `D…`, a canvas's or list's `F…`): upper-case
 * letters and digits, at most 32. A message's id is its ts, `<seconds>.<6 digits>`. Anything else —
 * text, markup, a prompt smuggled into an id — is dropped before it can reach an agent.
 */
const SLACK_ID = /^[A-Z][A-Z0-9]{1,31}$/;
const CHANNEL_ID = /^[CGD][A-Z0-9]{1,31}$/;
const MESSAGE_TS = /^\d{1,12}\.\d{6}$/;

/**
 * `app_context_changed`: what the user is looking at while the agent's window is open. It is
 * remembered for the user's next task (so "this channel" means something to the agent), and the
 * suggested prompts follow it: a channel in view offers the channel prompts.
 */
export const appContextChanged: IntakeHandler<SlackEventCallback> = (envelope, context) => {
  const event = envelope.event;
  if (!event.user) return ignore('incomplete');
  const entities = entitiesOf(event.context);
  const results: IntakeResult[] = [{ kind: 'context', context: { team_id: envelope.team_id, user: event.user, entities } }];
  const channel = entities.find((entity) => entity.type === 'channel')?.id;
  const prompts = channel ? context.prompts.channel.map((prompt) => forChannel(prompt, channel)) : context.prompts.home;
  if (event.channel && prompts.length > 0) {
    results.push({ kind: 'slack', action: { type: 'set-prompts', channel: event.channel, prompts: prompts.slice(0, 4), ...(context.prompts.title ? { title: context.prompts.title } : {}) } });
  }
  return { kind: 'accept', claimKey: `${STATE_KEYS.event.prefix}${envelope.event_id}`, results };
};

function entitiesOf(raw: unknown): ContextEntity[] {
  const list = (raw as { entities?: unknown } | undefined)?.entities;
  if (!Array.isArray(list)) return [];
  const entities: ContextEntity[] = [];
  for (const item of list) {
    const entity = item as { type?: unknown; value?: unknown };
    const type = typeof entity.type === 'string' ? ENTITY_TYPES[entity.type] : undefined;
    if (!type) continue;
    if (type === 'message') {
      const value = entity.value as { channel_id?: unknown; message_ts?: unknown } | undefined;
      if (typeof value?.channel_id === 'string' && typeof value.message_ts === 'string' && CHANNEL_ID.test(value.channel_id) && MESSAGE_TS.test(value.message_ts)) entities.push({ type, id: value.message_ts, channel: value.channel_id });
    } else if (typeof entity.value === 'string' && (type === 'channel' ? CHANNEL_ID : SLACK_ID).test(entity.value)) {
      entities.push({ type, id: entity.value });
    }
    if (entities.length >= MAX_ENTITIES) break;
  }
  return entities;
}

function forChannel(prompt: SuggestedPrompt, channel: string): SuggestedPrompt {
  return { title: prompt.title, message: prompt.message.replaceAll('{channel}', `<#${channel}>`) };
}
