import { systemClock } from '../clock';
import { FEEDBACK_ACTION_ID } from '../slack/feedback-blocks';
import { LOCAL_TEAM_ID, LOCAL_USER_ID, postSignedEvent, slackTs } from './slack-event-builder';

/**
 * Builds Slack's interactivity payloads the way Slack sends them, for the local stack, the
 * playground and tests: a click on the feedback buttons under an answer (`block_actions`) and
 * the "what went wrong" form submitted (`view_submission`). Slack posts them to the same request
 * URL as events, as `application/x-www-form-urlencoded` with one field, `payload`, holding the
 * JSON, signed the same way.
 */
export type InteractionOptions = { teamId?: string; userId?: string };

/** A `trigger_id` as Slack makes them (it lets the app open a modal for 3 s). */
export function localTriggerId(): string {
  return `${systemClock.now()}.${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/** `block_actions`: one of the feedback buttons under the message `messageTs` clicked; `value` is that button's value. */
export function feedbackClickPayload(options: InteractionOptions & { value: string; channel: string; messageTs: string; threadTs?: string; triggerId?: string }): Record<string, unknown> {
  return blockActions(options, { action_id: FEEDBACK_ACTION_ID, block_id: 'feedback', type: 'feedback_buttons', value: options.value });
}

/** `view_submission`: a modal the app opened (`view`, as it was opened) submitted with `text` in its text inputs. */
export function feedbackFormSubmission(options: InteractionOptions & { view: Record<string, unknown>; text: string; viewId?: string }): Record<string, unknown> {
  return {
    type: 'view_submission',
    ...actor(options),
    trigger_id: localTriggerId(),
    view: {
      ...options.view,
      id: options.viewId ?? `V${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`,
      state: { values: inputValues(options.view, options.text) },
    },
  };
}

/**
 * `block_actions`: a button of a message clicked — a question's option, say (its `action_id` and
 * `value` as the message's `actions` block has them).
 */
export function buttonClickPayload(options: InteractionOptions & { actionId: string; value: string; blockId?: string; channel: string; messageTs: string; threadTs?: string; triggerId?: string }): Record<string, unknown> {
  return blockActions(options, { action_id: options.actionId, block_id: options.blockId ?? 'actions', type: 'button', value: options.value });
}

/** A `block_actions` payload as Slack sends it for a click on a message's element `action`. */
function blockActions(options: InteractionOptions & { channel: string; messageTs: string; threadTs?: string; triggerId?: string }, action: { action_id: string; block_id: string; type: string; value: string }): Record<string, unknown> {
  const thread = options.threadTs ? { thread_ts: options.threadTs } : {};
  return {
    type: 'block_actions',
    ...actor(options),
    channel: { id: options.channel },
    container: { type: 'message', message_ts: options.messageTs, channel_id: options.channel, is_ephemeral: false, ...thread },
    message: { type: 'message', ts: options.messageTs, ...thread },
    trigger_id: options.triggerId ?? localTriggerId(),
    actions: [{ ...action, action_ts: slackTs() }],
  };
}

/** Who acted, in whose workspace, with which app: as every interactivity payload says it. */
function actor(options: InteractionOptions): { team: { id: string }; user: { id: string; team_id: string }; api_app_id: string } {
  const teamId = options.teamId ?? LOCAL_TEAM_ID;
  return { team: { id: teamId }, user: { id: options.userId ?? LOCAL_USER_ID, team_id: teamId }, api_app_id: 'ALOCAL' };
}

/** `view.state.values` as Slack fills it: by each input block's `block_id`, then its element's `action_id`. */
function inputValues(view: Record<string, unknown>, text: string): Record<string, Record<string, { type: string; value: string }>> {
  const values: Record<string, Record<string, { type: string; value: string }>> = {};
  for (const block of (view.blocks as Array<{ type?: string; block_id?: string; element?: { type?: string; action_id?: string } }> | undefined) ?? []) {
    if (block.type !== 'input' || !block.block_id || block.element?.type !== 'plain_text_input' || !block.element.action_id) continue;
    values[block.block_id] = { [block.element.action_id]: { type: 'plain_text_input', value: text } };
  }
  return values;
}

/** POSTs an interactivity payload to a Slack ingress URL as Slack does: a signed form with one `payload` field. */
export async function postSignedInteraction(url: string, payload: Record<string, unknown>, signingSecret: string): Promise<{ status: number; text: string }> {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return postSignedEvent(url, body, signingSecret, { 'content-type': 'application/x-www-form-urlencoded' });
}
