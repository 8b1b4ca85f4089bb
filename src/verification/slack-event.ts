import { z } from 'zod';

/** The parts of Slack's Events API payloads the ingress reads (docs/architecture.md §10.1); everything else passes through. */
export const SlackInnerEventSchema = z
  .object({
    type: z.string(),
    subtype: z.string().optional(),
    user: z.string().optional(),
    bot_id: z.string().optional(),
    text: z.string().optional(),
    ts: z.string().optional(),
    thread_ts: z.string().optional(),
    channel: z.string().optional(),
    channel_type: z.string().optional(),
    team: z.string().optional(),
  })
  .loose();
export type SlackInnerEvent = z.infer<typeof SlackInnerEventSchema>;

export const SlackEnvelopeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('url_verification'), challenge: z.string() }).loose(),
  z
    .object({
      type: z.literal('event_callback'),
      team_id: z.string(),
      event_id: z.string(),
      event_time: z.number().optional(),
      event: SlackInnerEventSchema,
      authorizations: z.array(z.object({ user_id: z.string().optional(), is_bot: z.boolean().optional() }).loose()).optional(),
    })
    .loose(),
]);
export type SlackEnvelope = z.infer<typeof SlackEnvelopeSchema>;
export type SlackEventCallback = Extract<SlackEnvelope, { type: 'event_callback' }>;

/** Why an event is acknowledged without a task; the reasons are logged and counted. */
export type IgnoreReason = 'event-type' | 'bot-message' | 'subtype' | 'own-message' | 'not-a-dm' | 'incomplete';

export type AcceptedEvent = { kind: 'task'; user: string; channel: string; ts: string; thread_ts?: string; text: string };

/**
 * Decides whether an event is for the bot: app mentions, and plain direct messages. Messages
 * from bots (ours included), edits and other subtypes are ignored so the bot never answers itself.
 */
export function classifyEvent(envelope: SlackEventCallback, botUserId?: string): AcceptedEvent | { kind: 'ignore'; reason: IgnoreReason } {
  const event = envelope.event;
  const ownUserIds = new Set([botUserId, ...(envelope.authorizations ?? []).filter((a) => a.is_bot).map((a) => a.user_id)].filter(Boolean));
  if (event.type !== 'app_mention' && event.type !== 'message') return { kind: 'ignore', reason: 'event-type' };
  if (event.bot_id) return { kind: 'ignore', reason: 'bot-message' };
  if (event.subtype) return { kind: 'ignore', reason: 'subtype' };
  if (event.user && ownUserIds.has(event.user)) return { kind: 'ignore', reason: 'own-message' };
  if (event.type === 'message' && event.channel_type !== 'im') return { kind: 'ignore', reason: 'not-a-dm' };
  if (!event.user || !event.channel || !event.ts) return { kind: 'ignore', reason: 'incomplete' };
  return {
    kind: 'task',
    user: event.user,
    channel: event.channel,
    ts: event.ts,
    ...(event.thread_ts ? { thread_ts: event.thread_ts } : {}),
    text: stripMentions(event.text ?? '', ownUserIds),
  };
}

/** Removes mentions of the bot (`<@U123>` or `<@U123|name>`), and any leading mention when the bot id is unknown. */
export function stripMentions(text: string, botUserIds: ReadonlySet<string | undefined>): string {
  let stripped = text.replace(/<@([A-Z0-9]+)(\|[^>]*)?>/g, (match, id: string) => (botUserIds.has(id) ? ' ' : match));
  if (botUserIds.size === 0) stripped = stripped.replace(/^\s*<@[A-Z0-9]+(\|[^>]*)?>/, ' ');
  return stripped.replace(/[ \t]+/g, ' ').trim();
}
