import type { AgentCoreSessionStopPolicy } from './agentcore-session-stop-setting';
import type { Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { Queue } from '../../queue/queue';
import { agentNamed, type AgentChoice } from '../routing/agent-directory';
import type { PollsQueueMessage, SessionCheck } from '../queues/polls-queue';
import { conversationKey, threadOf, type SlackThread } from '../queues/slack-thread';
import type { Settled, SettledTask } from '../settle/settled';
import type { ThreadWork } from '../stores/thread-work';

export type AgentCoreSessionStopOptions = AgentChoice & {
  policy: AgentCoreSessionStopPolicy;
  work: ThreadWork;
  /** Where a delayed check goes (async-result reads it). */
  polls: Queue<PollsQueueMessage>;
  log: Log;
  metrics?: PipelineMetrics;
};

export function createAgentCoreSessionStop(options: AgentCoreSessionStopOptions) {
  const { policy, work, log } = options;

  /** Ends the session unless a newer task of the thread came (it would still use it: its own end decides). */
  async function stopIfQuiet(thread: SlackThread, requestId: string, agentName: string | undefined, when: 'after-answer' | 'quiet', call: { signal?: AbortSignal } = {}): Promise<void> {
    const agent = agentNamed(options, agentName);
    if (!agent?.stopsSessions) return;
    const latest = await work.latest(thread);
    if (latest && latest.request_id !== requestId) {
      log.debug('a newer task uses the thread\'s session; not ending it', { request_id: requestId, newer: latest.request_id });
      return;
    }
    const failure = await agent.stopSession({ requestId, sessionKey: conversationKey(thread), ...(call.signal ? { signal: call.signal } : {}) });
    if (failure) {
      // The idle timeout ends it anyway: a failed Stop costs idle memory, never an answer.
      log.warn('StopRuntimeSession failed; the idle timeout will end the session', { request_id: requestId, agent: agent.name, code: failure.kind === 'failure' ? failure.code : undefined });
      return;
    }
    log.info('agent session ended', { request_id: requestId, agent: agent.name, when });
    options.metrics?.sessionEnded(agent.name, when);
  }

  return {
    /** FollowUpOptions.onSettled: a task ended; end its session now, or check again after the quiet. */
    async settled(task: SettledTask, settled: Settled): Promise<void> {
      if (policy.kind === 'never') return;
      if (!agentNamed(options, settled.agent ?? task.agent)?.stopsSessions) return;
      const thread = threadOf(task);
      if (policy.kind === 'after-answer') return stopIfQuiet(thread, task.request_id, settled.agent ?? task.agent, 'after-answer');
      const check: SessionCheck = { kind: 'session-check', ...thread, request_id: task.request_id, ...((settled.agent ?? task.agent) ? { agent: settled.agent ?? task.agent } : {}) };
      await options.polls.send(check, { delaySeconds: policy.seconds, attributes: { request_id: task.request_id } });
    },

    /**
     * async-result's handler for a delayed check. Never fails the message: a failed check costs
     * idle memory until the idle timeout, while a failed message would end, on its last receive,
     * in an apology to the user for a task that was answered.
     */
    async check(check: SessionCheck, call: { signal?: AbortSignal } = {}): Promise<void> {
      try {
        await stopIfQuiet(threadOf(check), check.request_id, check.agent, 'quiet', call);
      } catch (error) {
        log.warn('a session check failed; the idle timeout will end the session', { error: error as Error });
      }
    },
  };
}

export type AgentCoreSessionStop = ReturnType<typeof createAgentCoreSessionStop>;
