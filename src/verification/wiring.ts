import type { ExecutionAgent } from '../protocols/execution-agent';
import type { DeliveryHandler, Queue } from '../queue/queue';
import type { SecretSource } from '../secrets/secret-source';
import type { SlackConversations } from '../slack/slack-conversations';
import type { SlackLive } from '../slack/slack-live';
import type { SlackReplies } from '../slack/slack-port';
import { createAgentInvoker } from './invoke/agent-invoker';
import { guardrailFromSettings } from '../guardrail/guardrail-from-settings';
import type { Guardrail } from '../guardrail/guardrail';
import { createAsyncResult } from './poll/async-result';
import { attachmentLimitsOf } from './config';
import { anyAgentSendsBotToken, onlyOneAgent, type AgentDirectory } from './routing/agent-directory';
import type { FollowUpOptions } from './follow-up-options';
import type { PollMessage } from './queues/polls-queue';
import type { ReplyMessage } from './queues/replies-queue';
import type { TaskMessage } from './queues/tasks-queue';
import { acknowledgeReceipt } from './post/reactions';
import { createSlackPoster, type SlackPoster } from './post/slack-poster';
import type { SlackUploads } from '../slack/slack-uploads';
import { fetchAllowedFile, parseHostAllowlist } from '../net/safe-file-fetch';
import { FileUploader } from './files-out/file-uploader';
import type { FileUploadStates } from './files-out/upload-states';
import type { OutgoingFiles } from './files-out/outgoing-files';
import { createLiveReply, type LiveReplyService } from './live/live-reply';
import type { StepLineTexts } from './live/step-cards';
import type { BotThreads } from './stores/bot-threads';
import type { LiveReplies } from './stores/live-replies';
import type { ClaimStore } from './stores/claim-store';
import { readTaskInputs } from './invoke/task-inputs';
import { servicesOf, type FunctionContext } from './function-context';
import { createAssistantSurface, type AssistantSurface } from './surface/assistant-surface';
import { createFeedbackRecords } from './surface/feedback-records';
import type { Records } from './stores/records';
import { createThreadWork } from './stores/thread-work';
import { createUserContexts } from './surface/user-context';
import type { SlackAssistant } from '../slack/slack-assistant';
import type { UsageStore } from './stores/usage-store';
import { createAgentCoreSessionStop, type AgentCoreSessionStop } from './stop/agentcore-session-stop';
import { reservationLeaseSeconds } from './poll-schedule';
import { createAuditFeedback, createUsageLedger, type UsageLedger } from './budgets/usage-ledger';
import type { Pauses } from './stores/pauses';
import type { QuestionRoom } from './questions/question-room';

/**
 * The one place the four verification functions are wired from configuration and ports. The
 * Lambda handlers (lambdas/verification/) give it SQS, DynamoDB and Secrets Manager adapters; the
 * local pipeline (src/local/local-pipeline.ts) gives it in-memory ones. Everything a setting
 * changes — user texts, poll schedule, receive counts, reactions, allow-lists — is decided here,
 * so a deployment and a local run behave alike.
 *
 * Optional ports are functions: a Lambda builds a Slack client or reads the bot token only when
 * the configuration asks for it.
 */


/**
 * Live answers (STREAM_REPLIES, docs/architecture.md §2.5): Slack's status, stream and update
 * methods with the bot token, and the record of each task's live message. Without them (a sink
 * that cannot stream), answers come when they are done.
 */
export type LivePorts = {
  slack: () => SlackLive & Pick<SlackReplies, 'post'> & Partial<Pick<SlackAssistant, 'setSessionStatus' | 'postEphemeral'>>;
  store: LiveReplies;
};

/** What both follow-up functions (agent-invoker, async-result) are given. */
export type AsyncResultPorts = {
  /** The default agent. */
  agent: ExecutionAgent;
  /** Every configured agent (EXECUTION_AGENTS): tasks, polls and cancels go to the one they name. */
  agents?: AgentDirectory;
  polls: Queue<PollMessage>;
  replies: Queue<ReplyMessage>;
  live?: LivePorts;
  /**
   * The state table's records: what runs in each thread (so a Stop finds it) and what users look
   * at. Without them, Stop and context are not offered.
   */
  records?: Records;
  /**
   * The daily usage counters (with `records`: audit records and budgets, docs/architecture.md
   * §2.7). Without them, usage is only logged and emitted as metrics.
   */
  usage?: UsageStore;
  /** Where an answer's files wait for slack-poster; without it they are named as not shared. */
  outgoingFiles?: OutgoingFiles;
  /**
   * Questions to a person (docs/architecture.md, "Questions"): where pauses are kept, and the claims
   * that resume a task and expire a question once. Without them an agent's question is a failure.
   */
  questions?: QuestionPorts;
};

