import { ConfigError, envBool, envInt, envList, envNumber, envOptionalInt, parseEnv } from '../config/env';
import * as z from '../config/zod-mini';
import { QUEUE_SETTINGS } from './pipeline-settings';
import { DEFAULT_POLL_SCHEDULE, type PollSchedule } from './poll-schedule';
import { DEFAULT_ATTACHMENT_LIMITS, defaultMaxTotalBytes, type AttachmentLimits } from './invoke/attachment-limits';
import type { TransportKind } from '../transport/transport';
import { agentCoreSessionStopPolicy, SessionStopSchema, type AgentCoreSessionStopPolicy } from './stop/agentcore-session-stop-setting';
import { userMessages, type UserMessages } from './messages/user-messages';
import { agentPromptsOf } from './surface/suggested-prompts';
import type { PromptSettings } from './surface/suggested-prompts';
import type { Budgets } from './budgets/usage-ledger';
import { GUARDRAIL_SETTINGS, guardrailSettingsOf, type GuardrailSettings } from '../guardrail/guardrail-config';
import { DEFAULT_MAX_TASK_TOKENS } from '../contract/task-ceiling';

/**
 * Slack retries an event three times — at once, after 1 minute, after 5 more — so its last
 * delivery comes about 6 minutes after the first (docs/deploy.md); 10 minutes leaves room for
 * Slack's own delays and a replayed click.
 */
export const MIN_EVENT_CLAIM_TTL_SECONDS = 600;

/**
 * Verification-zone configuration, parsed once per function (src/verification/wiring.ts turns it
 * into each function's options), with zod/mini: slack-events parses it on every cold start. The execution agent (TRANSPORT, EXECUTION_PROTOCOL, …) is
 * parsed by src/protocols/agent-config.ts.
 */
