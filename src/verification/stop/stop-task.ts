import { systemClock } from '../../clock';
import type { FunctionServices } from '../function-services';
import type { ExecutionAgent } from '../../protocols/execution-agent';
import type { Queue } from '../../queue/queue';
import type { SlackAssistant } from '../../slack/slack-assistant';
import type { StopMessage } from '../queues/tasks-queue';
import { agentNamed, type AgentDirectory } from '../routing/agent-directory';
import { conversationKey, replyThreadTs, threadOf } from '../queues/slack-thread';
import { askerCall } from '../queues/asker';
import { type ReplyMessage } from '../queues/replies-queue';
import type { ThreadWork } from '../stores/thread-work';
import { noTrace } from '../trace';
import type { UserMessages } from '../messages/user-messages';

export type StopTaskOptions = FunctionServices & {
  /** The default agent; `agents` holds the others: the task is cancelled through the one it went to. */
  agent: ExecutionAgent;
  agents?: AgentDirectory;
  work: ThreadWork;
  replies: Queue<ReplyMessage>;
  messages: UserMessages;
  /** Moves a session with nothing running out of `processing` (its Stop button goes); tells a refused Stop's user why. */
  session?: Pick<SlackAssistant, 'setSessionStatus'> & Partial<Pick<SlackAssistant, 'postEphemeral'>>;
  /** STOP_ADMIN_USERS: who may stop anyone's task; everyone else, only their own. */
  stopAdmins?: ReadonlySet<string>;
  /** A task that waits on a question: its pause closes and its buttons go (src/verification/questions/close-on-stop.ts). */
  closeQuestion?: (requestId: string) => Promise<void>;
};

/**
 * A Stop pressed on a thread's agent session (docs/architecture.md §2.6, "Stop"), in agent-invoker,
 * which holds the execution agent. Taken only from the user who asked the thread's latest task, or
 * one on STOP_ADMIN_USERS; anyone else gets a short ephemeral and nothing changes. Then:
 * - the Stop is recorded on the thread, so a task asked before it and not picked up yet is dropped
 *   when it is (with the note);
 * - the thread's working task is marked stopped — agent-invoker and async-result then neither show
 *   its text nor reply for it — and cancelled through the zone contract (`cancel_task`, or A2A's
 *   cancel) on the conversation's session, so the executor aborts its model call. A task still in
 *   its `execute_task` call has no handle yet: the invoker cancels it when the call returns;
 * - its one final message is the `stopped` reply: slack-poster ends the live message with what was
 *   shown and the note, and moves the session out of `processing`;
 * - a Stop with nothing working is acknowledged, and the session leaves `processing`.
 * Every step may be repeated (a redelivered Stop): cancel is idempotent, and the reply's chunk
 * claim lets one final message out.
 */
export function createStopTask(options: StopTaskOptions) {
  const trace = options.trace ?? noTrace;
  const clock = options.clock ?? systemClock;
  return async (stop: StopMessage, call: { signal?: AbortSignal; deadline?: number }): Promise<void> => {
    const thread = threadOf(stop);
    // Only the one who asked (or an admin) stops a task: anyone else is told, and nothing changes.
    const latest = await options.work.latest(thread);
    if (latest && latest.user_id !== stop.user_id && !options.stopAdmins?.has(stop.user_id)) {
      options.log.info('Stop refused: pressed by someone other than the one who asked', { request_id: latest.request_id, user: stop.user_id });
      options.metrics?.stopped('refused');
      trace({ requestId: latest.request_id, hop: 'stop-refused', at: clock.now(), detail: { user: stop.user_id } });
      await options.session
        ?.postEphemeral?.({ channel: stop.channel, user: stop.user_id, text: options.messages.stopNotYours, threadTs: replyThreadTs(stop) }, call)
        .catch((error: unknown) => options.log.warn('could not tell the user their Stop was refused', { error: error as Error }));
      return;
    }
    await options.work.stopRequested(thread, stop.stopped_at);
    const task = await options.work.working(thread);
    if (!task) {
      options.log.info('Stop acknowledged: nothing is working in this thread', { channel: stop.channel, thread_ts: replyThreadTs(stop) });
      options.metrics?.stopped('idle');
      // Once per thread and task: many Stops on an idle thread make one session-status call.
      const claim = options.session && (await options.work.sessionEndClaim(thread, latest?.request_id));
      if (!claim) return;
      await options.session!.setSessionStatus({ channel: stop.channel, threadTs: replyThreadTs(stop), status: 'active' }, call).catch(async (error: unknown) => {
        options.log.warn('could not move the session out of processing', { error: error as Error });
        await claim.release();
      });
      return;
    }
    const log = options.log;
    // A task whose final outcome is already queued as its reply has ended: the answer goes out whole, once.
    if ((await options.work.end(task.request_id, 'stopped')) === 'settled') {
      log.info('Stop acknowledged: the task had already ended; its answer is posted whole', { request_id: task.request_id });
      options.metrics?.stopped('idle');
      return;
    }
    await options.work.markStopped(task.request_id);
    trace({ requestId: task.request_id, hop: 'stop', at: clock.now(), detail: { user: stop.user_id, cancels: task.handle ? 'cancel_task' : 'when the call returns' } });
    const agent = agentNamed(options, task.agent);
    if (task.handle && !agent) log.warn('the task was accepted by an execution agent that is no longer configured; it is not cancelled', { request_id: task.request_id, agent: task.agent });
    if (task.handle && agent) {
      const { failure, usage } = await agent.cancel(task.handle, { requestId: task.request_id, sessionKey: conversationKey(task.thread), correlationId: task.request_id, ...(call.signal ? { signal: call.signal } : {}), ...askerCall({ team_id: task.thread.team_id, user_id: task.user_id }) });
      // What the task used until the Stop: its settlement charges it rather than an estimate.
      if (usage) await options.work.cancelReported(task.request_id, usage);
      if (failure) log.warn('cancel_task failed after a Stop; the execution zone will expire the task', { request_id: task.request_id, code: failure.kind === 'failure' ? failure.code : undefined });
      else log.info('task cancelled after a Stop', { request_id: task.request_id, task_id: task.handle.taskId });
    }
    options.metrics?.stopped('cancelled');
    await options.closeQuestion?.(task.request_id);
    await options.replies.send({ ...task.thread, request_id: task.request_id, kind: 'stopped', text: options.messages.stopped, ...(task.agent ? { agent: task.agent } : {}) });
    trace({ requestId: task.request_id, hop: 'reply-queued', at: clock.now(), detail: { kind: 'stopped' } });
  };
}
