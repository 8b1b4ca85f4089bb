import { systemClock } from '../../clock';
import type { FunctionServices } from '../function-services';
import type { Log } from '../../observability/logger';
import { feedbackFormView } from '../../slack/feedback-blocks';
import { SlackApiError } from '../../slack/slack-api-error';
import type { SlackAssistant } from '../../slack/slack-assistant';
import type { SlackCallOptions } from '../../slack/slack-port';
import type { ActionMessage, FeedbackMessage } from '../queues/replies-queue';
import type { FeedbackRecords } from './feedback-records';
import { noTrace } from '../trace';
import type { UserMessages } from '../messages/user-messages';
import type { AuditFeedback } from '../budgets/usage-ledger';
import { STATE_KEYS } from '../stores/state-keys';

export type AssistantSurfaceOptions = FunctionServices & {
  slack: SlackAssistant;
  feedback: FeedbackRecords;
  /** The task's audit record takes the asker's last rating (usage-ledger.ts); a failure there is logged, never the click's. */
  audit?: AuditFeedback;
  /**
   * Claims a key once (ClaimStore.mark): a thank-you is claimed before it is sent, so one that
   * landed but was answered 5xx — its click then redelivered — is not sent twice. Without it, a
   * redelivered click thanks again.
   */
  once?: (key: string) => Promise<boolean>;
  messages: UserMessages;
  /** GUARDRAIL: a form's comment as the input guardrail passes it — masked; none when blocked. A check that fails throws (the form comes back). */
  guardComment?: (text: string) => Promise<string | undefined>;
};

/**
 * slack-poster's part of the agent surface (docs/architecture.md §2.6): the Slack calls the intake
 * asked for (suggested prompts, ephemeral messages, modals) and feedback on answers — recorded,
 * counted per agent and value, and thanked with a message only the clicker sees. A decoration
 * Slack refuses is logged and dropped: retrying a prompt or a thank-you helps no one.
 */
export function createAssistantSurface(options: AssistantSurfaceOptions) {
  const trace = options.trace ?? noTrace;
  const clock = options.clock ?? systemClock;

  async function decorate(what: string, call: () => Promise<void>, log: Log): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (error) {
      if (!(error instanceof SlackApiError) || error.retryable) throw error;
      log.warn(`Slack refused ${what}; left as it is`, { code: error.code });
      return false;
    }
  }

  return {
    async act(message: ActionMessage, call: SlackCallOptions = {}): Promise<void> {
      const log = options.log;
      const action = message.action;
      switch (action.type) {
        case 'set-prompts':
          await decorate('the suggested prompts', () => options.slack.setSuggestedPrompts({ channel: action.channel, prompts: action.prompts, ...(action.title ? { title: action.title } : {}) }, call), log);
          break;
        case 'ephemeral':
          await decorate('an ephemeral message', () => options.slack.postEphemeral({ channel: action.channel, user: action.user, text: action.text, ...(action.thread_ts ? { threadTs: action.thread_ts } : {}) }, call), log);
          break;
        case 'open-view':
          await decorate('a modal (its trigger lasts 3 s)', () => options.slack.openView({ triggerId: action.trigger_id, view: action.view }, call), log);
          break;
      }
      trace({ requestId: message.id, hop: 'slack-action', at: clock.now(), detail: { type: action.type } });
    },

    async feedback(message: FeedbackMessage, call: SlackCallOptions = {}): Promise<void> {
      const log = options.log;
      // A click names its answer by request id: one that belongs to another channel or team is forged or misrouted.
      if (options.audit && !(await options.audit.belongs(message.request_id, { team_id: message.team_id, channel: message.channel }))) {
        log.warn('ignored feedback whose request id belongs to another channel or team', { request_id: message.request_id, channel: message.channel, team_id: message.team_id, user: message.user });
        return;
      }
      const { record, changedValue } = await options.feedback.record(await withGuardedComment(message, options.guardComment));
      const agent = record.agent ?? 'unknown';
      if (changedValue && record.value) options.metrics?.feedback(agent, record.value);
      if (changedValue && record.value && options.audit) await options.audit.rated(record.request_id, record.value, record.user).catch((error: unknown) => log.warn('the audit record could not take the feedback', { error: error as Error }));
      // The line the Logs Insights query in docs/operations.md reads.
      log.info('feedback recorded', { request_id: record.request_id, agent, value: record.value, user: record.user, channel: record.channel, thread_ts: record.thread_ts, has_comment: record.comment !== undefined });
      trace({ requestId: record.request_id, hop: 'feedback', at: clock.now(), detail: { value: record.value ?? '', comment: message.comment !== undefined } });
      if (message.trigger_id && message.value === 'negative') {
        const view = feedbackFormView(
          { requestId: record.request_id, ...(record.agent ? { agent: record.agent } : {}), channel: record.channel, messageTs: record.message_ts, ...(record.thread_ts ? { threadTs: record.thread_ts } : {}) },
          { title: options.messages.feedbackFormTitle, label: options.messages.feedbackFormLabel, submit: options.messages.feedbackFormSubmit },
        );
        if (await decorate('the feedback form (its trigger lasts 3 s)', () => options.slack.openView({ triggerId: message.trigger_id!, view }, call), log)) return;
      }
      const thanks = message.comment !== undefined ? options.messages.feedbackDetailsThanks : options.messages.feedbackThanks;
      // At most once per click or form: a thank-you lost is better than two.
      if (options.once && !(await options.once(`${STATE_KEYS.thanks.prefix}${record.request_id}#${record.user}#${message.comment !== undefined ? 'form' : message.clicked_at}`))) return;
      await decorate('the thank-you', () => options.slack.postEphemeral({ channel: record.channel, user: record.user, text: thanks, ...(record.thread_ts ? { threadTs: record.thread_ts } : {}) }, call), log);
    },
  };
}

export type AssistantSurface = ReturnType<typeof createAssistantSurface>;

/** The feedback with its comment as it may be kept (AssistantSurfaceOptions.guardComment). */
async function withGuardedComment(message: FeedbackMessage, guardComment: AssistantSurfaceOptions['guardComment']): Promise<FeedbackMessage> {
  if (message.comment === undefined || !guardComment) return message;
  const { comment, ...rest } = message;
  const kept = await guardComment(comment);
  return kept === undefined ? rest : { ...rest, comment: kept };
}
