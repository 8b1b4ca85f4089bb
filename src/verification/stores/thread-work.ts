import type { Clock } from '../../clock';
import type { Usage } from '../../contract';
import type { PendingHandle } from '../../protocols/outcome';
import { conversationKey, type SlackThread } from '../queues/slack-thread';
import type { Records } from './records';
import { STATE_KEYS } from './state-keys';

/**
 * What runs in a thread, so a Stop can find it (docs/architecture.md §2.6, "Stop"). agent-invoker
 * records a task when it picks it up and its handle once the agent accepts it; slack-poster marks
 * it done when its final message is out. A Stop records itself too: the task it stopped is
 * `stopped` (every function then leaves it alone), and a task of the thread asked before the
 * click but not picked up yet is dropped when it is.
 */
export type ThreadTask = {
  request_id: string;
  user_id: string;
  /** The user's message: where the task's reply goes. */
  thread: SlackThread;
  state: 'working' | 'done';
  /** Once the agent accepted the task: what cancels it. */
  handle?: PendingHandle;
  /** The execution agent the task went to: the thread's agent, which its follow-ups stay with. */
  agent?: string;
};

/** How a task ended, claimed once (ThreadWork.end): its reply queued, or stopped by a Stop. */
export type TaskEnd = 'settled' | 'stopped';

/** Longer than any task may run (POLL_DEADLINE_S is at most a few hours). */
const WORK_TTL_SECONDS = 24 * 60 * 60;

export function createThreadWork(records: Records, clock: Clock) {
  const workKey = (thread: SlackThread) => `${STATE_KEYS.work.prefix}${conversationKey(thread)}`;
  const stopKey = (thread: SlackThread) => `${STATE_KEYS.stop.prefix}${conversationKey(thread)}`;
  const stoppedKey = (requestId: string) => `${STATE_KEYS.stopped.prefix}${requestId}`;
  const endedKey = (requestId: string) => `${STATE_KEYS.ended.prefix}${requestId}`;

  return {
    /** The task picked up in its thread (the newest task of a thread is the one a Stop stops). */
    async started(task: Omit<ThreadTask, 'state'>): Promise<void> {
      await records.put(workKey(task.thread), { ...task, state: 'working' }, WORK_TTL_SECONDS);
    },
    /** The agent accepted the task: a Stop can cancel it with `handle` from now on. */
    async accepted(task: Omit<ThreadTask, 'state'>): Promise<void> {
      await records.putIf(workKey(task.thread), { ...task, state: 'working' }, WORK_TTL_SECONDS, { field: 'request_id', expected: task.request_id });
    },
    /** The task's final message is out: a later Stop finds nothing to stop. */
    async finished(thread: SlackThread, requestId: string): Promise<void> {
      const current = await records.get<ThreadTask>(workKey(thread));
      if (current?.request_id !== requestId) return;
      await records.putIf(workKey(thread), { ...current, state: 'done' }, WORK_TTL_SECONDS, { field: 'request_id', expected: requestId });
    },
    /** The agent the thread's latest task went to, working or done (while the record lives: a day). */
    async agentOf(thread: SlackThread): Promise<string | undefined> {
      return (await records.get<ThreadTask>(workKey(thread)))?.agent;
    },
    /** The thread's latest task, working or done (while the record lives: a day). */
    async latest(thread: SlackThread): Promise<ThreadTask | undefined> {
      return records.get<ThreadTask>(workKey(thread));
    },
    /** The thread's task, if one is working. */
    async working(thread: SlackThread): Promise<ThreadTask | undefined> {
      const current = await records.get<ThreadTask>(workKey(thread));
      return current?.state === 'working' ? current : undefined;
    },
    /** Records a Stop on the thread at `at` (epoch ms). */
    async stopRequested(thread: SlackThread, at: number): Promise<void> {
      await records.put(stopKey(thread), { at }, WORK_TTL_SECONDS);
    },
    /** True when the thread was stopped after `receivedAt`: the task asked then is not run. */
    async stoppedSince(thread: SlackThread, receivedAt: number): Promise<boolean> {
      const stop = await records.get<{ at: number }>(stopKey(thread));
      return stop !== undefined && stop.at >= receivedAt;
    },
    /**
     * Claims how a task ends, once: `settled` (its final outcome is queued as its reply) or
     * `stopped` (a Stop took it first). The first claim wins; a repeat of the same claim (a
     * redelivery) wins again. Resolves with the end that holds (docs/architecture.md §2.6, "Stop races").
     */
    async end(requestId: string, how: TaskEnd): Promise<TaskEnd> {
      if (await records.putIf(endedKey(requestId), { request_id: requestId, how, at: clock.now() }, WORK_TTL_SECONDS, { field: 'request_id', expected: undefined })) return how;
      return (await records.get<{ how: TaskEnd }>(endedKey(requestId)))?.how ?? how;
    },
    async markStopped(requestId: string): Promise<void> {
      await records.put(stoppedKey(requestId), { at: clock.now() }, WORK_TTL_SECONDS);
    },
    async isStopped(requestId: string): Promise<boolean> {
      return (await records.get(stoppedKey(requestId))) !== undefined;
    },
    /**
     * Whether this Stop is the first, since the thread's latest task (`latestRequestId`), to move
     * the thread's idle session out of `processing`: claimed once per thread and task, so 40 Stops
     * on an idle thread make one session-status call, and a later task's Stop makes its own.
     * `release` gives the claim back when Slack's call failed, so the next Stop tries again.
     */
    async sessionEndClaim(thread: SlackThread, latestRequestId: string | undefined): Promise<{ release(): Promise<void> } | undefined> {
      const key = `${STATE_KEYS.sessionEnded.prefix}${conversationKey(thread)}#${latestRequestId ?? 'none'}`;
      const claimed = await records.putIf(key, { request_id: latestRequestId ?? 'none' }, WORK_TTL_SECONDS, { field: 'request_id', expected: undefined });
      // Released: a record that lives one second (an item past its lifetime counts as absent).
      return claimed ? { release: () => records.put(key, { request_id: 'released' }, 1) } : undefined;
    },
    /** The usage the stopped task reported with its cancel (stop-task.ts): what its settlement charges. */
    async cancelReported(requestId: string, usage: Usage): Promise<void> {
      await records.put(stoppedKey(requestId), { at: clock.now(), usage }, WORK_TTL_SECONDS);
    },
    /** What cancelReported kept, if the cancel reported a usage. */
    async reportedUsage(requestId: string): Promise<Usage | undefined> {
      return (await records.get<{ usage?: Usage }>(stoppedKey(requestId)))?.usage;
    },
  };
}

export type ThreadWork = ReturnType<typeof createThreadWork>;
