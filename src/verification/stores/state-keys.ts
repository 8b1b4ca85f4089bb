import type { VerificationFunction } from '../pipeline-settings';

/**
 * The state table's key prefixes, and which functions may touch each: the one list the stores
 * build their keys from and CDK limits each function's DynamoDB grant by
 * (`dynamodb:LeadingKeys`, cdk/constructs/state-table-grants.ts; docs/deploy.md, "Who may touch
 * which keys"). Every item's partition key is one of these prefixes followed by an id; a function
 * writing a prefix it is not listed under is refused by IAM in a deployment, and
 * test/verification/state-key-grants.test.ts turns red before that.
 *
 * A new kind of item: one entry here — its prefix, what it holds, the functions that read or write
 * it — then the store that builds its key from `STATE_KEYS.<name>.prefix`. A prefix must not be
 * the start of another (IAM's `StringLike` would let one stand for both).
 */
export type StateKey = {
  /** What every key of this kind starts with. */
  readonly prefix: string;
  /** What the item holds, and why those functions need it. */
  readonly holds: string;
  /** The functions that read or write it. */
  readonly usedBy: readonly VerificationFunction[];
};

const INTAKE: readonly VerificationFunction[] = ['slackEvents'];
const POSTER: readonly VerificationFunction[] = ['slackPoster'];
const FOLLOW_UPS: readonly VerificationFunction[] = ['agentInvoker', 'asyncResult'];
const FOLLOW_UPS_AND_POSTER: readonly VerificationFunction[] = ['agentInvoker', 'asyncResult', 'slackPoster'];

export const STATE_KEYS = {
  // slack-events: claims, counters, markers.
  event: { prefix: 'event#', holds: "a Slack event's claim and request id (a retry is a duplicate)", usedBy: INTAKE },
  interaction: { prefix: 'interaction#', holds: "a click's or a form's claim and request id", usedBy: INTAKE },
  rate: { prefix: 'rate#', holds: "a user's per-minute message count (RATE_LIMIT_PER_MINUTE)", usedBy: INTAKE },
  notice: { prefix: 'notice#', holds: 'that a user not on the allow-lists was told so in this minute window', usedBy: INTAKE },
  context: { prefix: 'context#', holds: 'what a user looks at (app_context_changed), written by the intake and sent with their next DM task', usedBy: ['slackEvents', 'agentInvoker'] },
  // Answered threads: slack-poster records them, slack-events reads them for follow-ups.
  thread: { prefix: 'thread#', holds: 'a thread the bot answered in (THREAD_FOLLOW_UPS)', usedBy: ['slackEvents', 'slackPoster'] },
  // What runs in each thread (stores/thread-work.ts).
  work: { prefix: 'work#', holds: "a thread's latest task: what a Stop cancels, and the agent its follow-ups are routed to", usedBy: ['slackEvents', 'agentInvoker', 'asyncResult', 'slackPoster'] },
  stop: { prefix: 'stop#', holds: 'when a thread was last stopped (a task asked before it is not run)', usedBy: ['agentInvoker'] },
  sessionEnded: { prefix: 'session-ended#', holds: "that a Stop on an idle thread moved its session out of processing (one status call per thread and task)", usedBy: ['agentInvoker'] },
  stopped: { prefix: 'stopped#', holds: 'that a task was stopped (every function then leaves it alone)', usedBy: FOLLOW_UPS },
  ended: { prefix: 'ended#', holds: 'how a task ended, claimed once: settled or stopped', usedBy: FOLLOW_UPS },
  // Live answers: the invoker and the poller write the live message, slack-poster finishes it.
  live: { prefix: 'live#', holds: "a task's live Slack message (stream or updated post)", usedBy: FOLLOW_UPS_AND_POSTER },
  // Usage and budgets (budgets/usage-ledger.ts, stores/dynamodb-usage-store.ts).
  usage: { prefix: 'usage#', holds: "a day's usage counters per scope, and the day's index of them", usedBy: FOLLOW_UPS },
  usageCounted: { prefix: 'usage-counted#', holds: "that a task's usage was counted (never twice): charging, charged, done", usedBy: FOLLOW_UPS },
  refusalCounted: { prefix: 'refusal-counted#', holds: "that a task's budget refusal was counted (never twice)", usedBy: ['agentInvoker'] },
  budget: { prefix: 'budget#', holds: "a task's budget reservation", usedBy: FOLLOW_UPS },
  budgetNotice: { prefix: 'budget-notice#', holds: 'that a user was told of a budget refusal in a thread today (the invoker admits tasks)', usedBy: ['agentInvoker'] },
  audit: { prefix: 'audit#', holds: "a task's audit record (AUDIT_RETENTION_DAYS); slack-poster adds the user's rating", usedBy: FOLLOW_UPS_AND_POSTER },
  // slack-poster: each reply posted once.
  pause: { prefix: 'pause#', holds: 'a task waiting on a question to a person: who may answer, the options, the expiry (docs/architecture.md §2.8)', usedBy: FOLLOW_UPS_AND_POSTER },
  resume: { prefix: 'resume#', holds: "an answer's claim: the task is resumed once", usedBy: ['agentInvoker'] },
  expire: { prefix: 'expire#', holds: "an unanswered question's expiry claim: the task is cancelled once", usedBy: ['asyncResult'] },
  question: { prefix: 'question#', holds: "a question's post claim (its buttons posted once)", usedBy: POSTER },
  reply: { prefix: 'reply#', holds: "an answer's chunk claims (and its fallback, its refused-files line)", usedBy: POSTER },
  stopNote: { prefix: 'stop-note#', holds: "a Stop note's chunk claims, apart from the answer's", usedBy: POSTER },
  thanks: { prefix: 'thanks#', holds: 'that a thank-you for a rating was sent', usedBy: POSTER },
  feedback: { prefix: 'feedback#', holds: "a user's rating of an answer (FEEDBACK_RETENTION_DAYS)", usedBy: POSTER },
  // Files the agent makes: handed from the settlement to the poster, uploaded once each.
  outgoingFiles: { prefix: 'outgoing-files#', holds: "an answer's files, waiting for slack-poster", usedBy: FOLLOW_UPS_AND_POSTER },
  fileUploadClaim: { prefix: 'files-out:', holds: "one file's upload claim", usedBy: POSTER },
  fileUpload: { prefix: 'file-upload#', holds: "how far one file's upload got", usedBy: POSTER },
} as const satisfies Record<string, StateKey>;

export type StateKeyName = keyof typeof STATE_KEYS;

/** The prefixes `fn` may read and write, in the list's order. */
export function statePrefixesOf(fn: VerificationFunction): string[] {
  return Object.values(STATE_KEYS)
    .filter((key: StateKey) => key.usedBy.includes(fn))
    .map((key) => key.prefix);
}

/** The entry whose prefix `key` starts with, or undefined for a key no entry names. */
export function stateKeyOf(key: string): StateKey | undefined {
  return Object.values(STATE_KEYS).find((entry: StateKey) => key.startsWith(entry.prefix));
}
