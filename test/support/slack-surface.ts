import type { Log, LogExtra } from '../../src/observability/logger';
import { decodeFeedbackValue, FEEDBACK_ACTION_ID, type FeedbackValue } from '../../src/slack/feedback-blocks';
import { slackSignatureHeaders } from '../../src/verification/slack-signature';
import type { FakeSlackBlock, FakeSlackView } from './fake-slack-api';

/**
 * The agent surface's requests as Slack sends them to the one Slack URL (docs/architecture.md
 * §2.6): events other than messages (`app_home_opened`, `app_context_changed`,
 * `agent_session_stopped`) in the Events API envelope, and interactivity payloads — feedback
 * clicks, the submitted "what went wrong" form — as `application/x-www-form-urlencoded` with one
 * field, `payload`, signed like events.
 */

export type SignedRequest = { headers: Record<string, string>; body: string };

/** An Events API envelope around `event`, with a fresh event id unless given. */
export function eventEnvelope(event: Record<string, unknown>, options: { teamId: string; eventId?: string }): { body: string; eventId: string } {
  const eventId = options.eventId ?? `Ev${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;
  const envelope = { token: 'fake', team_id: options.teamId, api_app_id: 'A0FAKE', type: 'event_callback', event_id: eventId, event_time: Math.floor(Date.now() / 1000), event };
  return { body: JSON.stringify(envelope), eventId };
}

/** An interactivity payload as Slack posts it: a form with one `payload` field, signed with `signingSecret`. */
export function signedInteraction(payload: Record<string, unknown>, signingSecret: string): SignedRequest {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return { headers: { 'content-type': 'application/x-www-form-urlencoded', ...slackSignatureHeaders(signingSecret, body) }, body };
}

/** POSTs a signed request to a Slack ingress URL; resolves with the status. */
export async function postSigned(url: string, request: SignedRequest): Promise<number> {
  const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  await response.text();
  return response.status;
}

/** The values of the feedback buttons in a message's blocks (undefined when it has none). */
export function feedbackButtons(blocks: readonly FakeSlackBlock[] | undefined): Record<FeedbackValue, string> | undefined {
  for (const block of blocks ?? []) {
    if (block.type !== 'context_actions') continue;
    for (const element of (block.elements as Array<Record<string, unknown>> | undefined) ?? []) {
      if (element.type !== 'feedback_buttons') continue;
      const value = (button: unknown) => String((button as { value?: unknown } | undefined)?.value ?? '');
      return { positive: value(element.positive_button), negative: value(element.negative_button) };
    }
  }
  return undefined;
}

/** The request id a feedback button names. */
export function requestIdOfButton(value: string): string | undefined {
  return decodeFeedbackValue(value)?.requestId;
}

export type ClickOptions = { teamId: string; user: string; channel: string; messageTs: string; threadTs?: string; value: string; triggerId: string; actionTs?: string };

/** A click on one of the feedback buttons under an answer (`block_actions`). */
export function feedbackClick(options: ClickOptions): Record<string, unknown> {
  return {
    type: 'block_actions',
    team: { id: options.teamId },
    user: { id: options.user, team_id: options.teamId },
    api_app_id: 'A0FAKE',
    container: { type: 'message', message_ts: options.messageTs, channel_id: options.channel, ...(options.threadTs ? { thread_ts: options.threadTs } : {}) },
    channel: { id: options.channel },
    message: { ts: options.messageTs, ...(options.threadTs ? { thread_ts: options.threadTs } : {}) },
    trigger_id: options.triggerId,
    actions: [{ action_id: FEEDBACK_ACTION_ID, block_id: 'feedback', type: 'feedback_buttons', value: options.value, action_ts: options.actionTs ?? `${Date.now() / 1000}` }],
  };
}

/** The user submits the modal Slack opened (`view_submission`), with `text` in its one input. */
export function formSubmission(opened: FakeSlackView, options: { teamId: string; user: string; text: string }): Record<string, unknown> {
  return {
    type: 'view_submission',
    team: { id: options.teamId },
    user: { id: options.user, team_id: options.teamId },
    view: { ...opened.view, id: opened.id, state: { values: { what_went_wrong: { text: { type: 'plain_text_input', value: options.text } } } } },
  };
}

export type LogLine = { level: 'debug' | 'info' | 'warn' | 'error'; message: string; extra: Record<string, unknown> };

/** A Log that keeps its lines (nothing is written), for tests that assert what was logged. */
export function capturingLog(): Log & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (message: string, ...extra: LogExtra[]) =>
      void lines.push({ level, message, extra: Object.assign({}, ...extra) as Record<string, unknown> });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
