import type { Clock } from '../clock';
import type { Log } from '../observability/logger';
import type { PipelineMetrics } from '../observability/metrics';
import type { ExecutionAgent } from '../protocols/execution-agent';
import type { Queue } from '../queue/queue';
import type { AgentDirectory } from './routing/agent-directory';
import type { PollSchedule } from './poll-schedule';
import type { PollsQueueMessage } from './queues/polls-queue';
import type { RepliesQueueMessage } from './queues/replies-queue';
import type { AgentCoreSessionStop } from './stop/agentcore-session-stop';
import type { Settled, SettledTask } from './settle/settled';
import type { ThreadWork } from './stores/thread-work';
import type { LiveReplyService } from './live/live-reply';
import type { Tracer } from './trace';
import type { UserMessages } from './messages/user-messages';


import type { OutgoingFiles } from './files-out/outgoing-files';
import type { QuestionRoom } from './questions/question-room';

/** What agent-invoker and async-result both need: the agents, where polls and replies go, and how to poll. */
export type FollowUpOptions = {
  /** The default agent: a task or poll message that names no agent (an older version's) goes to it. */
  agent: ExecutionAgent;
  /**
   * Every configured agent: a task goes to the one its message names, its polls and cancel to the
   * one that accepted it. Without it, only the default agent is known.
   */
  agents?: AgentDirectory;
  polls: Queue<PollsQueueMessage>;
  /** Replies, and the Slack calls slack-poster makes (an ephemeral refusal): the replies queue carries both. */
  replies: Queue<RepliesQueueMessage>;
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
  /**
   * Told of each task once it is settled, with what its answer cost (settle-outcome.ts, `Settled`):
   * where usage records and budgets attach. Both functions settle tasks, so both pass it on.
   */
  onSettled?: (task: SettledTask, settled: Settled) => void | Promise<void>;
  /**
   * AGENTCORE_STOP_SESSION other than `never` (src/verification/stop/agentcore-session-stop.ts): async-result
   * takes the delayed checks it puts on the polls queue.
   */
  sessions?: Pick<AgentCoreSessionStop, 'check'>;
  /**
   * Where an answer's files wait for slack-poster (src/verification/files-out/outgoing-files.ts).
   * Without it, files are not shared: each is named as left out.
   */
  outgoingFiles?: OutgoingFiles;
  /**
   * Questions to a person (docs/architecture.md, "Questions"): agents are called so they may ask,
   * a question pauses the task until it is answered or expires. Without it a question is a failure.
   */
  questions?: QuestionRoom;
  /** MAX_TASK_TOKENS: the most one task is charged (src/verification/settle/task-charge.ts). */
  maxTaskTokens?: number;
  trace?: Tracer;
  clock?: Clock;
};

