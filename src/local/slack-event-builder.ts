import { systemClock } from '../clock';
import { slackSignatureHeaders } from '../verification/slack-signature';

/**
 * Builds Slack Events API payloads the way Slack would send them, for the local CLI, the
 * playground, the demo and tests: an `app_mention` in a channel, a reply in a channel thread
 * without a mention (`message`, channel_type `channel`), or a direct message (`message`,
 * channel_type `im`; subtype `file_share` when it carries files), signed with the signing secret.
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
  const eventId = options.eventId ?? `Ev${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;
  const files = options.files?.length ? options.files : undefined;
  const event = {
    type: kind === 'mention' ? 'app_mention' : 'message',
    ...(kind === 'dm' && files ? { subtype: 'file_share' } : {}),
    user: options.userId ?? 'ULOCALUSER',
    text: kind === 'mention' ? `<@${botUserId}> ${options.text}` : options.text,
    ts,
    channel: options.channel ?? (kind === 'dm' ? 'DLOCAL' : 'CLOCAL'),
    ...(kind === 'mention' ? {} : { channel_type: kind === 'dm' ? 'im' : 'channel' }),
    event_ts: ts,
    ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
    ...(files ? { files } : {}),
  };
  const envelope = {
    token: 'local',
    team_id: options.teamId ?? 'TLOCAL',
    api_app_id: 'ALOCAL',
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(systemClock.now() / 1000),
    event,
    authorizations: [{ team_id: options.teamId ?? 'TLOCAL', user_id: botUserId, is_bot: true }],
  };
  return { body: JSON.stringify(envelope), eventId, ts };
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
