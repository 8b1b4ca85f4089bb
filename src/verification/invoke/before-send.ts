import type { Guardrail } from '../../guardrail/guardrail';
import type { ExecutionAgent } from '../../protocols/execution-agent';
import type { Admission, UsageLedger } from '../budgets/usage-ledger';
import { liveTargetOf, type LiveTarget } from '../live/live-parts';
import { agentNamed, personaFor } from '../routing/agent-directory';
import type { TaskMessage } from '../queues/tasks-queue';
import { RetryableTaskError, type InvokerParts, type TaskRun } from './invoker-parts';

/**
 * agent-invoker's first step (src/verification/invoke/agent-invoker.ts): is the task still to be
 * sent, to which agent, within budget — and once it is, a sign of life for the user.
 */

/** How long a task near a budget waits for the one in flight before its message is retried (SQS). */
const BUDGET_WAIT_MS = 20_000;

/** The sign of life gets at most this long: it must not hold up the task. */
const SIGN_OF_LIFE_BUDGET_MS = 3_000;

/** A task ready to go: the agent it goes to, and where its live answer shows (as that agent). */
export type Ready = { agent: ExecutionAgent; target: LiveTarget };

/** The agent and live target when the task is to be sent now; undefined when this step ended it (stopped, agent gone, over budget). Throws to retry later. */
export async function readyToSend(p: InvokerParts, run: TaskRun): Promise<Ready | undefined> {
  const { options, clock, trace, settlement } = p;
  const { task, thread, log, delivery } = run;
  // Stopped before it was picked up: the user pressed Stop after asking (docs/architecture.md §2.6, "Stop").
  if (options.work && (await options.work.stoppedSince(thread, task.received_at))) {
    log.info('the thread was stopped after this task was asked; not sending it');
    options.metrics?.stopped('before-start');
    await options.work.markStopped(task.request_id);
    await settlement.reply(task, 'stopped', options.messages.stopped);
    await settlement.stopped(task, { log });
    return undefined;
  }
  // The agent slack-events routed the task to; a task of a version before routing names none: the default.
  const agent = agentNamed(options, task.agent);
  if (!agent) {
    log.warn('the task names an execution agent that is no longer configured; telling the user', { agent: task.agent });
    trace({ requestId: task.request_id, hop: 'failed', at: clock.now(), detail: { code: 'agent-removed', agent: task.agent } });
    await settlement.reply(task, 'error', options.messages.agentRemoved);
    return undefined;
  }
  const target: LiveTarget = { ...liveTargetOf(task), ...personaFor(options, agent) };
  if (options.budget) {
    const admission = await admitted(p, options.budget, run, agent.name, delivery.receiveCount >= options.maxReceiveCount);
    if (admission.admitted === false) {
      trace({ requestId: task.request_id, hop: 'budget-refused', at: clock.now(), detail: { scope: admission.scope, limit: admission.limit, used: admission.used } });
      await refuseQuietly(p, options.budget, task, admission);
      return undefined;
    }
    if (admission.admitted === 'later') throw new RetryableTaskError('near a daily token budget with a task in flight; retried');
  }
  await options.work?.started({ request_id: task.request_id, user_id: task.user_id, thread, agent: agent.name });
  if (delivery.receiveCount === 1 && !task.requeued) await signOfLife(p, run, agent, target);
  return { agent, target };
}

/**
 * A budget's refusal, quietly (docs/operations.md, "Usage, budgets and the audit trail"): the
 * first message of a new thread is answered in it — that thread has nothing else — while in a
 * thread under way only the user is told, by an ephemeral, once per scope and day there; the
 * rest go unanswered rather than fill the channel with notices.
 */
async function refuseQuietly(p: InvokerParts, budget: Pick<UsageLedger, 'firstRefusalNotice'>, task: TaskMessage, refused: Extract<Admission, { admitted: false }>): Promise<void> {
  if (!(await budget.firstRefusalNotice(task, refused.scope))) return;
  if (!task.thread_ts) return p.settlement.reply(task, 'notice', refused.notice);
  await p.options.replies.send({ kind: 'action', id: task.request_id, action: { type: 'ephemeral', channel: task.channel, user: task.user_id, text: refused.notice, thread_ts: task.thread_ts } });
}

/** Asks the budget, and while a task in flight holds the room near a limit, asks again as it settles (bounded by the function's time). */
async function admitted(p: InvokerParts, budget: Pick<UsageLedger, 'admit'>, run: TaskRun, agent: string, lastReceive: boolean): Promise<Admission> {
  const { clock } = p;
  const { signal, deadline } = run.context;
  const until = Math.min(clock.now() + BUDGET_WAIT_MS, (deadline ?? Infinity) - 10_000);
  for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
    // The last look of this receive; on the message's last receive it refuses rather than leave the task to the DLQ.
    const final = clock.now() + wait > until || Boolean(signal?.aborted);
    const admission = await budget.admit(run.task, agent, lastReceive && final);
    if (admission.admitted !== 'later' || final) return admission;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/**
 * A sign of life first, before anything slow: the agent session (processing, with a Stop button),
 * else the status under the thread, else the live message. Then the 👀 reaction, where asked for.
 */
async function signOfLife(p: InvokerParts, run: TaskRun, agent: ExecutionAgent, target: LiveTarget): Promise<void> {
  const { options, clock, trace } = p;
  const { task, log } = run;
  const { signal, deadline } = run.context;
  if (options.live) {
    const title = options.guardrail ? await guardedTitle(options.guardrail, task.text, signal) : task.text;
    const shown = await options.live.reply.signOfLife(target, { ...(signal ? { signal } : {}), deadline: Math.min(deadline ?? Infinity, clock.now() + SIGN_OF_LIFE_BUDGET_MS) }, title ? { title } : {});
    trace({ requestId: task.request_id, hop: 'sign-of-life', at: clock.now(), detail: { how: shown } });
    options.metrics?.answerLatency('first-sign', agent.name, clock.now() - task.received_at);
  }
  if (options.onTaskStarted) await options.onTaskStarted(run.thread).catch((error: unknown) => log.warn('could not mark the task as started', { error: error as Error }));
}

/**
 * The session's title is the question as Slack shows it: with a guardrail, masked as an answer is
 * (GUARDRAIL_OUTPUT_MODE), and none when the text is blocked or cannot be checked in time.
 */
async function guardedTitle(guardrail: Guardrail, text: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  try {
    const checked = await guardrail.check(text, 'output', { remainingMs: SIGN_OF_LIFE_BUDGET_MS, ...(signal ? { signal } : {}) });
    return checked.action === 'blocked' ? undefined : checked.text;
  } catch {
    return undefined;
  }
}
