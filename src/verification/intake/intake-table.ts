import type { SlackEventCallback } from './slack-event';
import { agentSessionStopped } from './handlers/agent-session-stopped';
import { appContextChanged } from './handlers/app-context-changed';
import { appHomeOpened } from './handlers/app-home-opened';
import { feedbackClick } from './handlers/feedback-click';
import { feedbackForm } from './handlers/feedback-form';
import { messageEvent } from './handlers/message';
import { questionClick } from './handlers/question-click';
import { questionForm } from './handlers/question-form';
import type { InteractionPayload } from './interaction-payload';
import { firstTaker, type IntakeHandler } from './intake';

/**
 * The intake table (docs/architecture.md §2.6): every Slack event kind and interactivity payload
 * type the app takes, and its handler. A new kind is one handler file and one row here (and, for
 * an event, its subscription in docs/slack-app-manifest.yaml). A kind not listed is acknowledged
 * and dropped with a log line — never an error, or Slack would retry it.
 */
export const EVENT_HANDLERS: Readonly<Record<string, IntakeHandler<SlackEventCallback>>> = {
  app_mention: messageEvent,
  message: messageEvent,
  app_home_opened: appHomeOpened,
  app_context_changed: appContextChanged,
  agent_session_stopped: agentSessionStopped,
};

export const INTERACTION_HANDLERS: Readonly<Record<string, IntakeHandler<InteractionPayload>>> = {
  block_actions: firstTaker(feedbackClick, questionClick),
  view_submission: firstTaker(feedbackForm, questionForm),
};