export const VerificationConfigSchema = z.object({
  SLACK_SIGNING_SECRET: z.optional(z.string()),
  SLACK_SIGNING_SECRET_ARN: z.optional(z.string()),
  SLACK_BOT_TOKEN: z.optional(z.string()),
  SLACK_BOT_TOKEN_ARN: z.optional(z.string()),
  SLACK_API_URL: z.optional(z.url()),
  SLACK_BOT_USER_ID: z.optional(z.string()),
  ALLOWED_TEAM_IDS: envList(),
  ALLOWED_USER_IDS: envList(),
  ALLOWED_CHANNEL_IDS: envList(),
  RATE_LIMIT_PER_MINUTE: envInt(20),
  MAX_TEXT_LENGTH: envInt(4000, 1),
  /**
   * How long an event id (and a click's) is remembered. At least MIN_EVENT_CLAIM_TTL_SECONDS: a
   * claim that ends before Slack's last retry would let that retry run the event again.
   */
  EVENT_CLAIM_TTL_SECONDS: envInt(3600, MIN_EVENT_CLAIM_TTL_SECONDS),
  STATE_TABLE_NAME: z.optional(z.string()),
  TASK_QUEUE_URL: z.optional(z.string()),
  POLL_QUEUE_URL: z.optional(z.string()),
  REPLY_QUEUE_URL: z.optional(z.string()),
  TASK_MAX_RECEIVE_COUNT: envInt(QUEUE_SETTINGS.tasks.maxReceiveCount, 1),
  POLL_MAX_RECEIVE_COUNT: envInt(QUEUE_SETTINGS.polls.maxReceiveCount, 1),
  REPLY_MAX_RECEIVE_COUNT: envInt(QUEUE_SETTINGS.replies.maxReceiveCount, 1),
  POLL_FIRST_DELAY_S: envInt(DEFAULT_POLL_SCHEDULE.firstDelaySeconds, 0, 900),
  POLL_BACKOFF_FACTOR: envNumber(DEFAULT_POLL_SCHEDULE.factor, 1),
  POLL_MAX_DELAY_S: envInt(DEFAULT_POLL_SCHEDULE.maxDelaySeconds, 0, 900),
  POLL_DEADLINE_S: envInt(DEFAULT_POLL_SCHEDULE.deadlineSeconds, 1),
  SLACK_REACTIONS: envBool(false),
  /** Opt-in: send the bot token to the execution zone as `bot_token` (it is never logged). */
  EXECUTION_SEND_BOT_TOKEN: envBool(false),
  USER_MESSAGES_JSON: z.optional(z.string()),
  /** Earlier thread messages sent with a task (0: none); the newest are kept (docs/contract.md, "Thread context"). */
  THREAD_CONTEXT_MAX_MESSAGES: envInt(50, 0, 1000),
  /** Characters of earlier messages sent with a task, at most. */
  THREAD_CONTEXT_MAX_CHARS: envInt(20_000, 0),
  /** Pages of 200 messages read from a thread, at most. */
  THREAD_CONTEXT_MAX_PAGES: envInt(10, 1, 100),
  /**
   * Hosts an agent's files may be fetched from by URL (docs/contract.md, "Files"): comma-separated,
   * `*.example.com` for any host under example.com; unset, no URL file is fetched.
   */
  FILE_URL_ALLOWLIST: z.optional(z.string()),
  /** The largest file fetched by URL, in bytes (held once in memory while it is uploaded). */
  FILE_URL_MAX_BYTES: envInt(20 * 1024 * 1024, 1),
  /** How long one URL file's fetch may take, redirects included. */
  FILE_URL_TIMEOUT_MS: envInt(15_000, 100),
  /** Replies in a thread the bot answered in are answered without a mention. */
  THREAD_FOLLOW_UPS: envBool(true),
  /** How long after its last answer a thread keeps taking replies without a mention. */
  THREAD_MEMORY_TTL_SECONDS: envInt(7 * 24 * 60 * 60, 60),
  /** Files sent with one task (docs/contract.md, "Attachments"); the defaults are Converse's limits. */
  ATTACHMENT_MAX_IMAGES: envInt(DEFAULT_ATTACHMENT_LIMITS.maxImages, 0),
  ATTACHMENT_MAX_IMAGE_BYTES: envInt(DEFAULT_ATTACHMENT_LIMITS.maxImageBytes, 0),
  ATTACHMENT_MAX_DOCUMENTS: envInt(DEFAULT_ATTACHMENT_LIMITS.maxDocuments, 0),
  ATTACHMENT_MAX_DOCUMENT_BYTES: envInt(DEFAULT_ATTACHMENT_LIMITS.maxDocumentBytes, 0),
  /** Bytes of files in one task, before base64; unset: what the transport carries (4 MB over https, 32 MB otherwise). */
  ATTACHMENT_MAX_TOTAL_BYTES: envOptionalInt(0),
  /**
   * Live answers: a sign of life when a task is picked up, and the answer shown in Slack while it
   * is produced (docs/architecture.md §2.5).
   */
  STREAM_REPLIES: envBool(true),
  /**
   * While a task's text flows, the next poll comes this soon (an SQS delay: whole seconds). 2 s keeps
   * a streamed answer under a tenth of what a function holding on for it would bill, at ~200 ms a
   * poll on AWS (a poll and a Slack append; bench part 7); 1 s shows text sooner for twice the polls.
   */
  STREAM_POLL_DELAY_S: envInt(2, 1, 900),
  /** The time the invoker gives the thread read and the downloads, together (never more than a third of what it has left). */
  SLACK_READ_BUDGET_MS: envInt(10_000, 0),
  /**
   * The agent surface (docs/architecture.md §2.6). AGENT_SESSIONS: the sign of life is the thread's
   * agent session (`processing`, with Slack's Stop button), where Slack allows it.
   */
  AGENT_SESSIONS: envBool(true),
  /**
   * How long an agent's question to a person waits for its answer (docs/architecture.md,
   * "Questions") before the task is cancelled and the thread told. 4 hours: a question asked in a
   * working day is answered the same afternoon, and the task, its live message and its Stop
   * record (kept 24 hours in both zones: TASK_TTL_SECONDS, the state table's records) all outlive
   * it by far. At most 23 hours, so they always do.
   */
  INPUT_TIMEOUT_S: envInt(4 * 60 * 60, 60, 23 * 60 * 60),
  /** User ids who may stop anyone's task; everyone else stops only what they asked (unset: nobody else). */
  STOP_ADMIN_USERS: envList(),
  /** Suggested prompts, as JSON `{"title"?, "home": [{title, message}…], "channel": […]}` (src/verification/surface/suggested-prompts.ts). */
  AGENT_PROMPTS_JSON: z.optional(z.string()),
  /** 👍 / 👎 under every answer (needs interactivity on in the Slack app). */
  FEEDBACK_BUTTONS: envBool(true),
  /** How long feedback records are kept. */
  FEEDBACK_RETENTION_DAYS: envInt(90, 1, 3650),
  /**
   * Daily token budgets (docs/architecture.md §2.7): per user, per channel, for the whole team;
   * unset, none. A task over one is refused before it reaches its agent; they reset at midnight UTC.
   */
  USER_DAILY_TOKEN_BUDGET: envOptionalInt(1),
  CHANNEL_DAILY_TOKEN_BUDGET: envOptionalInt(1),
  TEAM_DAILY_TOKEN_BUDGET: envOptionalInt(1),
  /**
   * The most one task is charged, in tokens (input, output and cache together): a usage an agent
   * reports over it is clamped to it and logged (docs/contract.md, "Usage"). Also what a budget
   * reserves for a task, so a burst overshoots a limit by at most one task's ceiling.
   */
  MAX_TASK_TOKENS: envInt(DEFAULT_MAX_TASK_TOKENS, 1),
  /** How long the daily usage counters are kept (`zone usage`). */
  USAGE_RETENTION_DAYS: envInt(400, 1, 3650),
  /** How long a task's audit record is kept. */
  AUDIT_RETENTION_DAYS: envInt(90, 1, 3650),
  /** Opt-in: the audit record keeps the user's message text. */
  AUDIT_MESSAGE_TEXT: envBool(false),
  /** When a conversation's AgentCore session is ended (src/verification/stop/agentcore-session-stop.ts): never (the idle timeout does), after-answer, quiet-<N>s / quiet-<N>m. */
  AGENTCORE_STOP_SESSION: SessionStopSchema,
  /** Guardrails at the boundary (src/guardrail/guardrail-config.ts): GUARDRAIL, GUARDRAIL_MODE, … */
  ...GUARDRAIL_SETTINGS,
});
/**
 * The configuration as the functions use it: every variable parsed once, with what is read out of
 * the JSON ones and the groups the wiring hands on, made once per cold start — never again at a
 * call site (src/verification/wiring.ts reads only these).
 */
