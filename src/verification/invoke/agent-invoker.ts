import { systemClock } from '../../clock';
import type { ExecuteTaskParams } from '../../contract';
import { taskLogger } from '../../observability/logger';
import type { DeliveryHandler, Queue } from '../../queue/queue';
import { agentNamed, personaFor } from '../routing/agent-directory';
import type { FollowUpOptions } from '../follow-up-options';
import { pollDelaySeconds } from '../poll/poll-schedule';
import { parseQueueMessage } from '../queues/poison-message';
import { TaskMessageSchema, conversationKey, replyThreadTs, threadOf, type SlackThread, type TaskMessage } from '../queues/queue-messages';
import { createSettlement } from '../settle/settle-outcome';
import { kindOf } from '../queues/surface-messages';
import { createStopTask } from '../stop/stop-task';
import type { SlackAssistant } from '../../slack/slack-assistant';
import type { UserContexts } from '../surface/user-context';
import { liveTargetOf } from '../live/live-reply';
import type { SecretSource } from '../../secrets/secret-source';
import type { TaskInputs } from './task-inputs';
import { noTrace } from '../trace';
import type { Outcome } from '../../protocols/outcome';
import { delayAfterHold, FLUSH_RULES, holdMsFor, holdStream, type HoldEnd } from '../live/stream-hold';
import type { Admission, UsageLedger } from '../budgets/usage-ledger';
import { requeueForSession, waitsForSession } from './session-busy';

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
};

/** How long a task near a budget waits for the one in flight before its message is retried (SQS). */
const BUDGET_WAIT_MS = 20_000;

/** The characters a task sends its agent: its text and the thread's earlier messages. */
function inputCharsOf(params: ExecuteTaskParams): number {
  return params.text.length + (params.messages ?? []).reduce((sum, message) => sum + message.text.length, 0);
}

/** A DM's channel id starts with D: the agent's own messages tab, where the user's context applies. */
function isDirectMessage(channel: string): boolean {
  return channel.startsWith('D');
}

/** The sign of life gets at most this long: it must not hold up the task. */
const SIGN_OF_LIFE_BUDGET_MS = 3_000;

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

/**
 * The agent-invoker function: one task message → one `execute_task` through the agent it names
 * (routed by slack-events; the default agent when it names none).
 * success → reply; pending → first poll message; permanent failure → safe error reply;
 * transient failure → SQS retry, and on the last receive the user is told.
 */