/** What the questions room is given (src/verification/questions/question-room.ts), less its settings. */
export type QuestionPorts = { pauses: Pauses; claims: ClaimStore };

export type AgentInvokerPorts = AsyncResultPorts & {
  /** Needed with SLACK_REACTIONS (👀 when a task starts). */
  slack?: () => SlackReplies;
  /**
   * Slack read with the bot token: the thread's earlier messages and the shared files. Without
   * it (a local sink that cannot read Slack), tasks go with their text alone.
   */
  conversations?: () => SlackConversations;
  /** The tasks queue: a task whose AgentCore session is busy goes back on it (src/verification/invoke/session-busy.ts). */
  tasks?: Queue<TaskMessage>;
  /** Needed when an agent gets the bot token (`"sendBotToken": true`, or EXECUTION_SEND_BOT_TOKEN for the one agent). */
  botToken?: () => SecretSource;
};

export function wireAgentInvoker(context: FunctionContext, ports: AgentInvokerPorts): DeliveryHandler {
  const { config } = context;
  const slack = config.SLACK_REACTIONS ? required(ports.slack, 'SLACK_REACTIONS needs the Slack bot token')() : undefined;
  // EXECUTION_SEND_BOT_TOKEN stands for the one agent there is (an agent built in code, locally, has no setting of its own).
  const tokenToTheOneAgent = config.EXECUTION_SEND_BOT_TOKEN && onlyOneAgent(ports);
  const botToken = tokenToTheOneAgent || anyAgentSendsBotToken(ports) ? required(ports.botToken, 'an agent with "sendBotToken" (or EXECUTION_SEND_BOT_TOKEN) needs the Slack bot token')() : undefined;
  const conversations = ports.conversations?.();
  // SLACK_READ_BUDGET_MS=0: tasks go with their text alone (no thread read, no downloads).
  const reading = conversations && config.SLACK_READ_BUDGET_MS > 0 && {
    slack: conversations,
    thread: { maxMessages: config.THREAD_CONTEXT_MAX_MESSAGES, maxChars: config.THREAD_CONTEXT_MAX_CHARS, maxPages: config.THREAD_CONTEXT_MAX_PAGES },
    attachments: attachmentLimitsOf(config, ports.agent.transport),
    budgetMs: config.SLACK_READ_BUDGET_MS,
    messages: config.messages,
    log: context.log,
  };
  const live = config.STREAM_REPLIES && config.AGENT_SESSIONS ? ports.live?.slack() : undefined;
  const ledger = ledgerOf(context, ports);
  const guardrail = guardrailOf(context);
  return createAgentInvoker({
    ...followUp(context, ports, config.TASK_MAX_RECEIVE_COUNT),
    ...(ledger ? { budget: ledger } : {}),
    ...(ports.records ? { contexts: createUserContexts(ports.records) } : {}),
    ...(live?.setSessionStatus ? { session: { setSessionStatus: live.setSessionStatus.bind(live), ...(live.postEphemeral ? { postEphemeral: live.postEphemeral.bind(live) } : {}) } } : {}),
    ...(config.STOP_ADMIN_USERS ? { stopAdmins: new Set(config.STOP_ADMIN_USERS) } : {}),
    ...(slack ? { onTaskStarted: (thread) => acknowledgeReceipt(slack, thread) } : {}),
    ...(botToken ? { botTokenForExecution: botToken, ...(tokenToTheOneAgent ? { botTokenToTheOneAgent: true } : {}) } : {}),
    ...(ports.tasks ? { tasks: ports.tasks } : {}),
    ...(reading ? { readInputs: (task, call) => readTaskInputs(task, reading, call, context.clock) } : {}),
    ...(guardrail ? { guardrail } : {}),
  });
}

export function wireAsyncResult(context: FunctionContext, ports: AsyncResultPorts): DeliveryHandler {
  return createAsyncResult(followUp(context, ports, context.config.POLL_MAX_RECEIVE_COUNT));
}

export type SlackPosterPorts = {
  slack: SlackReplies;
  claims: ClaimStore;
  live?: LivePorts;
  /** Where answered threads are recorded, for THREAD_FOLLOW_UPS. */
  threads: BotThreads;
  /** The agent surface's Slack calls (prompts, ephemeral messages, modals). */
  agent?: () => SlackAssistant;
  /** The state table's records: feedback, and what runs in each thread. */
  records?: Records;
  /** Sharing an answer's files (docs/architecture.md, "Files the agent makes"): Slack's upload calls, each file's upload state, where the files wait. */
  files?: { uploads: () => SlackUploads; states: FileUploadStates; outgoing: OutgoingFiles };
  /** Questions (docs/architecture.md, "Questions"): posted with `live`'s Slack calls (post, update, ephemeral). */
  pauses?: Pauses;
};