export type VerificationConfig = z.infer<typeof VerificationConfigSchema> & {
  /** USER_MESSAGES_JSON over the defaults. */
  messages: UserMessages;
  /** AGENT_PROMPTS_JSON over the defaults. */
  prompts: PromptSettings;
  /** AGENTCORE_STOP_SESSION, read. */
  sessionStop: AgentCoreSessionStopPolicy;
  /** POLL_FIRST_DELAY_S, POLL_BACKOFF_FACTOR, POLL_MAX_DELAY_S, POLL_DEADLINE_S. */
  pollSchedule: PollSchedule;
  /** USER_/CHANNEL_/TEAM_DAILY_TOKEN_BUDGET: the ones set. */
  budgets: Budgets;
  /** GUARDRAIL and its settings, checked together (GUARDRAIL_PATTERNS_JSON compiled). */
  guardrail: GuardrailSettings;
};

export function loadVerificationConfig(env: NodeJS.ProcessEnv = process.env): VerificationConfig {
  const variables = parseEnv(VerificationConfigSchema, env, 'verification');
  let messages: UserMessages;
  try {
    messages = userMessages(variables.USER_MESSAGES_JSON);
  } catch (error) {
    throw new ConfigError(`invalid verification configuration: USER_MESSAGES_JSON must be a JSON object of message keys and texts (${(error as Error).message.split('\n')[0]})`);
  }
  return {
    ...variables,
    messages,
    prompts: agentPromptsOf(variables.AGENT_PROMPTS_JSON),
    sessionStop: agentCoreSessionStopPolicy(variables.AGENTCORE_STOP_SESSION),
    guardrail: guardrailSettingsOf(variables),
    pollSchedule: pollScheduleOf(variables),
    budgets: {
      ...(variables.USER_DAILY_TOKEN_BUDGET !== undefined ? { user: variables.USER_DAILY_TOKEN_BUDGET } : {}),
      ...(variables.CHANNEL_DAILY_TOKEN_BUDGET !== undefined ? { channel: variables.CHANNEL_DAILY_TOKEN_BUDGET } : {}),
      ...(variables.TEAM_DAILY_TOKEN_BUDGET !== undefined ? { team: variables.TEAM_DAILY_TOKEN_BUDGET } : {}),
    },
  };
}

export function pollScheduleOf(config: z.infer<typeof VerificationConfigSchema>): PollSchedule {
  return {
    firstDelaySeconds: config.POLL_FIRST_DELAY_S,
    factor: config.POLL_BACKOFF_FACTOR,
    maxDelaySeconds: config.POLL_MAX_DELAY_S,
    deadlineSeconds: config.POLL_DEADLINE_S,
  };
}

export function attachmentLimitsOf(config: VerificationConfig, transport: TransportKind): AttachmentLimits {
  return {
    maxImages: config.ATTACHMENT_MAX_IMAGES,
    maxImageBytes: config.ATTACHMENT_MAX_IMAGE_BYTES,
    maxDocuments: config.ATTACHMENT_MAX_DOCUMENTS,
    maxDocumentBytes: config.ATTACHMENT_MAX_DOCUMENT_BYTES,
    maxTotalBytes: config.ATTACHMENT_MAX_TOTAL_BYTES ?? defaultMaxTotalBytes(transport),
  };
}
