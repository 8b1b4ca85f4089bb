import { systemClock } from '../clock';
import { slackSignatureHeaders } from '../verification/intake/slack-signature';

/**
 * Builds Slack Events API payloads the way Slack would send them, for the local CLI, the
 * playground, the demo and tests: an `app_mention` in a channel, a reply in a channel thread
 * without a mention (`message`, channel_type `channel`), or a direct message (`message`,
 * channel_type `im`; subtype `file_share` when it carries files), signed with the signing secret;
 * and the agent surface's events: a Stop (`agent_session_stopped`), the agent's DM opened
 * (`app_home_opened`) and what the user looks at (`app_context_changed`). Interactivity (clicks,
 * forms) is built by slack-interaction-builder.ts.
 */
export type MentionOptions = {
  text: string;
  teamId?: string;
  userId?: string;
  channel?: string;
  botUserId?: string;
  threadTs?: string;
  eventId?: string;
  ts?: string;
  /** Files shared with the message, as Slack lists them (`id`, `name`, `mimetype`, `size`, `url_private_download`, …). */
  files?: ReadonlyArray<Record<string, unknown>>;
};

export type SlackEventKind = 'mention' | 'thread-reply' | 'dm';

/** The bot's user id in local events. */
export const LOCAL_BOT_USER_ID = 'UBOTLOCAL';
/** The local workspace: its team, the person typing, the channel mentions go to, and the agent's DM. */
export const LOCAL_TEAM_ID = 'TLOCAL';
export const LOCAL_USER_ID = 'ULOCALUSER';
export const LOCAL_CHANNEL = 'CLOCAL';
export const LOCAL_DM_CHANNEL = 'DLOCAL';

let sequence = 0;

/** A Slack-like message timestamp ("seconds.micro"), unique within this process. */
export function slackTs(now = systemClock.now()): string {
  sequence = (sequence + 1) % 1000;
  return `${Math.floor(now / 1000)}.${String((now % 1000) * 1000 + sequence).padStart(6, '0')}`;
}

export function appMentionEnvelope(options: MentionOptions): { body: string; eventId: string; ts: string } {
  return slackEventEnvelope('mention', options);
}

export function slackEventEnvelope(kind: SlackEventKind, options: MentionOptions): { body: string; eventId: string; ts: string } {
  const botUserId = options.botUserId ?? LOCAL_BOT_USER_ID;
  const ts = options.ts ?? slackTs();
  const files = options.files?.length ? options.files : undefined;
  const event = {
    type: kind === 'mention' ? 'app_mention' : 'message',
    ...(kind === 'dm' && files ? { subtype: 'file_share' } : {}),
    user: options.userId ?? LOCAL_USER_ID,
    text: kind === 'mention' ? `<@${botUserId}> ${options.text}` : options.text,
    ts,
    channel: options.channel ?? (kind === 'dm' ? LOCAL_DM_CHANNEL : LOCAL_CHANNEL),
    ...(kind === 'mention' ? {} : { channel_type: kind === 'dm' ? 'im' : 'channel' }),
    event_ts: ts,
    ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
    ...(files ? { files } : {}),
  };
  return { ...eventCallback(event, options), ts };
}

/** Who a local agent-surface event comes from, and its envelope's ids. */
export type SurfaceEventOptions = { teamId?: string; userId?: string; botUserId?: string; eventId?: string };

/**
 * `agent_session_stopped`: the user pressed Stop on the agent session of a thread.
 * `streamingTs` lists the app's streams Slack stopped itself (`streaming_message_ts`).
 */
export function agentSessionStoppedEnvelope(options: SurfaceEventOptions & { threadTs: string; channel?: string; streamingTs?: readonly string[] }): { body: string; eventId: string } {
  const event = {
    type: 'agent_session_stopped',
    user: options.userId ?? LOCAL_USER_ID,
    channel: options.channel ?? LOCAL_CHANNEL,
    thread_ts: options.threadTs,
    event_ts: slackTs(),
    ...(options.streamingTs?.length ? { streaming_message_ts: [...options.streamingTs] } : {}),
  };
  return eventCallback(event, options);
}

/** `app_home_opened`: the user opened the agent's DM (the `messages` tab), or its Home tab. */
export function appHomeOpenedEnvelope(options: SurfaceEventOptions & { channel?: string; tab?: 'messages' | 'home' } = {}): { body: string; eventId: string } {
  const event = { type: 'app_home_opened', user: options.userId ?? LOCAL_USER_ID, channel: options.channel ?? LOCAL_DM_CHANNEL, tab: options.tab ?? 'messages', event_ts: slackTs() };
  return eventCallback(event, options);
}

/**
 * `app_context_changed`: what the user looks at while the agent's window is open, as Slack's
 * entities (`{type: 'slack#/types/channel_id', value: 'C…'}`, …); `channel` is the agent's DM.
 */
export function appContextChangedEnvelope(options: SurfaceEventOptions & { channel?: string; entities: ReadonlyArray<{ type: string; value: unknown }> }): { body: string; eventId: string } {
  const event = { type: 'app_context_changed', user: options.userId ?? LOCAL_USER_ID, channel: options.channel ?? LOCAL_DM_CHANNEL, context: { entities: [...options.entities] }, event_ts: slackTs() };
  return eventCallback(event, options);
}

/** The Events API envelope around an inner event, as Slack sends it. */
function eventCallback(event: Record<string, unknown>, options: SurfaceEventOptions): { body: string; eventId: string } {
  const teamId = options.teamId ?? LOCAL_TEAM_ID;
  const eventId = options.eventId ?? `Ev${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;
  const envelope = {
    token: 'local',
    team_id: teamId,
    api_app_id: 'ALOCAL',
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(systemClock.now() / 1000),
    event,
    authorizations: [{ team_id: teamId, user_id: options.botUserId ?? LOCAL_BOT_USER_ID, is_bot: true }],
  };
  return { body: JSON.stringify(envelope), eventId };
}

/** POSTs a body to a Slack ingress URL, signed as Slack signs it. */
export async function postSignedEvent(url: string, body: string, signingSecret: string, extraHeaders: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...slackSignatureHeaders(signingSecret, body), ...extraHeaders },
    body,
  });
  return { status: response.status, text: await response.text() };
}
