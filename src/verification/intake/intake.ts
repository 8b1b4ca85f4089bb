import type { ContextEntity } from '../../contract';
import type { Log } from '../../observability/logger';
import type { SlackAction } from '../../slack/slack-assistant';
import type { PromptSettings } from '../surface/suggested-prompts';
import type { SlackFile } from './slack-event';
import type { SlackThread } from '../queues/slack-thread';
import type { BotThreads } from '../stores/bot-threads';
import type { FeedbackValue } from '../../slack/feedback-blocks';
import type { AnswerMessage } from '../queues/tasks-queue';

/**
 * The intake (docs/architecture.md §2.6): one table from a Slack event kind, or an interactivity
 * payload type, to the handler that decides what it asks of the pipeline. A handler only decides:
 * it makes no Slack call and no execution-zone call (at most the one DynamoDB read a follow-up
 * needs), so slack-events stays verify → claim → look up the handler → enqueue → ack.
 */

/** A task for the execution zone, as slack-events queues it (the request id comes with the claim). */
export type TaskDraft = {
  thread: SlackThread;
  user: string;
  text: string;
  files?: SlackFile[];
  /** The bot's own user id, when the event says it. */
  botUserId?: string;
  /** The asker's Enterprise Grid organisation, when Slack gives one. */
  enterpriseId?: string;
  /** A thread reply without a mention, taken because the bot answered there before. */
  followUp?: true;
};

/** Feedback on an answer: a click on its buttons, or the text of the "what went wrong" form. */
export type FeedbackDraft = {
  team_id: string;
  channel: string;
  /** The answer's message. */
  message_ts: string;
  thread_ts?: string;
  user: string;
  request_id: string;
  agent?: string;
  value?: FeedbackValue;
  /** The form's text (a negative click's follow-up). */
  comment?: string;
  /** A negative click's trigger (valid 3 s): opens the form if it is still fresh. */
  trigger_id?: string;
};

/** An answer to a task's question (a click on an option, or the answer form's text): the tasks queue's `answer` kind, less its event id. */
export type AnswerDraft = Omit<AnswerMessage, 'kind' | 'event_id'>;

/** What the user is looking at (app_context_changed), remembered for their next task. */
export type ContextDraft = { team_id: string; user: string; entities: ContextEntity[] };
/** One thing in view, as the contract carries it (docs/contract.md, "Context"). */
export type { ContextEntity };

export type IntakeResult =
  /** A task: to the tasks queue (after the allow-lists, rate limit and length checks). */
  | { kind: 'task'; task: TaskDraft }
  /** Stop the work in a thread: to the tasks queue, where agent-invoker cancels it. */
  | { kind: 'stop'; thread: SlackThread; user: string; at: number; streamingTs: string[] }
  /** A Slack call to make (prompts, an ephemeral message, a modal): to the replies queue. */
  | { kind: 'slack'; action: SlackAction }
  /** Feedback to record and thank for: to the replies queue. */
  | { kind: 'feedback'; feedback: FeedbackDraft }
  /** An answer to a question: to the tasks queue, where agent-invoker resumes the task. */
  | { kind: 'answer'; answer: AnswerDraft }
  /** What the user is looking at: remembered (a record), no queue. */
  | { kind: 'context'; context: ContextDraft };

export type IntakeDecision =
  | { kind: 'ignore'; reason: string }
  /** `claimKey`: what makes a redelivery of the same event or click a duplicate. */
  | { kind: 'accept'; claimKey: string; results: IntakeResult[] };


export type IntakeContext = {
  /** SLACK_BOT_USER_ID, when configured. */
  botUserId?: string;
  /** Threads the bot answered in (follow-ups without a mention); absent when follow-ups are off. */
  threads?: BotThreads;
  prompts: PromptSettings;
  log: Log;
  /** Epoch ms now (the ingress's clock). */
  now: number;
};

export type IntakeHandler<Input> = (input: Input, context: IntakeContext) => IntakeDecision | Promise<IntakeDecision>;

export const ignore = (reason: string): IntakeDecision => ({ kind: 'ignore', reason });

/** What a handler answers for a payload that carries none of its elements: the next handler may take it. */
const NOT_MINE: ReadonlySet<string> = new Set(['unknown-action', 'unknown-view']);

/**
 * One payload type with several handlers, each for its own elements (the feedback buttons, a
 * question's buttons): the first that recognises the payload decides — it takes it, or ignores it
 * for its own reason; when none does, the last's reason stands.
 */
export function firstTaker<Input>(...handlers: ReadonlyArray<IntakeHandler<Input>>): IntakeHandler<Input> {
  return async (input, context) => {
    let decision: IntakeDecision = ignore('no-handler');
    for (const handler of handlers) {
      decision = await handler(input, context);
      if (decision.kind !== 'ignore' || !NOT_MINE.has(decision.reason)) return decision;
    }
    return decision;
  };
}
