import type { Clock } from '../../clock';
import type { Log, LogExtra } from '../../observability/logger';
import type { AgentOutcome, Failure, Outcome } from '../../protocols/outcome';
import type { DeliveryHandler } from '../../queue/queue';
import { answerReply, withNotes } from './answer-reply';
import { userMessageForFailure } from '../messages/failure-messages';
import type { PipelineMetrics } from '../../observability/metrics';
import type { ExecutionAgent } from '../../protocols/execution-agent';
import type { Queue } from '../../queue/queue';
import type { UserMessages } from '../messages/user-messages';
import type { RepliesQueueMessage } from '../queues/replies-queue';
import type { AgentDirectory } from '../routing/agent-directory';
import type { ThreadWork } from '../stores/thread-work';
import type { Settled, SettledTask } from './settled';
import { withLastReceiveApology } from './last-receive';
import { threadOf } from '../queues/slack-thread';
import { type ReplyMessage } from '../queues/replies-queue';
import type { Tracer } from '../trace';
import { handOverFiles, textWithFiles } from '../files-out/hand-over-files';
import type { OutgoingFiles } from '../files-out/outgoing-files';
import { DEFAULT_MAX_TASK_TOKENS, type Usage } from '../../contract';
import { chargedUsage } from './task-charge';
import { queuedSteps } from '../live/step-cards';

/** Characters the agent was sent: what the invoker counted, else the task's own text. */
function inputCharsOf(task: SettledTask): number {
  return task.input_chars ?? task.text?.length ?? 0;
}

/**
 * How a task ends, the same whether agent-invoker or async-result sees it end
 * (docs/architecture.md §2.2, §2.3): each call to the agent is counted, and an outcome that settles
 * the task — an answer, or a failure that retrying will not mend — becomes its one reply on the
 * replies queue. slack-poster then posts it, finishing the live message the answer was shown in
 * (§2.5). The user never sees a failure's code or the far side's words: those are logged.
 */

/** What a task or poll message says of its task: the thread to reply in, the request, when it came in. */

/** An outcome that ends the task. */
export type FinalOutcome = Extract<Outcome, { kind: 'success' }> | Failure;

export type SettlementOptions = {
  replies: Queue<RepliesQueueMessage>;
  messages: UserMessages;
  metrics?: PipelineMetrics;
  /** The consuming queue's maxReceiveCount: on that receive the user is still told before the DLQ. */
  maxReceiveCount: number;
  log: Log;
  /** What runs in each thread: a settled task is no longer stoppable. */
  work?: ThreadWork;
  /** The agents, to name the one a task went to in its records (the default when it names none). */
  agent?: ExecutionAgent;
  agents?: AgentDirectory;
  /** Where an answer's files wait for slack-poster (src/verification/files-out/outgoing-files.ts); without it they are named as not shared. */
  outgoingFiles?: OutgoingFiles;
  trace: Tracer;
  clock: Clock;
  /**
   * Told of each task once it is settled (its reply queued): where records and budgets take the
   * usage. A failure here is logged, never the task's: the reply has gone, and a retry would send it twice.
   */
  onSettled?: (task: SettledTask, settled: Settled) => void | Promise<void>;
  /** MAX_TASK_TOKENS: the most one task is charged, whatever its agent reports (src/contract/usage.ts). */
  maxTaskTokens?: number;
};

export type Settlement = {
  /** Counts one call to the agent (`execute_task` or `get_task_result`): how long it took, what came of it; per agent when `agent` is given. */
  counted(stage: 'execute' | 'poll', outcome: AgentOutcome, startedAt: number, agent?: { name: string; protocol: string }): void;
  /**
   * success → the answer, with the notes about what the task went without under it (an answer with
   * nothing visible → the safe apology); failure → the safe text for its category, logged and traced
   * with its code. `details` go into the log line, with the answer's `usage`; the usage is also
   * counted (InputTokens, OutputTokens by agent), and one the agent sent malformed is logged and dropped.
   */
  settle(task: SettledTask, outcome: FinalOutcome, how: { log: Log; notes?: readonly string[]; details?: LogExtra; /** Characters of its answer shown before it failed. */ shown?: number }): Promise<void>;
  /**
   * A task that ends with no reply of its own, stopped by the user (the Stop sent its one final
   * message): `onSettled` is told, so its reservation is given back and its audit record written.
   * `reached`: it reached its agent, so it is charged (`shown`: characters of its answer shown).
   */
  stopped(task: SettledTask, how: { log: Log; agent?: string; reached?: boolean; shown?: number; reported?: Usage }): Promise<void>;
  /** Queues one reply in the task's thread. */
  reply(task: SettledTask, kind: ReplyMessage['kind'], text: string): Promise<void>;
  /**
   * The function's handler, made to end in a reply even when it fails on the last receive: the
   * generic apology (src/verification/settle/last-receive.ts), unless `told` says the handler already
   * replied with the reason.
   */
  lastReceiveApology(handler: DeliveryHandler, stage: 'execute' | 'poll', told?: (error: unknown) => boolean): DeliveryHandler;
};

