import * as z from '../../config/zod-mini';

/**
 * Every text the verification zone writes to a Slack user, in one table (English). None carries
 * protocol detail or a stack trace. Operators may override any entry with USER_MESSAGES_JSON.
 */
export const DEFAULT_USER_MESSAGES = {
  emptyText: "Hi! Mention me with a question or a task, and I'll answer in this thread.",
  tooLong: 'That message is too long for me ({limit} characters at most). Could you shorten it?',
  notAllowed: "Sorry, I'm not enabled for you here. Please ask your workspace admin.",
  rateLimited: "You're sending requests faster than I can take them. Please try again in a minute.",
  executionFailed: "Sorry, I couldn't complete that request. Please try again, or rephrase it.",
  modelBusy: "I'm getting a lot of requests right now. Please try again in a few minutes.",
  requestRejected: "Sorry, I can't take that request as it is. Could you rephrase it, or make it shorter?",
  unavailable: "Sorry, I can't reach my assistant service right now. Please try again in a few minutes.",
  timedOut: 'Sorry, that took too long and I stopped working on it. Please try a smaller request.',
  cancelled: 'That request was cancelled before it finished.',
  internalError: 'Sorry, something went wrong on my side and I could not answer. The team has been notified.',
  /** A task whose execution agent was taken out of the configuration while it was queued or running. */
  agentRemoved: 'Sorry, the assistant that was working on this is no longer available here, so I stopped. Please ask again.',
  /** A message the input guardrail blocked (GUARDRAIL_MODE=block, or a Bedrock guardrail's BLOCK): no task is sent. */
  guardrailBlocked: "Sorry, I can't send that to the assistant: it contains personal or secret data (an e-mail address, a phone or card number, a key). Please remove it and ask again.",
  /** In place of an answer the output guardrail blocked (GUARDRAIL_OUTPUT_MODE=block). */
  guardrailBlockedAnswer: "Sorry, I can't show that answer here: it contains personal or secret data.",
  /** Under an answer: files the input guardrail cannot read (a PDF, an image, an Office file) were not sent. */
  filesNotChecked: 'I did not send {files} to the assistant: I cannot check such files for personal or secret data.',
  /** The thread's status (or placeholder) while the agent works on a task. */
  working: 'is working on it…',
  /** The message the answer will replace, where Slack shows no status and refuses a stream. */
  workingPlaceholder: '_Working on it…_',
  /** Sent to the agent as the task's text when a message carries only files. */
  filesWithoutText: 'Please look at the attached files.',
  /** Notes under an answer: what the task went without. */
  threadUnread: "I couldn't read the earlier messages of this thread, so I answered this message on its own.",
  threadTrimmed: 'I read only the latest {kept} earlier messages of this thread.',
  threadPartial: "This thread is too long for me to read to its end; I answered from {kept} of its earlier messages, not the most recent ones.",
  filesSkipped: "I couldn't read {files}.",
  /**
   * The agent's steps folded to one line where the answer is not a stream (docs/architecture.md
   * §2.5, "Steps"): one entry per step, joined by " · "; `{title}` is the step's. `stepHidden`
   * stands in for a title the output guardrail blocks.
   */
  stepDone: '✓ {title}',
  stepFailed: '✗ {title}',
  stepWorking: '… {title}',
  stepHidden: '(a step not shown)',
  /** Under what was shown when the user pressed Stop (docs/architecture.md §2.6). */
  stopped: '_Stopped._',
  /** Ephemeral, to someone who pressed Stop on another person's answer (not on STOP_ADMIN_USERS): nothing was stopped. */
  stopNotYours: 'Only the person who asked can stop this answer, so it goes on.',
  /** Ephemeral, to someone who answered another person's question (neither the asker nor on the agent's `approvers`): nothing changes. */
  questionNotYours: 'Only the person who asked (or an approver) can answer this question, so it still waits.',
  /** Ephemeral, to someone who answered a question that was answered already, expired, or stopped. */
  questionClosed: 'This question is no longer open, so your answer was not sent.',
  /** Under a question, once answered: who chose what. */
  questionAnswered: '{answer} — answered by <@{user}>',
  /** Under a question that went unanswered for INPUT_TIMEOUT_S, and in the thread: the task was cancelled. */
  questionExpired: 'Nobody answered this question in time, so I stopped the task. Please ask again.',
  /** Under a question whose task was stopped while it waited. */
  questionStopped: 'Stopped before anyone answered.',
  /** The button that opens the answer form, where the agent takes a typed answer. */
  questionTypeAnswer: 'Type an answer',
  /** The answer form's title (24 characters at most) and button. */
  questionFormTitle: 'Your answer',
  questionFormSubmit: 'Send',
  /** Ephemeral, to the asker, with an agent's sign-in link (an `auth` question). */
  questionSignIn: 'The assistant needs you to sign in first: {url} — then press “I have signed in” in the thread.',
  /** The button under an `auth` question. */
  questionSignedIn: 'I have signed in',
  /** Ephemeral, to the one who clicked 👍 or 👎 under an answer. */
  feedbackThanks: 'Thanks for the feedback!',
  /** Ephemeral, after the "what went wrong" form was sent. */
  feedbackDetailsThanks: 'Thanks, that helps us improve the answers.',
  /** The "what went wrong" form a 👎 opens: its title (24 characters at most), field label and button. */
  feedbackFormTitle: 'What went wrong?',
  feedbackFormLabel: 'Tell us what was wrong with the answer (optional)',
  feedbackFormSubmit: 'Send',
  /** A task refused by a daily token budget (USER_/CHANNEL_/TEAM_DAILY_TOKEN_BUDGET); budgets reset at midnight UTC. */
  userBudgetExceeded: "You've used your daily allowance of {limit} tokens, so I didn't send this one. It resets at midnight UTC (in {resets_in}).",
  channelBudgetExceeded: "This channel has used its daily allowance of {limit} tokens, so I didn't send this one. It resets at midnight UTC (in {resets_in}).",
  teamBudgetExceeded: "This workspace has used its daily allowance of {limit} tokens, so I didn't send this one. It resets at midnight UTC (in {resets_in}).",
  /** Near a daily budget, requests run one at a time; one waited for another still running until its message's last delivery. */
  budgetBusy: "This is close to the daily allowance of {limit} tokens, so I take one request at a time until it resets, and another is still running. Please ask again once it's answered.",
} as const;

export type UserMessageKey = keyof typeof DEFAULT_USER_MESSAGES;
export type UserMessages = Record<UserMessageKey, string>;

const OverridesSchema = z.partialRecord(z.enum(Object.keys(DEFAULT_USER_MESSAGES) as [UserMessageKey, ...UserMessageKey[]]), z.string().check(z.minLength(1)));

/** The table with operator overrides applied; unknown keys in the overrides are refused. */
export function userMessages(overridesJson?: string): UserMessages {
  if (!overridesJson) return { ...DEFAULT_USER_MESSAGES };
  const overrides = OverridesSchema.parse(JSON.parse(overridesJson));
  return { ...DEFAULT_USER_MESSAGES, ...overrides };
}

/** Fills `{name}` placeholders. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (match, name: string) => (name in values ? String(values[name]) : match));
}
