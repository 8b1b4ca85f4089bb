import { createLogger, type Log } from '../observability/logger';
import type { ExecutionAgent } from '../protocols/execution-agent';
import { MemoryQueue, whenAllIdle } from '../queue/memory-queue';
import type { SlackReplies } from '../slack/slack-replies';
import { createAgentInvoker } from '../verification/agent-invoker';
import { createAsyncResult } from '../verification/async-result';
import { ingressSettingsOf, loadVerificationConfig, pollScheduleOf, type VerificationConfig } from '../verification/config';
import type { PollMessage, ReplyMessage, TaskMessage } from '../verification/queue-messages';
import { RateLimiter } from '../verification/rate-limiter';
import { staticSecret } from '../verification/secret-source';
import { createSlackIngress, type IngressRequest, type IngressResponse } from '../verification/slack-ingress';
import { acknowledgeReceipt, createSlackPoster } from '../verification/slack-poster';
import { MemoryClaimStore } from '../verification/stores/memory-claim-store';
import { MemoryCounterStore } from '../verification/stores/memory-counter-store';
import { noTrace, type Tracer } from '../verification/trace';
import { userMessages } from '../verification/user-messages';

export type LocalPipelineOptions = {
  /** The execution agent the invoker and poller call (any protocol, any transport). */
  agent: ExecutionAgent;
  /** Where replies go: the Slack Web API (real or fake), or the terminal. */
  slack: SlackReplies;
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
  const log = options.log ?? createLogger('verification');
  const trace = options.trace ?? noTrace;
  const timeScale = options.timeScale ?? 1;
  const messages = userMessages(config.USER_MESSAGES_JSON);
  const schedule = pollScheduleOf(config);
  const claims = new MemoryClaimStore();
  // Poll deadlines are measured on the same scaled clock as the queue delays.
  const now = scaledClock(timeScale);

  const dlq = (name: string) => new MemoryQueue<unknown>({ name, timeScale });
  const tasksDlq = dlq('tasks-dlq');
  const pollsDlq = dlq('polls-dlq');
  const repliesDlq = dlq('replies-dlq');
  // Visibility timeouts as the CDK app sets them (≥ 6× the consumer's timeout), scaled.
  const tasks = new MemoryQueue<TaskMessage>({ name: 'tasks', visibilityTimeoutSeconds: 360, maxReceiveCount: config.TASK_MAX_RECEIVE_COUNT, deadLetterQueue: tasksDlq, timeScale });
  const polls = new MemoryQueue<PollMessage>({ name: 'polls', visibilityTimeoutSeconds: 180, maxReceiveCount: config.POLL_MAX_RECEIVE_COUNT, deadLetterQueue: pollsDlq, timeScale });
  const replies = new MemoryQueue<ReplyMessage>({ name: 'replies', visibilityTimeoutSeconds: 180, maxReceiveCount: config.REPLY_MAX_RECEIVE_COUNT, deadLetterQueue: repliesDlq, timeScale });
  for (const queue of [tasksDlq, pollsDlq, repliesDlq]) {
    queue.subscribe((event) => {
      if (event.type !== 'sent') return;
      const requestId = requestIdOf(event.body);
      if (requestId) trace({ requestId, hop: 'dead-lettered', at: event.at, detail: { queue: queue.name } });
    });
  }

  const ingress = createSlackIngress({
    signingSecret: staticSecret(options.signingSecret),
    claims,
    rateLimiter: new RateLimiter({ counters: new MemoryCounterStore(), perMinute: config.RATE_LIMIT_PER_MINUTE }),
    tasks,
    replies,
    ...ingressSettingsOf(config),
    log,
    trace,
  });
  tasks.consume(
    createAgentInvoker({
      agent: options.agent,
      polls,
      replies,
      messages,
      schedule,
      maxReceiveCount: config.TASK_MAX_RECEIVE_COUNT,
      log,
      trace,
      now,
      ...(config.SLACK_REACTIONS ? { onTaskStarted: (thread) => acknowledgeReceipt(options.slack, thread) } : {}),
    }),
  );
  polls.consume(createAsyncResult({ agent: options.agent, polls, replies, messages, schedule, maxReceiveCount: config.POLL_MAX_RECEIVE_COUNT, log, trace, now }));
  replies.consume(createSlackPoster({ replies: options.slack, claims, reactions: config.SLACK_REACTIONS, log, trace }));

  const all = [tasks, polls, replies, tasksDlq, pollsDlq, repliesDlq] as Array<MemoryQueue<unknown>>;
  return {
    ingress,
    queues: { tasks, polls, replies, tasksDlq, pollsDlq, repliesDlq },
    config,
    whenIdle: (idleOptions) => whenAllIdle(all, idleOptions),
    stop: async () => {
      await Promise.all(all.map((queue) => queue.stop()));
    },
  };
}

/** Real time at scale 1; otherwise time that runs 1/timeScale times as fast, from now on. */
function scaledClock(timeScale: number): () => number {
  if (timeScale === 1) return Date.now;
  const origin = Date.now();
  return () => origin + (Date.now() - origin) / timeScale;
}

function requestIdOf(body: string): string | undefined {
  try {
    const value = JSON.parse(body) as { request_id?: unknown };
    return typeof value.request_id === 'string' ? value.request_id : undefined;
  } catch {
    return undefined;
  }
}
