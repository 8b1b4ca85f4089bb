import { SlackEnvelopeSchema, type SlackEventCallback } from './slack-event';
import { InteractionPayloadSchema, type InteractionPayload } from './interaction-payload';

/** What a verified request to the Slack ingress holds. */
export type SlackRequest =
  | { kind: 'url-verification'; challenge: string }
  | { kind: 'event'; envelope: SlackEventCallback }
  | { kind: 'interaction'; payload: InteractionPayload }
  | { kind: 'unreadable'; why: string };

/**
 * Events and interactivity share one URL, as Bolt serves them: Slack sends events as JSON and
 * interactivity as `application/x-www-form-urlencoded` with one field, `payload`, holding JSON.
 * The content type tells them apart; a form without `payload` or a body that fits neither is
 * `unreadable` (acknowledged, never retried by Slack).
 */
export function readSlackRequest(body: Buffer | string, contentType: string | undefined): SlackRequest {
  const raw = body.toString();
  if (contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    const payload = new URLSearchParams(raw).get('payload');
    if (payload === null) return { kind: 'unreadable', why: 'a form without a payload field' };
    try {
      return { kind: 'interaction', payload: InteractionPayloadSchema.parse(JSON.parse(payload)) };
    } catch {
      return { kind: 'unreadable', why: 'an interactivity payload that is not a known shape' };
    }
  }
  try {
    const envelope = SlackEnvelopeSchema.parse(JSON.parse(raw));
    return envelope.type === 'url_verification' ? { kind: 'url-verification', challenge: envelope.challenge } : { kind: 'event', envelope };
  } catch {
    return { kind: 'unreadable', why: 'not a known Slack event envelope' };
  }
}

export type IngressRequest = { headers: Readonly<Record<string, string | undefined>>; body: Buffer | string };
export type IngressResponse = { statusCode: number; headers: Record<string, string>; body: string };

/** A request header by its lower-case name, whatever case the host gave it in. */
export function header(request: IngressRequest, name: string): string | undefined {
  const direct = request.headers[name];
  if (direct !== undefined) return direct;
  const found = Object.keys(request.headers).find((key) => key.toLowerCase() === name);
  return found ? request.headers[found] : undefined;
}
