import type { SlackEventCallback } from '../slack-event';
import { ignore, type IntakeHandler } from '../intake';
import { STATE_KEYS } from '../../stores/state-keys';

/**
 * `agent_session_stopped`: the user pressed Stop on a thread's agent session. The stop goes to the
 * tasks queue, where agent-invoker cancels the thread's task through the zone contract and ends
 * the live message (docs/architecture.md §2.6, "Stop"). `streaming_message_ts` lists the app's
 * streams Slack has stopped already.
 */
export const agentSessionStopped: IntakeHandler<SlackEventCallback> = (envelope, context) => {
  const event = envelope.event;
  if (!event.channel || !event.thread_ts) return ignore('incomplete');
  const streaming = Array.isArray(event.streaming_message_ts) ? event.streaming_message_ts.filter((ts): ts is string => typeof ts === 'string') : [];
  const at = Number(event.event_ts) > 0 ? Math.round(Number(event.event_ts) * 1000) : context.now;
  return {
    kind: 'accept',
    claimKey: `${STATE_KEYS.event.prefix}${envelope.event_id}`,
    results: [{ kind: 'stop', thread: { team_id: envelope.team_id, channel: event.channel, ts: event.thread_ts, thread_ts: event.thread_ts }, user: event.user ?? '', at, streamingTs: streaming }],
  };
};
