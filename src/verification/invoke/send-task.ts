import { askerOf, type ExecuteTaskParams } from '../../contract';
import type { AgentOutcome } from '../../protocols/outcome';
import { FLUSH_RULES, holdMsFor, holdStream, type HoldEnd } from '../live/stream-hold';
import { conversationKey, replyThreadTs } from '../queues/slack-thread';
import { askerCall } from '../queues/asker';
import type { Ready } from './before-send';
import type { ChargedTask, InvokerParts, TaskRun } from './invoker-parts';
import type { TaskInputs } from './task-inputs';

/**
 * agent-invoker's middle step (src/verification/invoke/agent-invoker.ts): the task as the
 * execution zone receives it, then `execute_task` — its stream held while text flows when the
 * answer is shown live (docs/architecture.md §2.5).
 */

/** The characters a task sends its agent: its text and the thread's earlier messages. */
export function inputCharsOf(params: ExecuteTaskParams): number {
  return params.text.length + (params.messages ?? []).reduce((sum, message) => sum + message.text.length, 0);
}

/** A DM's channel id starts with D: the agent's own messages tab, where the user's context applies. */
function isDirectMessage(channel: string): boolean {
  return channel.startsWith('D');
}

/** The execute_task params: the text, where it was asked, the thread and files read for it, what the user looks at. */
export async function taskParams(p: InvokerParts, run: TaskRun, ready: Ready): Promise<{ params: ExecuteTaskParams; inputs: TaskInputs }> {
  const { options } = p;
  const { task } = run;
  const { signal, deadline } = run.context;
  const params: ExecuteTaskParams = {
    text: task.text,
    channel: task.channel,
    thread_ts: replyThreadTs(task),
    correlation_id: task.request_id,
    team_id: task.team_id,
    user_id: task.user_id,
  };
  // Who is asking, as this zone verified it (docs/contract.md, "Who is asking"): only this zone sets it.
  const asker = askerOf(task.team_id, task.user_id, task.enterprise_id);
  if (asker) params.asker = asker;
  const inputs: TaskInputs = options.readInputs ? await options.readInputs(task, { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) }) : { notes: [] };
  if (inputs.messages) params.messages = inputs.messages;
  if (inputs.attachments) params.attachments = inputs.attachments;
  if (options.live) params.stream = true;
  // What the user is looking at, in the agent's DM (app_context_changed): what "this" means.
  const context = options.contexts && isDirectMessage(task.channel) ? await options.contexts.current(task.team_id, task.user_id).catch(() => undefined) : undefined;
  if (context) params.context = { entities: context.entities };
  // Only to an agent configured to get it (`"sendBotToken": true`): never to another party's agent.
  if (options.botTokenForExecution && (ready.agent.sendsBotToken || options.botTokenToTheOneAgent)) params.bot_token = await options.botTokenForExecution.get();
  return { params, inputs };
}

/** What came of sending: the outcome (with the held stream's end, if held), or the user stopped the task meanwhile. */
export type Sent = { kind: 'outcome'; outcome: AgentOutcome; sentAt: number; held?: HoldEnd; holdMs: number; acceptedTraced: boolean } | { kind: 'stopped' };

export async function sendTask(p: InvokerParts, run: TaskRun, ready: Ready, params: ExecuteTaskParams, charged: ChargedTask): Promise<Sent> {
  const { options, clock, trace, settlement } = p;
  const { task, log, delivery } = run;
  const { agent } = ready;
  const sentAt = clock.now();
  trace({
    requestId: task.request_id,
    hop: 'execute-sent',
    at: sentAt,
    detail: { agent: agent.name, transport: agent.transport, protocol: agent.protocol, attempt: delivery.receiveCount, context_messages: params.messages?.length ?? 0, attachments: params.attachments?.length ?? 0 },
  });
  options.metrics?.taskSent(agent.protocol, agent.transport);
  options.metrics?.agentTask(agent.name, agent.protocol);
  // With a questions room the agent may ask (docs/architecture.md, "Questions"); without one a question is a failure.
  const call = { requestId: task.request_id, sessionKey: conversationKey(run.thread), correlationId: task.request_id, signal: run.context.signal, questions: options.questions !== undefined, ...askerCall(task) };
  // Live answers from an agent that streams: the stream is held while text flows (docs/architecture.md §2.5).
  const holdMs = options.live && agent.streams ? holdMsFor(agent.streamHoldMs, clock.now(), run.context.deadline, options.schedule.deadlineSeconds * 1000) : 0;
  if (holdMs <= 0 || !options.live) {
    const outcome: AgentOutcome = await agent.start(params, call);
    settlement.counted('execute', outcome, sentAt, agent);
    return { kind: 'outcome', outcome, sentAt, holdMs, acceptedTraced: false };
  }
  const held = await holdTaskStream(p, run, ready, params, { call, holdMs });
  if (!held.end.outcome) {
    // Stopped by the user while the stream was held: the Stop sent the one final message; cancel in case it had no handle.
    const reported = held.end.handle ? (await agent.cancel(held.end.handle, call)).usage : undefined;
    log.info('the task was stopped while its stream was held; cancelled it', { task_id: held.end.handle?.taskId });
    await settlement.stopped(charged, { log, agent: agent.name, reached: true, shown: held.end.received, ...(reported ? { reported } : {}) });
    return { kind: 'stopped' };
  }
  settlement.counted('execute', held.end.outcome, sentAt, agent);
  return { kind: 'outcome', outcome: held.end.outcome, sentAt, held: held.end, holdMs, acceptedTraced: held.acceptedTraced };
}

/** `execute_task` as a stream, its text shown as it comes, held until the hold's end, the answer's, or a Stop. */
async function holdTaskStream(p: InvokerParts, run: TaskRun, ready: Ready, params: ExecuteTaskParams, how: { call: { requestId: string; sessionKey: string; correlationId: string; signal: AbortSignal | undefined; askerId?: string }; holdMs: number }): Promise<{ end: HoldEnd; acceptedTraced: boolean }> {
  const { options, clock, trace } = p;
  const { task, thread } = run;
  const { agent, target } = ready;
  const live = options.live!;
  const { signal, deadline } = run.context;
  const slackCall = { ...(signal ? { signal } : {}), ...(deadline !== undefined ? { deadline } : {}) };
  let acceptedTraced = false;
  const end = await holdStream((holdSignal) => agent.startStreaming(params, { ...how.call, signal: holdSignal, holdMs: how.holdMs }), {
    before: 0,
    show: async (before, delta) => {
      await live.reply.show(target, before, delta, slackCall);
      if (before === 0) options.metrics?.answerLatency('first-text', agent.name, clock.now() - task.received_at);
      trace({ requestId: task.request_id, hop: 'streamed', at: clock.now(), detail: { chars: before + delta.length } });
    },
    showSteps: (steps) => live.reply.showSteps(target, steps, slackCall),
    ...(options.work ? { stopped: () => options.work!.isStopped(task.request_id) } : {}),
    rules: { ...FLUSH_RULES, quietMs: agent.streamQuietMs },
    // Known from the first text on: a Stop cancels the task with it.
    onHandle: async (handle) => {
      await options.work?.accepted({ request_id: task.request_id, user_id: task.user_id, thread, agent: agent.name, handle });
      trace({ requestId: task.request_id, hop: 'accepted', at: clock.now(), detail: { task_id: handle.taskId, hold_ms: how.holdMs } });
      acceptedTraced = true;
    },
    ...(signal ? { signal } : {}),
  });
  return { end, acceptedTraced };
}
