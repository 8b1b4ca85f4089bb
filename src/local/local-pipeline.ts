import { systemClock, type Clock } from '../clock';
import { createLogger, type Log } from '../observability/logger';
import type { ExecutionAgent } from '../protocols/execution-agent';
import type { AgentRoutes } from '../protocols/agent-routes';
import type { AgentDirectory } from '../verification/routing/agent-directory';
import { MemoryQueue, whenAllIdle } from '../queue/memory-queue';
import { staticSecret } from '../secrets/secret-source';
import type { SlackConversations } from '../slack/slack-conversations';
import type { SlackLive } from '../slack/slack-live';
import type { SlackReplies } from '../slack/slack-replies';
import { loadVerificationConfig, type VerificationConfig } from '../verification/config';
import { visibilityTimeoutSeconds, type PipelineQueue } from '../verification/pipeline-settings';
import type { PollMessage } from '../verification/queues/polls-queue';
import type { ReplyMessage } from '../verification/queues/replies-queue';
import type { TaskMessage } from '../verification/queues/tasks-queue';
import type { IngressRequest, IngressResponse } from '../verification/intake/slack-ingress';
import { MemoryBotThreads } from '../verification/stores/memory-bot-threads';
import { MemoryClaimStore } from '../verification/stores/memory-claim-store';
import { MemoryLiveReplies } from '../verification/stores/memory-live-replies';
import { MemoryCounterStore } from '../verification/stores/memory-counter-store';
import { MemoryRecords } from '../verification/stores/memory-records';
import { MemoryPauses } from '../verification/stores/memory-pauses';
import { MemoryUsageStore } from '../verification/stores/memory-usage-store';
import type { ListableRecords } from '../verification/stores/records';
import type { SlackAssistant } from '../slack/slack-assistant';
import type { SlackUploads } from '../slack/slack-uploads';
import { MemoryFileUploadStates } from '../verification/files-out/memory-upload-states';
import { MemoryOutgoingFiles } from '../verification/files-out/memory-outgoing-files';
import { noTrace, type Tracer } from '../verification/trace';
import { wireAgentInvoker, wireAsyncResult, wireSlackPoster } from '../verification/wiring';
import { wireSlackEvents } from '../verification/slack-events-wiring';
import type { FunctionContext } from '../verification/function-context';

export type LocalPipelineOptions = {
  /** The default execution agent the invoker and poller call (any protocol, any transport). */
  agent: ExecutionAgent;
  /** Every configured agent and where each answers (EXECUTION_AGENTS): tasks are routed to them. */
  agents?: AgentDirectory & { routes: AgentRoutes };
  /**
   * Where replies go: the Slack Web API (real or fake), or the terminal. When it can also read
   * threads and files (SlackConversations), tasks carry their thread context and attachments.
   */
  slack: SlackReplies & Partial<SlackConversations> & Partial<SlackLive> & Partial<SlackAssistant>;
  /** The agent surface's records; the local stack passes its own, so `zone feedback` can list them. */
  records?: ListableRecords;
  signingSecret: string;
  /** Verification settings as environment variables (ALLOWED_*, RATE_LIMIT_PER_MINUTE, POLL_*, …). */
  env?: NodeJS.ProcessEnv;
  /** Multiplies queue delays and visibility timeouts (0.01 turns a 2 s poll delay into 20 ms). */
  timeScale?: number;
  log?: Log;
  trace?: Tracer;
};

export type LocalPipeline = {
  /** The slack-events function: what API Gateway would call. */
  ingress(request: IngressRequest): Promise<IngressResponse>;
  queues: {
    tasks: MemoryQueue<TaskMessage>;
    polls: MemoryQueue<PollMessage>;
    replies: MemoryQueue<ReplyMessage>;
    tasksDlq: MemoryQueue<unknown>;
    pollsDlq: MemoryQueue<unknown>;
    repliesDlq: MemoryQueue<unknown>;
  };
  config: VerificationConfig;
  /** Running tasks, Stops, contexts, feedback and audit records (`listFeedback`, `listAudit` read them). */
  records: ListableRecords;
  /** The daily usage counters (`zone usage`). */
  usage: MemoryUsageStore;
  /** Resolves when every queue is empty and nothing is in flight. */
  whenIdle(options?: { timeoutMs?: number }): Promise<void>;
  stop(): Promise<void>;
};