export function createSettlement(options: SettlementOptions): Settlement {
  const { trace, clock } = options;
  const maxTaskTokens = options.maxTaskTokens ?? DEFAULT_MAX_TASK_TOKENS;

  async function reply(task: SettledTask, kind: ReplyMessage['kind'], text: string, files?: ReplyMessage['files'], steps?: ReplyMessage['steps']): Promise<void> {
    const agent = task.agent ?? options.agent?.name;
    // The answer goes out under the agent's own name and icon, when it has them.
    const persona = agent !== undefined ? options.agents?.persona(agent) : undefined;
    await options.replies.send({
      ...threadOf(task),
      request_id: task.request_id,
      kind,
      text,
      received_at: task.received_at,
      ...(agent !== undefined ? { agent } : {}),
      ...(persona ? { persona: { ...(persona.username ? { username: persona.username } : {}), ...(persona.iconEmoji ? { icon_emoji: persona.iconEmoji } : {}) } } : {}),
      ...(files ? { files } : {}),
      ...(steps ? { steps } : {}),
    });
    trace({ requestId: task.request_id, hop: 'reply-queued', at: clock.now(), detail: { kind, ...(files?.count ? { files: files.count } : {}) } });
  }

  /** Tells `onSettled`; a failure there is logged, never the task's: its reply has gone, and a retry would send it twice. */
  async function told(task: SettledTask, settled: Settled, log: Log): Promise<void> {
    if (!options.onSettled) return;
    try {
      await options.onSettled(task, settled);
    } catch (error) {
      log.warn('a settled task could not be recorded', { ended: settled.ended, error: error as Error });
    }
  }

  return {
    counted(stage, outcome, startedAt, agent) {
      const code = outcome.kind === 'failure' ? outcome.code : undefined;
      // A question leaves the task to go on once answered: counted as a call that is not over yet.
      const kind = outcome.kind === 'input-required' ? 'pending' : outcome.kind;
      options.metrics?.latency(stage, clock.now() - startedAt);
      options.metrics?.outcome(stage, kind, code);
      if (agent) options.metrics?.agentCall(agent.name, agent.protocol, stage, kind, clock.now() - startedAt, code);
    },

    async settle(task, outcome, how) {
      const agent = task.agent ?? options.agent?.name;
      if (outcome.kind === 'success' && outcome.usageDropped) how.log.warn('the agent sent a usage that is not one; the answer stands, its usage is dropped', { usage_problem: outcome.usageDropped.slice(0, 500) });
      // Every task pays: a failure too, and an estimate where the agent said nothing.
      const output = outcome.kind === 'success' ? outcome.text.length : (how.shown ?? 0);
      const usage = chargedUsage(outcome.usage, { input: inputCharsOf(task), output }, maxTaskTokens, how.log);
      if (outcome.usage) options.metrics?.tokens(agent ?? 'default', usage);
      const usageField = outcome.usage ? { usage } : { usage, usage_estimated: true };
      const settled = (ended: Settled['ended']): Promise<void> => told(task, { ended, ...(agent !== undefined ? { agent } : {}), usage, ...(outcome.usage ? {} : { estimated: true }) }, how.log);
      // A task the user stopped has had its one final message (the Stop's): nothing more. The end is
      // claimed once: a Stop that comes after this finds the task settled and leaves the answer whole.
      if (options.work && ((await options.work.isStopped(task.request_id)) || (await options.work.end(task.request_id, 'settled')) === 'stopped')) {
        how.log.info('the task ended after it was stopped; no reply', { outcome: outcome.kind, ...usageField });
        return settled('stopped');
      }
      if (outcome.kind === 'success') {
        how.log.info('task answered', { ...how.details, ...usageField });
        const files = await handOverFiles(options.outgoingFiles, task.request_id, outcome);
        const answer = answerReply(textWithFiles(outcome.text, outcome.files), options.messages);
        await reply(task, answer.kind, answer.kind === 'answer' ? withNotes(answer.text, how.notes) : answer.text, files, outcome.steps && queuedSteps(outcome.steps));
        return settled('answered');
      }
      how.log.warn('task failed', { category: outcome.category, code: outcome.code, error_message: outcome.message, ...how.details });
      trace({ requestId: task.request_id, hop: 'failed', at: clock.now(), detail: { code: outcome.code } });
      await reply(task, 'error', options.messages[userMessageForFailure(outcome.category)]);
      return settled('failed');
    },

    async stopped(task, how) {
      const agent = how.agent ?? task.agent ?? options.agent?.name;
      // Stopped after it reached its agent: charged what its cancel reported (here, or to the Stop: stop-task.ts), clamped; else the estimate of what it was sent and showed.
      const reported = how.reached ? (how.reported ?? (await options.work?.reportedUsage(task.request_id))) : undefined;
      const charge = how.reached ? { usage: chargedUsage(reported, { input: inputCharsOf(task), output: how.shown ?? 0 }, maxTaskTokens, how.log), ...(reported ? {} : { estimated: true }) } : {};
      return told(task, { ended: 'stopped', ...(agent !== undefined ? { agent } : {}), ...charge }, how.log);
    },

    reply,

    lastReceiveApology(handler, stage, told) {
      return withLastReceiveApology(handler, {
        maxReceiveCount: options.maxReceiveCount,
        replies: options.replies,
        apology: options.messages.internalError,
        log: options.log,
        trace,
        clock,
        stage,
        ...(told ? { skip: told } : {}),
        ...(options.metrics ? { metrics: options.metrics } : {}),
      });
    },
  };
}
