import * as z from '../../config/zod-mini';

/**
 * A file shared with a message, as message and app_mention events carry it. A file hidden by the
 * workspace's plan or deleted (`mode: "hidden_by_limit"` / `"tombstone"`) has no download URL.
 */
export const SlackFileSchema = z.looseObject({
    id: z.string(),
    name: z.optional(z.string()),
    title: z.optional(z.string()),
    mimetype: z.optional(z.string()),
    filetype: z.optional(z.string()),
    size: z.optional(z.number()),
    mode: z.optional(z.string()),
    url_private_download: z.optional(z.string()),
    url_private: z.optional(z.string()),
  });
export type SlackFile = z.infer<typeof SlackFileSchema>;

/** The parts of Slack's Events API payloads the ingress reads (docs/architecture.md §10.1); everything else passes through. */
export const SlackInnerEventSchema = z.looseObject({
    type: z.string(),
    subtype: z.optional(z.string()),
    user: z.optional(z.string()),
    bot_id: z.optional(z.string()),
    /** Set when an app posted the message, with its bot token or a user's token (then `user` is that person). */
    app_id: z.optional(z.string()),
    bot_profile: z.optional(z.looseObject({})),
    text: z.optional(z.string()),
    ts: z.optional(z.string()),
    thread_ts: z.optional(z.string()),
    channel: z.optional(z.string()),
    channel_type: z.optional(z.string()),
    team: z.optional(z.string()),
    files: z.optional(z.array(SlackFileSchema)),
  });
export type SlackInnerEvent = z.infer<typeof SlackInnerEventSchema>;

export const SlackEnvelopeSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('url_verification'), challenge: z.string() }),
  z.looseObject({
      type: z.literal('event_callback'),
      team_id: z.string(),
      /** The Enterprise Grid organisation, where Slack gives one: it goes with the asker (docs/contract.md, "Who is asking"). */
      enterprise_id: z.optional(z.nullable(z.string())),
      event_id: z.string(),
      event_time: z.optional(z.number()),
      event: SlackInnerEventSchema,
      authorizations: z.optional(z.array(z.looseObject({ user_id: z.optional(z.string()), is_bot: z.optional(z.boolean()) }))),
    }),
]);
export type SlackEnvelope = z.infer<typeof SlackEnvelopeSchema>;
export type SlackEventCallback = Extract<SlackEnvelope, { type: 'event_callback' }>;

/** Why an event is acknowledged without a task; the reasons are logged and counted. */
export type IgnoreReason =
  | 'event-type'
  | 'bot-message'
  | 'subtype'
  | 'own-message'
  | 'not-a-dm'
  | 'incomplete'
  /** A channel message that mentions the bot: its app_mention event is the task. */
  | 'mention-event'
  /** A thread reply addressed to someone else: people talking to each other. */
  | 'addressed-to-someone-else'
  /** A thread reply without a mention that pings the channel or a group (`<!here>`, `<!channel>`, `<!everyone>`, `<!subteam^…>`): for the people, not the bot. */
  | 'pings-a-group'
  /** A thread reply without a mention posted by an app (`app_id`, `bot_profile`), even with a person's token: never a follow-up, so two bots cannot answer each other forever. */
  | 'posted-by-an-app'
  /** A thread reply in a thread the bot has not answered in (checked by the ingress). */
  | 'not-in-bot-thread'
  /** Follow-ups without a mention are turned off (THREAD_FOLLOW_UPS=false). */
  | 'follow-ups-off';

export type AcceptedEvent = {
  kind: 'task';
  user: string;
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  files?: SlackFile[];
  /** The bot's own user id, when the event says it: how the invoker tells the bot's replies in the thread. */
  botUserId?: string;
  /**
   * A reply in a channel thread without a mention: a task only if the bot has answered in that
   * thread (docs/architecture.md §10.1, "Follow-ups"); the ingress checks its record of threads.
   */
  followUp?: true;
};