/**
 * The four verification functions wired exactly as in production, with in-memory queues (delays,
 * visibility timeouts, redelivery and DLQs as SQS has them) and in-memory stores in place of SQS
 * and DynamoDB. Used by `zone start`, the demo and the integration tests.
 */
export function createLocalPipeline(options: LocalPipelineOptions): LocalPipeline {
  const config = loadVerificationConfig(options.env ?? {});
  const trace = options.trace ?? noTrace;
  const timeScale = options.timeScale ?? 1;
  // The queues scale their delays and visibility timeouts on real time. What is measured against
  // those runs on a clock scaled alike: the follow-up functions' poll deadlines, and the leases and
  // TTLs of claims, threads and live replies (a chunk lease must end before the scaled redelivery
  // that is meant to take it over, as it does in a deployment). slack-events (with its rate
  // counters) and slack-poster stay on real time: Slack signs requests on its own clock (a 5-minute
  // window), and their trace times are compared with the replies' real ones. (A Slack call's
  // deadline a follow-up function sets thus falls later in real time, never earlier; its abort
  // signal's timeout stays real.)
  const clock = scaledClock(timeScale);
  const context: FunctionContext = { config, log: options.log ?? createLogger('verification'), trace, clock: systemClock };
  // A hop is traced as it happens; the follow-ups stamp it on their scaled clock, so the trace
  // (the playground's, the demo's) takes real time instead: one timeline with the replies.
  const followUps: FunctionContext = { ...context, clock, trace: (event) => trace({ ...event, at: systemClock.now() }) };
  const claims = new MemoryClaimStore({ clock });

  const dlq = (name: string) => new MemoryQueue<unknown>({ name, timeScale });
  const tasksDlq = dlq('tasks-dlq');
  const pollsDlq = dlq('polls-dlq');
  const repliesDlq = dlq('replies-dlq');
  // Visibility timeouts as CDK deploys them (src/verification/pipeline-settings.ts), scaled; the
  // receive counts come from the same variables the functions read, so a test can lower both.
  const queue = <T>(name: PipelineQueue, maxReceiveCount: number, deadLetterQueue: MemoryQueue<unknown>) =>
    new MemoryQueue<T>({ name, visibilityTimeoutSeconds: visibilityTimeoutSeconds(name), maxReceiveCount, deadLetterQueue, timeScale });
  const tasks = queue<TaskMessage>('tasks', config.TASK_MAX_RECEIVE_COUNT, tasksDlq);
  const polls = queue<PollMessage>('polls', config.POLL_MAX_RECEIVE_COUNT, pollsDlq);
  const replies = queue<ReplyMessage>('replies', config.REPLY_MAX_RECEIVE_COUNT, repliesDlq);
  for (const deadLetters of [tasksDlq, pollsDlq, repliesDlq]) {
    deadLetters.subscribe((event) => {
      if (event.type !== 'sent') return;
      const requestId = requestIdOf(event.body);
      if (requestId) trace({ requestId, hop: 'dead-lettered', at: event.at, detail: { queue: deadLetters.name } });
    });
  }

  // The threads the bot answered in live on the scaled clock, like the claims.
  const threads = new MemoryBotThreads(clock);
  const liveStore = new MemoryLiveReplies(clock);
  // The agent surface's records (running tasks, Stops, contexts, feedback) expire on real time:
  // their lifetimes (an hour, a day, days) are not delays the queues scale.
  const records = options.records ?? new MemoryRecords(systemClock);
  // Usage counters are per UTC day: real time too.
  const usage = new MemoryUsageStore(systemClock);
  // An answer's files wait here for slack-poster, as in the state table when deployed.
  const outgoingFiles = new MemoryOutgoingFiles(clock);
  // Tasks paused on a question (src/verification/stores/pauses.ts): their expiry is a delay the queues scale, so the scaled clock.
  const pauses = new MemoryPauses(clock);
  const questions = { pauses, claims };
  const ingress = wireSlackEvents(context, { signingSecret: staticSecret(options.signingSecret), claims, counters: new MemoryCounterStore(), tasks, replies, threads, records, ...(options.agents ? { routes: options.agents.routes } : {}) });
  const agents = options.agents ? { agents: options.agents } : {};
  const botToken = config.SLACK_BOT_TOKEN;
  const slack = options.slack;
  const reader = canRead(slack) ? slack : undefined;
  const streamer = canStream(slack) ? slack : undefined;
  const live = streamer ? { slack: () => streamer, store: liveStore } : undefined;
  tasks.consume(
    wireAgentInvoker(followUps, {
      agent: options.agent,
      ...agents,
      polls,
      replies,
      tasks,
      slack: () => slack,
      ...(reader ? { conversations: () => reader } : {}),
      ...(botToken ? { botToken: () => staticSecret(botToken) } : {}),
      ...(live ? { live } : {}),
      records,
      usage,
      outgoingFiles,
      questions,
    }),
  );
  polls.consume(wireAsyncResult(followUps, { agent: options.agent, ...agents, polls, replies, ...(live ? { live } : {}), records, usage, outgoingFiles, questions }));
  const agentSurface = canAct(slack) ? slack : undefined;
  const uploads = canUpload(slack) ? slack : undefined;
  const files = uploads ? { uploads: () => uploads, states: new MemoryFileUploadStates(clock), outgoing: outgoingFiles } : undefined;
  replies.consume(wireSlackPoster(context, { slack, claims, threads, ...(live ? { live } : {}), ...(agentSurface ? { agent: () => agentSurface } : {}), records, ...(files ? { files } : {}), pauses }));

  const all = [tasks, polls, replies, tasksDlq, pollsDlq, repliesDlq] as Array<MemoryQueue<unknown>>;
  return {
    ingress,
    queues: { tasks, polls, replies, tasksDlq, pollsDlq, repliesDlq },
    config,
    records,
    usage,
    whenIdle: (idleOptions) => whenAllIdle(all, idleOptions),
    stop: async () => {
      await Promise.all(all.map((queue) => queue.stop()));
    },
  };
}

