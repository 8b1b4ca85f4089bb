import type { Clock } from '../../clock';
import type { Guardrail } from '../../guardrail/guardrail';
import type { Log } from '../../observability/logger';
import type { Delivery, DeliveryContext, Queue } from '../../queue/queue';
import type { SecretSource } from '../../secrets/secret-source';
import type { SlackAssistant } from '../../slack/slack-assistant';
import type { UsageLedger } from '../budgets/usage-ledger';
import type { FollowUpOptions } from '../follow-up-options';
import type { SlackThread } from '../queues/slack-thread';
import type { TaskMessage } from '../queues/tasks-queue';
import type { Settlement } from '../settle/settle-outcome';
import type { UserContexts } from '../surface/user-context';
import type { Tracer } from '../trace';
import type { TaskInputs } from './task-inputs';

/** What agent-invoker is given, and what its steps share (src/verification/invoke/agent-invoker.ts). */

export type AgentInvokerOptions = FollowUpOptions & {
  /** Called once a task is about to be sent (e.g. the 👀 reaction). Failures are logged, never fatal. */
  onTaskStarted?: (thread: SlackThread) => Promise<void>;
  /** The bot token, for the agents configured to get it in `bot_token` (ExecutionAgent.sendsBotToken); never sent to others. */
  botTokenForExecution?: SecretSource;
  /** EXECUTION_SEND_BOT_TOKEN with one agent configured: that agent gets the token whatever its own setting. */
  botTokenToTheOneAgent?: boolean;
  /** Reads the thread's earlier messages and the shared files (src/verification/invoke/task-inputs.ts); never throws. */
  readInputs?: (task: TaskMessage, call: { signal?: AbortSignal; deadline?: number }) => Promise<TaskInputs>;
  /** What users look at (app_context_changed): sent with their tasks in the agent's DM. */
  contexts?: UserContexts;
  /** Moves a session with nothing running out of `processing` after a Stop. */
  session?: Pick<SlackAssistant, 'setSessionStatus'> & Partial<Pick<SlackAssistant, 'postEphemeral'>>;
  /** STOP_ADMIN_USERS: who may stop anyone's task (src/verification/stop/stop-task.ts). */
  stopAdmins?: ReadonlySet<string>;
  /**
   * Daily token budgets (usage-ledger.ts): asked before a task reaches its agent. A refused task
   * gets the notice as its one reply and is consumed; one near a limit while another of the same
   * user, channel or team is in flight waits for it.
   */
  budget?: Pick<UsageLedger, 'admit' | 'firstRefusalNotice'>;
  /**
   * The tasks queue: a task whose AgentCore session is busy with another call goes back on it
   * (session-busy.ts). Without it, a busy session is retried like any passing failure.
   */
  tasks?: Pick<Queue<TaskMessage>, 'send'>;
  /** GUARDRAIL: the task's text, thread and text files checked before they cross (guard-input.ts). */
  guardrail?: Guardrail;
};

/** A retryable failure: the record fails so SQS delivers it again (same request id, same task). */
export class RetryableTaskError extends Error {
  override name = 'RetryableTaskError';
  constructor(
    message: string,
    /** True when the user was already told (the last receive): no second, generic apology. */
    readonly userNotified = false,
  ) {
    super(message);
  }
}

/** What the invoker's steps share: its options and what it made of them once. */
export type InvokerParts = { options: AgentInvokerOptions; clock: Clock; trace: Tracer; settlement: Settlement };

/** One task on one delivery: the message, its thread and log, and the delivery's time. */
export type TaskRun = { task: TaskMessage; thread: SlackThread; log: Log; delivery: Delivery; context: DeliveryContext; /** Questions answered in the task so far (a resumed task's run): the next one it asks is this round. */ round?: number };

/** The task as it is charged: with the characters its agent was sent, the estimate when it reports no usage (src/verification/settle/task-charge.ts). */
export type ChargedTask = TaskMessage & { input_chars: number };