/** Message subtypes that are messages a person wrote: a file shared with text, a thread reply also sent to the channel. */
const TASK_SUBTYPES: ReadonlySet<string> = new Set(['file_share', 'thread_broadcast']);
const CHANNEL_TYPES: ReadonlySet<string> = new Set(['channel', 'group']);
const MENTION = /<@([A-Z0-9]+)(?:\|[^>]*)?>/g;
/** Slack's special mentions that notify many (`<!here>`, `<!channel>`, `<!everyone>`, the legacy `<!group>`, user groups `<!subteam^S…>`), with or without a `|label`. */
const GROUP_PING = /<!(?:here|channel|everyone|group|subteam\^[^>|]*)(?:\|[^>]*)?>/;

/**
 * Decides whether an event is for the bot: app mentions, direct messages (with or without files),
 * and — as candidates the ingress still checks — replies in a channel thread that mention nobody
 * else, ping no group and were written by a person, not posted by an app. Messages from bots (ours
 * included), edits, deletions and other subtypes are ignored so the bot never answers itself.
 */
export function classifyEvent(envelope: SlackEventCallback, botUserId?: string): AcceptedEvent | { kind: 'ignore'; reason: IgnoreReason } {
  const event = envelope.event;
  const ownUserIds = new Set([botUserId, ...(envelope.authorizations ?? []).filter((a) => a.is_bot).map((a) => a.user_id)].filter(Boolean));
  if (event.type !== 'app_mention' && event.type !== 'message') return { kind: 'ignore', reason: 'event-type' };
  if (event.bot_id) return { kind: 'ignore', reason: 'bot-message' };
  if (event.subtype && !TASK_SUBTYPES.has(event.subtype)) return { kind: 'ignore', reason: 'subtype' };
  if (event.user && ownUserIds.has(event.user)) return { kind: 'ignore', reason: 'own-message' };
  let followUp = false;
  if (event.type === 'message' && event.channel_type !== 'im') {
    const isThreadReply = CHANNEL_TYPES.has(event.channel_type ?? '') && event.thread_ts !== undefined && event.thread_ts !== event.ts;
    if (!isThreadReply) return { kind: 'ignore', reason: 'not-a-dm' };
    const mentioned = [...(event.text ?? '').matchAll(MENTION)].map((match) => match[1]!);
    // Slack sends an app_mention for the same message: that event is the task, this one a duplicate.
    if (mentioned.some((id) => ownUserIds.has(id))) return { kind: 'ignore', reason: 'mention-event' };
    // A reply that names someone is for them, not for the bot (docs/architecture.md §10.1).
    if (mentioned.length > 0) return { kind: 'ignore', reason: 'addressed-to-someone-else' };
    // So is one that pings the channel or a group: it is for the people it notifies.
    if (GROUP_PING.test(event.text ?? '')) return { kind: 'ignore', reason: 'pings-a-group' };
    // An app's post (with a person's token, it has no bot_id): another bot replying in the thread
    // would be answered, and answer back, without end. It can still mention the bot.
    if (event.app_id !== undefined || event.bot_profile !== undefined) return { kind: 'ignore', reason: 'posted-by-an-app' };
    followUp = true;
  }
  if (!event.user || !event.channel || !event.ts) return { kind: 'ignore', reason: 'incomplete' };
  const files = event.files?.length ? event.files : undefined;
  const ownId = botUserId ?? [...ownUserIds][0];
  return {
    kind: 'task',
    user: event.user,
    channel: event.channel,
    ts: event.ts,
    ...(event.thread_ts ? { thread_ts: event.thread_ts } : {}),
    text: stripMentions(event.text ?? '', ownUserIds),
    ...(files ? { files } : {}),
    ...(ownId ? { botUserId: ownId } : {}),
    ...(followUp ? { followUp: true as const } : {}),
  };
}

/** Removes mentions of the bot (`<@U123>` or `<@U123|name>`), and any leading mention when the bot id is unknown. */
export function stripMentions(text: string, botUserIds: ReadonlySet<string | undefined>): string {
  let stripped = text.replace(/<@([A-Z0-9]+)(\|[^>]*)?>/g, (match, id: string) => (botUserIds.has(id) ? ' ' : match));
  if (botUserIds.size === 0) stripped = stripped.replace(/^\s*<@[A-Z0-9]+(\|[^>]*)?>/, ' ');
  return stripped.replace(/[ \t]+/g, ' ').trim();
}