function canStream(slack: SlackReplies & Partial<SlackLive>): slack is SlackReplies & SlackLive {
  return ['setStatus', 'startStream', 'appendStream', 'stopStream', 'update'].every((method) => typeof (slack as unknown as Record<string, unknown>)[method] === 'function');
}

/** Slack's three upload calls (the local workspace and the Web API adapter take them). */
function canUpload(slack: SlackReplies & Partial<SlackUploads>): slack is SlackReplies & SlackUploads {
  return typeof slack.startUpload === 'function' && typeof slack.share === 'function';
}

function canAct(slack: SlackReplies & Partial<SlackAssistant>): slack is SlackReplies & SlackAssistant {
  return ['setSessionStatus', 'setSuggestedPrompts', 'postEphemeral', 'openView'].every((method) => typeof (slack as unknown as Record<string, unknown>)[method] === 'function');
}

function canRead(slack: SlackReplies & Partial<SlackConversations>): slack is SlackReplies & SlackConversations {
  return typeof slack.readThread === 'function' && typeof slack.downloadFile === 'function';
}

/** Real time at scale 1; otherwise time that runs 1/timeScale times as fast, from now on. */
function scaledClock(timeScale: number): Clock {
  if (timeScale === 1) return systemClock;
  const origin = systemClock.now();
  return { now: () => origin + (systemClock.now() - origin) / timeScale };
}

function requestIdOf(body: string): string | undefined {
  try {
    const value = JSON.parse(body) as { request_id?: unknown };
    return typeof value.request_id === 'string' ? value.request_id : undefined;
  } catch {
    return undefined;
  }
}
