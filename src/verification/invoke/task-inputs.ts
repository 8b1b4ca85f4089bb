import { systemClock, type Clock } from '../../clock';
import type { Attachment, ThreadMessage } from '../../contract';
import type { Log } from '../../observability/logger';
import type { SlackConversations } from '../../slack/slack-conversations';
import type { SlackCallOptions } from '../../slack/slack-port';
import type { TaskMessage } from '../queues/tasks-queue';
import type { AttachmentLimits } from './attachment-limits';
import { taskFiles } from './task-files';
import { threadContext, type ThreadContextLimits } from './thread-context';
import { fill, type UserMessages } from '../messages/user-messages';

export type TaskInputReading = {
  slack: SlackConversations;
  thread: ThreadContextLimits & { maxPages: number };
  attachments: AttachmentLimits;
  /** The time the thread read and the downloads may take together (SLACK_READ_BUDGET_MS). */
  budgetMs: number;
  messages: UserMessages;
  log: Log;
};

export type TaskInputs = {
  messages?: ThreadMessage[];
  attachments?: Attachment[];
  /** What the user is told under the answer: what the task went without, and why. */
  notes: string[];
};

/**
 * What a task carries besides its text (docs/contract.md, "Thread context", "Attachments"): the
 * thread's earlier messages and the files shared with it, read from Slack by the invoker, at once
 * and within a budget — at most a third of the time the invocation has left, so the call to the
 * execution zone keeps the rest. A read that fails or runs out of time costs the context or the
 * file, never the answer.
 */
export async function readTaskInputs(task: TaskMessage, reading: TaskInputReading, call: SlackCallOptions, clock: Clock = systemClock): Promise<TaskInputs> {
  const start = clock.now();
  const share = call.deadline === undefined ? reading.budgetMs : Math.min(reading.budgetMs, (call.deadline - start) / 3);
  const deadline = start + Math.max(0, share);
  const timeout = AbortSignal.timeout(Math.max(1, Math.floor(share)));
  const options: SlackCallOptions = { deadline, signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout };
  const notes: string[] = [];

  const readThread = async (): Promise<ThreadMessage[] | undefined> => {
    if (!task.thread_ts || reading.thread.maxMessages <= 0) return undefined;
    try {
      const read = await reading.slack.readThread({ channel: task.channel, threadTs: task.thread_ts, before: task.ts }, { maxPages: reading.thread.maxPages, keepNewest: reading.thread.maxMessages }, options);
      const context = threadContext(read.messages, task.bot_user_id, reading.thread);
      // Say what the model did not see, truthfully: the older part of a long thread, or — when the
      // read stopped early — its newest part.
      if (!read.complete) notes.push(fill(reading.messages.threadPartial, { kept: context.messages.length }));
      else if (context.leftOut > 0 || read.read > read.messages.length) notes.push(fill(reading.messages.threadTrimmed, { kept: context.messages.length }));
      return context.messages;
    } catch (error) {
      reading.log.warn('could not read the thread; the task goes without its earlier messages', { error_message: (error as Error).message, code: (error as { code?: string }).code });
      notes.push(reading.messages.threadUnread);
      return undefined;
    }
  };
  const readFiles = async () => (task.files?.length ? taskFiles(task.files, { slack: reading.slack, limits: reading.attachments, log: reading.log }, options) : undefined);

  const [messages, files] = await Promise.all([readThread(), readFiles()]);
  if (files?.skipped.length) {
    const list = files.skipped.map((file) => `${file.name.replace(/[`*_~<>]/g, '')} (${file.reason})`).join('; ');
    notes.push(fill(reading.messages.filesSkipped, { files: list }));
  }
  return {
    ...(messages?.length ? { messages } : {}),
    ...(files?.attachments.length ? { attachments: files.attachments } : {}),
    notes,
  };
}
