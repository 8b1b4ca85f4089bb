import type { Clock } from '../clock';
import type { Log } from '../observability/logger';
import type { PipelineMetrics } from '../observability/metrics';
import type { ExecutionAgent } from '../protocols/execution-agent';
import type { Queue } from '../queue/queue';
import type { PollSchedule } from './poll-schedule';
import type { PollMessage, ReplyMessage } from './queue-messages';
import type { ThreadWork } from './thread-work';
import type { LiveReplyService } from './live-reply';
import type { Tracer } from './trace';
import type { UserMessages } from './user-messages';

/** What agent-invoker and async-result both need: the agent, where polls and replies go, and how to poll. */
export type FollowUpOptions = {
  agent: ExecutionAgent;
  polls: Queue<PollMessage>;
  replies: Queue<ReplyMessage>;
  messages: UserMessages;
  schedule: PollSchedule;
  /** The consuming queue's maxReceiveCount: on that receive the user is still told before the DLQ. */
  maxReceiveCount: number;
  /**
   * Live answers (STREAM_REPLIES): a sign of life when a task is picked up, and its text shown while
   * it is produced. Without it, the answer comes when it is done.
   */
  live?: { reply: LiveReplyService; pollDelaySeconds: number };
  /**
   * What runs in each thread, so a Stop finds it (docs/architecture.md §2.6, "Stop"): the invoker
   * records a task and its handle; both functions leave a stopped task alone. Without it, Stop
   * is not offered.
   */
  work?: ThreadWork;
  log: Log;
  metrics?: PipelineMetrics;
  trace?: Tracer;
  clock?: Clock;
};