export function wireSlackPoster(context: FunctionContext, ports: SlackPosterPorts): SlackPoster {
  const { config } = context;
  const guardrail = guardrailOf(context);
  return createSlackPoster({
    replies: ports.slack,
    claims: ports.claims,
    reactions: config.SLACK_REACTIONS,
    maxReceiveCount: config.REPLY_MAX_RECEIVE_COUNT,
    // On a reply's last receive (or a reply with no visible text) the user is told this instead.
    fallbackText: config.messages.internalError,
    ...(config.THREAD_FOLLOW_UPS ? { threads: { store: ports.threads, ttlSeconds: config.THREAD_MEMORY_TTL_SECONDS } } : {}),
    ...(config.STREAM_REPLIES && ports.live ? { live: liveReplyOf(context, ports.live) } : {}),
    ...(ports.records ? { work: createThreadWork(ports.records, context.clock) } : {}),
    ...(ports.records && ports.agent ? { surface: assistantSurfaceOf(context, ports.agent(), ports.records, ports.claims), feedbackButtons: config.FEEDBACK_BUTTONS } : {}),
    ...(ports.files ? { files: { uploader: fileUploaderOf(context, ports.files, ports.claims), outgoing: ports.files.outgoing } } : {}),
    ...(guardrail ? { guardrail: { guardrail, blockedText: config.messages.guardrailBlockedAnswer } } : {}),
    ...(ports.pauses && ports.live ? { questions: { slack: ports.live.slack(), pauses: ports.pauses }, messages: config.messages } : {}),
    stepLine: stepLineOf(context),
    ...servicesOf(context),
  });
}

/** The uploader of answers' files, URL files fetched only as FILE_URL_ALLOWLIST allows (src/net/safe-file-fetch.ts). */
function fileUploaderOf(context: FunctionContext, files: NonNullable<SlackPosterPorts['files']>, claims: ClaimStore): FileUploader {
  const { config } = context;
  const allowlist = parseHostAllowlist(config.FILE_URL_ALLOWLIST);
  return new FileUploader({
    slack: files.uploads(),
    states: files.states,
    claims,
    fetchUrl: (url, options) => fetchAllowedFile(url, { allowlist, maxBytes: config.FILE_URL_MAX_BYTES, timeoutMs: config.FILE_URL_TIMEOUT_MS, ...options }),
    log: context.log,
  });
}

/** GUARDRAIL (docs/operations.md, "Guardrails"), counted and logged; undefined when off. */
function guardrailOf(context: FunctionContext): Guardrail | undefined {
  return guardrailFromSettings(context.config.guardrail, { log: context.log, ...(context.metrics ? { metrics: context.metrics } : {}) });
}

function assistantSurfaceOf(context: FunctionContext, slack: SlackAssistant, records: Records, claims: ClaimStore): AssistantSurface {
  const feedback = createFeedbackRecords(records, { clock: context.clock, ttlSeconds: context.config.FEEDBACK_RETENTION_DAYS * 24 * 60 * 60 });
  const audit = createAuditFeedback(records, context.config.AUDIT_RETENTION_DAYS * DAY_SECONDS);
  const guardComment = keptTextGuard(context);
  return createAssistantSurface({ slack, feedback, audit, once: (key) => claims.mark(key, THANKS_CLAIM_SECONDS), messages: context.config.messages, ...(guardComment ? { guardComment } : {}), ...servicesOf(context) });
}

/**
 * With GUARDRAIL, text the zone keeps — the audit record's message (AUDIT_MESSAGE_TEXT), a feedback
 * form's comment — is kept as the input guardrail passes it: masked; none when blocked
 * (docs/operations.md, "Guardrails").
 */
function keptTextGuard(context: FunctionContext): ((text: string) => Promise<string | undefined>) | undefined {
  const guardrail = guardrailOf(context);
  if (!guardrail) return undefined;
  return async (text) => {
    const checked = await guardrail.check(text, 'input');
    return checked.action === 'blocked' ? undefined : checked.text;
  };
}

const DAY_SECONDS = 24 * 60 * 60;
/** A thank-you's claim outlives the replies queue's redeliveries of its click by far. */
const THANKS_CLAIM_SECONDS = DAY_SECONDS;