export function createAgentInvoker(options: AgentInvokerOptions): DeliveryHandler {
  const clock = options.clock ?? systemClock;
  const trace = options.trace ?? noTrace;
  const settlement = createSettlement({ ...options, trace, clock });

  const stopTask = options.work ? createStopTask({ ...options, work: options.work, ...(options.session ? { session: options.session } : {}) }) : undefined;

  /** Asks the budget, and while a task in flight holds the room near a limit, asks again as it settles (bounded by the function's time). */
  async function admitted(budget: Pick<UsageLedger, 'admit'>, task: TaskMessage, agent: string, call: { signal?: AbortSignal; deadline?: number }, lastReceive: boolean): Promise<Admission> {
    const until = Math.min(clock.now() + BUDGET_WAIT_MS, (call.deadline ?? Infinity) - 10_000);
    for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
      // The last look of this receive; on the message's last receive it refuses rather than leave the task to the DLQ.
      const final = clock.now() + wait > until || Boolean(call.signal?.aborted);
      const admission = await budget.admit(task, agent, lastReceive && final);
      if (admission.admitted !== 'later' || final) return admission;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /**
   * A budget's refusal, quietly (docs/operations.md, "Usage, budgets and the audit trail"): the
   * first message of a new thread is answered in it — that thread has nothing else — while in a
   * thread under way only the user is told, by an ephemeral, once per scope and day there; the
   * rest go unanswered rather than fill the channel with notices.
   */
  async function refuseQuietly(budget: Pick<UsageLedger, 'firstRefusalNotice'>, task: TaskMessage, refused: Extract<Admission, { admitted: false }>): Promise<void> {
    if (!(await budget.firstRefusalNotice(task, refused.scope))) return;
    if (!task.thread_ts) return settlement.reply(task, 'notice', refused.notice);
    await options.replies.send({ kind: 'action', id: task.request_id, action: { type: 'ephemeral', channel: task.channel, user: task.user_id, text: refused.notice, thread_ts: task.thread_ts } });
  }

  const invoke: DeliveryHandler = async (delivery, { signal, deadline }) => {
    // The tasks queue carries Stops too (docs/architecture.md §2.6): this function holds the agent that cancels.
    if (kindOf(delivery.body) === 'stop') {
      if (stopTask) return stopTask(delivery.body, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) });
      options.log.warn('a Stop arrived but this deployment keeps no record of running tasks; ignored');
      return;
    }
    const task = parseQueueMessage(TaskMessageSchema, delivery.body, 'task message');
    // Every line names the agent the task went to (a message without one: the default's).
    const log = taskLogger(options.log, { request_id: task.request_id, correlation_id: task.request_id, event_id: task.event_id, agent: task.agent ?? options.agent.name });
    const thread = threadOf(task);
    let target = liveTargetOf(task);
    // Stopped before it was picked up: the user pressed Stop after asking (docs/architecture.md §2.6, "Stop").
    if (options.work && (await options.work.stoppedSince(thread, task.received_at))) {
      log.info('the thread was stopped after this task was asked; not sending it');
      options.metrics?.stopped('before-start');
      await options.work.markStopped(task.request_id);
      await settlement.reply(task, 'stopped', options.messages.stopped);
      return settlement.stopped(task, { log });
    }
    // The agent slack-events routed the task to; a task of a version before routing names none: the default.
    const agent = agentNamed(options, task.agent);
    if (!agent) {
      log.warn('the task names an execution agent that is no longer configured; telling the user', { agent: task.agent });
      trace({ requestId: task.request_id, hop: 'failed', at: clock.now(), detail: { code: 'agent-removed', agent: task.agent } });
      return settlement.reply(task, 'error', options.messages.agentRemoved);
    }
    target = { ...target, ...personaFor(options, agent) };
    if (options.budget) {
      const admission = await admitted(options.budget, task, agent.name, { signal, deadline }, delivery.receiveCount >= options.maxReceiveCount);
      if (admission.admitted === false) {
        trace({ requestId: task.request_id, hop: 'budget-refused', at: clock.now(), detail: { scope: admission.scope, limit: admission.limit, used: admission.used } });
        return refuseQuietly(options.budget, task, admission);
      }
      if (admission.admitted === 'later') throw new RetryableTaskError('near a daily token budget with a task in flight; retried');
    }
    await options.work?.started({ request_id: task.request_id, user_id: task.user_id, thread, agent: agent.name });
    if (delivery.receiveCount === 1 && !task.requeued) {
      // A sign of life first, before anything slow: the agent session (processing, with a Stop
      // button), else the status under the thread, else the live message.
      if (options.live) {
        const shown = await options.live.reply.signOfLife(target, { ...(signal ? { signal } : {}), deadline: Math.min(deadline ?? Infinity, clock.now() + SIGN_OF_LIFE_BUDGET_MS) }, { title: task.text });
        trace({ requestId: task.request_id, hop: 'sign-of-life', at: clock.now(), detail: { how: shown } });
        options.metrics?.answerLatency('first-sign', agent.name, clock.now() - task.received_at);
      }
      if (options.onTaskStarted) await options.onTaskStarted(thread).catch((error: unknown) => log.warn('could not mark the task as started', { error: error as Error }));
    }
    const params: ExecuteTaskParams = {
      text: task.text,
      channel: task.channel,
      thread_ts: replyThreadTs(task),
      correlation_id: task.request_id,
      team_id: task.team_id,
      user_id: task.user_id,
    };
    // Read afresh on every receive: the execution zone keys a task by its request id, not by its context.
    const inputs: TaskInputs = options.readInputs ? await options.readInputs(task, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) }) : { notes: [] };
    if (inputs.messages) params.messages = inputs.messages;
    if (inputs.attachments) params.attachments = inputs.attachments;
    if (options.live) params.stream = true;
    // What the user is looking at, in the agent's DM (app_context_changed): what "this" means.
    const context = options.contexts && isDirectMessage(task.channel) ? await options.contexts.current(task.team_id, task.user_id).catch(() => undefined) : undefined;
    if (context) params.context = { entities: context.entities };
    // Only to an agent configured to get it (`"sendBotToken": true`): never to another party's agent.
    if (options.botTokenForExecution && (agent.sendsBotToken || options.botTokenToTheOneAgent)) params.bot_token = await options.botTokenForExecution.get();

    // What the agent is sent, in characters: the charge's estimate when it reports no usage (src/verification/budgets/task-charge.ts).
    const charged = { ...task, input_chars: inputCharsOf(params) };
    const sentAt = clock.now();
    trace({
      requestId: task.request_id,
      hop: 'execute-sent',
      at: sentAt,
      detail: { agent: agent.name, transport: agent.transport, protocol: agent.protocol, attempt: delivery.receiveCount, context_messages: inputs.messages?.length ?? 0, attachments: inputs.attachments?.length ?? 0 },
    });
    options.metrics?.taskSent(agent.protocol, agent.transport);
    options.metrics?.agentTask(agent.name, agent.protocol);
    const call = { requestId: task.request_id, sessionKey: conversationKey(thread), correlationId: task.request_id, signal };
    const slackCall = { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) };
    // Live answers from an agent that streams: the stream is held while text flows (docs/architecture.md §2.5).
    const holdMs = options.live && agent.streams ? holdMsFor(agent.streamHoldMs, clock.now(), deadline, options.schedule.deadlineSeconds * 1000) : 0;
    let held: HoldEnd | undefined;
    let outcome: Outcome;
    let acceptedTraced = false;
    if (holdMs > 0 && options.live) {
      const live = options.live;
      held = await holdStream((holdSignal) => agent.startStreaming(params, { ...call, signal: holdSignal, holdMs }), {
        before: 0,
        show: async (before, delta) => {
          await live.reply.show(target, before, delta, slackCall);
          if (before === 0) options.metrics?.answerLatency('first-text', agent.name, clock.now() - task.received_at);
          trace({ requestId: task.request_id, hop: 'streamed', at: clock.now(), detail: { chars: before + delta.length } });
        },
        ...(options.work ? { stopped: () => options.work!.isStopped(task.request_id) } : {}),
        rules: { ...FLUSH_RULES, quietMs: agent.streamQuietMs },
        // Known from the first text on: a Stop cancels the task with it.
        onHandle: async (handle) => {
          await options.work?.accepted({ request_id: task.request_id, user_id: task.user_id, thread, agent: agent.name, handle });
          trace({ requestId: task.request_id, hop: 'accepted', at: clock.now(), detail: { task_id: handle.taskId, hold_ms: holdMs } });
          acceptedTraced = true;
        },
        ...(signal ? { signal } : {}),
      });
      if (!held.outcome) {
        // Stopped by the user while the stream was held: the Stop sent the one final message; cancel in case it had no handle.
        if (held.handle) await agent.cancel(held.handle, call);
        log.info('the task was stopped while its stream was held; cancelled it', { task_id: held.handle?.taskId });
        return settlement.stopped(charged, { log, agent: agent.name, reached: true, shown: held.received });
      }
      outcome = held.outcome;
    } else {
      outcome = await agent.start(params, call);
    }
    settlement.counted('execute', outcome, sentAt, agent);

    switch (outcome.kind) {
      case 'success':
        return settlement.settle(charged, outcome, { log, notes: inputs.notes, details: { duration_ms: clock.now() - sentAt } });
      case 'pending': {
        if (options.work) {
          // A Stop that came while execute_task was on its way had no handle to cancel with: cancel now.
          if (await options.work.isStopped(task.request_id)) {
            const failure = await agent.cancel(outcome.handle, call);
            log.info('the task was stopped while it was being sent; cancelled it', { task_id: outcome.handle.taskId, cancelled: failure === undefined });
            return settlement.stopped(charged, { log, agent: agent.name, reached: true, shown: outcome.partial?.length ?? 0 });
          }
          if (!held) await options.work.accepted({ request_id: task.request_id, user_id: task.user_id, thread, agent: agent.name, handle: outcome.handle });
        }
        // A held stream showed its text as it came; otherwise the text the answer brought is shown now.
        const streamed = held ? held.received : (outcome.partial?.length ?? 0);
        if (!held && outcome.partial && options.live) {
          await options.live.reply.show(target, 0, outcome.partial, slackCall);
          options.metrics?.answerLatency('first-text', agent.name, clock.now() - task.received_at);
          trace({ requestId: task.request_id, hop: 'streamed', at: clock.now(), detail: { chars: streamed } });
        }
        // While text flows, the next look comes soon (at once after a whole hold: it holds again); otherwise the usual backoff.
        const delaySeconds = held ? delayAfterHold(held, holdMs, { flowingSeconds: options.live?.pollDelaySeconds ?? 0, quietSeconds: pollDelaySeconds(options.schedule, 0) }) : streamed > 0 && options.live ? options.live.pollDelaySeconds : pollDelaySeconds(options.schedule, 0);
        await options.polls.send(
          {
            ...thread,
            request_id: task.request_id,
            event_id: task.event_id,
            user_id: task.user_id,
            handle: outcome.handle,
            attempt: 0,
            // The poll deadline counts from when the task was sent when its stream was held.
            accepted_at: held ? sentAt : clock.now(),
            received_at: task.received_at,
            // Every poll and the cancel go to the agent that accepted it, whatever the configuration says later.
            agent: agent.name,
            ...(inputs.notes.length ? { notes: inputs.notes } : {}),
            ...(streamed > 0 ? { streamed, since_text: held && !held.texted ? 1 : 0 } : {}),
            input_chars: charged.input_chars,
          },
          { delaySeconds, attributes: { request_id: task.request_id } },
        );
        log.info('task accepted; first poll queued', { task_id: outcome.handle.taskId, delay_seconds: delaySeconds, ...(held ? { held_ms: Math.round(held.heldMs), streamed } : {}) });
        if (!acceptedTraced) trace({ requestId: task.request_id, hop: 'accepted', at: clock.now(), detail: { task_id: outcome.handle.taskId, next_poll_s: delaySeconds } });
        return;
      }
      case 'failure':
        // Its session serves another call of the thread: it waits its turn, spending no receive, telling no one.
        if (options.tasks && waitsForSession(outcome, task)) {
          const requeued = await requeueForSession(options.tasks, task);
          log.info('the AgentCore session is busy with another call; the task waits its turn', { requeued });
          trace({ requestId: task.request_id, hop: 'retry', at: clock.now(), detail: { code: outcome.code, requeued } });
          return;
        }
        if (outcome.retryable && delivery.receiveCount < options.maxReceiveCount) {
          log.warn('transient failure; the task will be retried', { category: outcome.category, code: outcome.code, error_message: outcome.message, receive_count: delivery.receiveCount });
          trace({ requestId: task.request_id, hop: 'retry', at: clock.now(), detail: { code: outcome.code, receive_count: delivery.receiveCount } });
          throw new RetryableTaskError(`transient failure ${outcome.code}`);
        }
        // A permanent failure, or a transient one on the last receive: the user is told the specific
        // reason now. A transient one still fails the record, so the DLQ keeps it.
        await settlement.settle(charged, outcome, { log, details: { receive_count: delivery.receiveCount }, shown: held?.received ?? 0 });
        if (outcome.retryable) throw new RetryableTaskError(`giving up after ${delivery.receiveCount} attempts: ${outcome.code}`, true);
    }
  };

  // A retryable failure on the last receive has already replied with its reason; only unexpected
  // errors (poison bodies, queue outages) need the generic apology.
  return settlement.lastReceiveApology(invoke, 'execute', (error) => error instanceof RetryableTaskError && error.userNotified);
}