/** Usage records, audit and budgets, when the function has the counters and the records. */
function ledgerOf(context: FunctionContext, ports: AsyncResultPorts): UsageLedger | undefined {
  const { config } = context;
  if (!ports.usage || !ports.records) return undefined;
  const guardText = config.AUDIT_MESSAGE_TEXT ? keptTextGuard(context) : undefined;
  return createUsageLedger({
    usage: ports.usage,
    records: ports.records,
    budgets: config.budgets,
    usageTtlSeconds: config.USAGE_RETENTION_DAYS * DAY_SECONDS,
    auditTtlSeconds: config.AUDIT_RETENTION_DAYS * DAY_SECONDS,
    auditText: config.AUDIT_MESSAGE_TEXT,
    ...(guardText ? { guardText } : {}),
    maxTaskTokens: config.MAX_TASK_TOKENS,
    reservationLeaseSeconds: reservationLeaseSeconds(config.pollSchedule),
    messages: config.messages,
    clock: context.clock,
    log: context.log,
    ...(context.metrics ? { metrics: context.metrics } : {}),
  });
}

/** What agent-invoker and async-result share: the agent, where polls and replies go, how to poll. */
function followUp(context: FunctionContext, ports: AsyncResultPorts, maxReceiveCount: number): FollowUpOptions {
  return {
    agent: ports.agent,
    ...(ports.agents ? { agents: ports.agents } : {}),
    polls: ports.polls,
    replies: ports.replies,
    messages: context.config.messages,
    schedule: context.config.pollSchedule,
    maxReceiveCount,
    maxTaskTokens: context.config.MAX_TASK_TOKENS,
    ...(context.config.STREAM_REPLIES && ports.live ? { live: { reply: liveReplyOf(context, ports.live), pollDelaySeconds: context.config.STREAM_POLL_DELAY_S } } : {}),
    ...(ports.records ? { work: createThreadWork(ports.records, context.clock) } : {}),
    ...(ports.outgoingFiles ? { outgoingFiles: ports.outgoingFiles } : {}),
    ...(ports.questions ? { questions: questionRoomOf(context, ports, ports.questions) } : {}),
    ...afterSettled(ledgerOf(context, ports), agentCoreSessionStopOf(context, ports)),
    ...servicesOf(context),
  };
}

/** Questions (docs/architecture.md, "Questions"): INPUT_TIMEOUT_S, and each agent's `approvers`. */
function questionRoomOf(context: FunctionContext, ports: AsyncResultPorts, questions: QuestionPorts): QuestionRoom {
  const agents = ports.agents;
  return { ...questions, timeoutSeconds: context.config.INPUT_TIMEOUT_S, ...(agents?.approvers ? { approvers: (name: string) => agents.approvers?.(name) } : {}) };
}

/** What a settled task is handed to: its usage records, then its AgentCore session's end. */
function afterSettled(ledger: UsageLedger | undefined, sessions: AgentCoreSessionStop | undefined): Pick<FollowUpOptions, 'onSettled' | 'sessions'> {
  if (!ledger && !sessions) return {};
  return {
    onSettled: async (task, settled) => {
      try {
        await ledger?.settled(task, settled);
      } finally {
        await sessions?.settled(task, settled);
      }
    },
    ...(sessions ? { sessions } : {}),
  };
}

/** AGENTCORE_STOP_SESSION: only for agents whose transport has sessions to end, and with the records that say which task is a thread's latest. */
function agentCoreSessionStopOf(context: FunctionContext, ports: AsyncResultPorts): AgentCoreSessionStop | undefined {
  const policy = context.config.sessionStop;
  if (policy.kind === 'never' || !ports.records) return undefined;
  return createAgentCoreSessionStop({
    policy,
    agent: ports.agent,
    ...(ports.agents ? { agents: ports.agents } : {}),
    work: createThreadWork(ports.records, context.clock),
    // The polls queue carries the delayed checks as well as polls (async-result tells them apart by `kind`).
    polls: ports.polls as unknown as Queue<unknown>,
    log: context.log,
    ...(context.metrics ? { metrics: context.metrics } : {}),
  });
}

function liveReplyOf(context: FunctionContext, ports: LivePorts): LiveReplyService {
  const messages = context.config.messages;
  const guardrail = guardrailOf(context);
  return createLiveReply({
    slack: ports.slack(),
    store: ports.store,
    workingText: messages.working,
    placeholderText: messages.workingPlaceholder,
    log: context.log,
    sessions: context.config.AGENT_SESSIONS,
    // Previews and step cards show only what the output guardrail released (live/live-guard.ts, live/step-cards.ts).
    ...(guardrail ? { guardrail: { guardrail, blockedText: messages.guardrailBlockedAnswer } } : {}),
    stepLine: stepLineOf(context),
  });
}

/** The texts the agent's steps fold to where the answer is no stream (live/step-cards.ts): the operator's, through USER_MESSAGES_JSON. */
function stepLineOf(context: FunctionContext): StepLineTexts {
  const { stepDone, stepFailed, stepWorking, stepHidden } = context.config.messages;
  return { stepDone, stepFailed, stepWorking, stepHidden };
}

function required<T>(port: (() => T) | undefined, message: string): () => T {
  if (!port) throw new Error(message);
  return port;
}
