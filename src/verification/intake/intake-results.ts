import type { Clock } from '../../clock';
import { taskLogger, type Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { AgentRoutes } from '../../protocols/agent-routes';
import type { Queue } from '../../queue/queue';
import { routeMessage } from '../routing/agent-routing';
import { fill, type UserMessages } from '../messages/user-messages';
import type { RepliesQueueMessage } from '../queues/replies-queue';
import { MAX_TASK_FILES, type TaskFile } from '../queues/task-file';
import type { TasksQueueMessage } from '../queues/tasks-queue';
import type { UserContexts } from '../surface/user-context';
import type { ClaimStore } from '../stores/claim-store';
import type { Tracer } from '../trace';
import type { IntakeResult, TaskDraft } from './intake';
import type { RateLimiter } from './rate-limiter';
import type { SlackFile } from './slack-event';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * slack-events' last step before the ack (src/verification/intake/slack-ingress.ts): what an
 * intake handler asked for goes where it belongs — a task (after the allow-lists, the rate limit
 * and the length check; routed to its execution agent) or a Stop to the tasks queue, a Slack call
 * or feedback to the replies queue, what a user looks at to its record.
 */
export type IntakeDestinations = {
  tasks: Queue<TasksQueueMessage>;
  replies: Queue<RepliesQueueMessage>;
  claims: ClaimStore;
  rateLimiter: RateLimiter;
  messages: UserMessages;
  contexts?: UserContexts;
  /** The allow-lists, as sets; absent: everyone. */
  allowed: { team?: ReadonlySet<string>; user?: ReadonlySet<string>; channel?: ReadonlySet<string> };
  maxTextLength: number;
  routes?: AgentRoutes;
  threadAgents?: { agentOf(thread: TaskDraft['thread']): Promise<string | undefined> };
  metrics?: PipelineMetrics;
  trace: Tracer;
  clock: Clock;
};

/** Where and when the request was taken: the request id its claim holds, the event, the ack's start. */
export type IntakeAt = { requestId: string; eventId: string; started: number; log: Log };

export async function deliverIntakeResult(to: IntakeDestinations, result: IntakeResult, at: IntakeAt): Promise<void> {
  switch (result.kind) {
    case 'task':
      return deliverTask(to, result.task, at);
    case 'stop':
      to.trace({ requestId: at.requestId, hop: 'stop', at: to.clock.now(), detail: { channel: result.thread.channel, thread_ts: result.thread.thread_ts } });
      await to.tasks.send({ ...result.thread, kind: 'stop', event_id: at.eventId, user_id: result.user, stopped_at: result.at, ...(result.streamingTs.length ? { streaming_ts: result.streamingTs } : {}) }, { attributes: { event_id: at.eventId } });
      at.log.info('Stop queued', { channel: result.thread.channel, thread_ts: result.thread.thread_ts });
      return;
    case 'slack':
      await to.replies.send({ kind: 'action', id: at.eventId, action: result.action });
      at.log.info('Slack action queued', { type: result.action.type });
      return;
    case 'feedback':
      await to.replies.send({ kind: 'feedback', ...result.feedback, clicked_at: at.started });
      at.log.info('feedback queued', { request_id: result.feedback.request_id, value: result.feedback.value, comment: result.feedback.comment !== undefined });
      return;
    case 'answer':
      await to.tasks.send({ kind: 'answer', event_id: at.eventId, ...result.answer }, { attributes: { request_id: result.answer.request_id, event_id: at.eventId } });
      at.log.info('answer to a question queued', { request_id: result.answer.request_id, round: result.answer.round });
      return;
    case 'context':
      if (!to.contexts) return;
      await to.contexts.remember(result.context.team_id, result.context.user, { entities: result.context.entities });
      return;
  }
}

async function deliverTask(to: IntakeDestinations, draft: TaskDraft, at: IntakeAt): Promise<void> {
  const { requestId, eventId, started } = at;
  const thread = draft.thread;
  const files = draft.files?.slice(0, MAX_TASK_FILES).map(taskFileOf);
  const taskLog = taskLogger(at.log, { request_id: requestId, correlation_id: requestId });
  to.trace({ requestId, hop: 'ingress', at: started, detail: { event_id: eventId, user: draft.user, channel: thread.channel, ts: thread.ts, thread_ts: thread.thread_ts } });
  const routed = to.routes ? routeMessage(to.routes, { channel: thread.channel, text: draft.text, ...(await threadAgentOf(to, thread, taskLog)) }) : undefined;
  // A message of files alone is still a question about them.
  const taskText = (routed ? routed.text : draft.text) || (files?.length ? to.messages.filesWithoutText : '');

  const found = await refusalFor(to, { teamId: thread.team_id, userId: draft.user, channel: thread.channel, taskText }, { at: started, eventId });
  // A reply without a mention may not have been meant for the bot at all: never answer it with a
  // refusal in front of the people talking (not allowed, too long, slow down).
  const refusal = found && draft.followUp ? 'silent' : found;
  if (refusal === 'silent') {
    to.trace({ requestId, hop: 'refused', at: to.clock.now(), detail: { replied: false } });
    return;
  }
  if (refusal) {
    await to.replies.send({ ...thread, request_id: requestId, kind: 'notice', text: refusal.text, received_at: started });
    to.metrics?.refused(refusal.reason);
    taskLog.info('event refused with a notice', { reason: refusal.reason });
    to.trace({ requestId, hop: 'refused', at: to.clock.now(), detail: { reason: refusal.reason } });
    return;
  }
  // Traced before the send: an in-memory consumer may start on the task before send returns.
  to.trace({ requestId, hop: 'queued', at: to.clock.now(), ...(routed ? { detail: { agent: routed.agent, routed_by: routed.by } } : {}) });
  await to.tasks.send(
    {
      ...thread,
      request_id: requestId,
      event_id: eventId,
      user_id: draft.user,
      text: taskText,
      received_at: started,
      ...(files?.length ? { files } : {}),
      ...(draft.botUserId ? { bot_user_id: draft.botUserId } : {}),
      ...(draft.enterpriseId ? { enterprise_id: draft.enterpriseId } : {}),
      ...(draft.followUp ? { follow_up: true } : {}),
      ...(routed ? { agent: routed.agent } : {}),
    },
    { attributes: { request_id: requestId, event_id: eventId } },
  );
  taskLog.info('task queued', { text_length: taskText.length, files: files?.length ?? 0, follow_up: draft.followUp ?? false, ...(routed ? { agent: routed.agent, routed_by: routed.by } : {}) });
}

/**
 * The agent the thread's latest task went to: read only for a message in a thread, and only when
 * there is more than one agent to choose from. A failed read routes the message without it.
 */
async function threadAgentOf(to: IntakeDestinations, thread: TaskDraft['thread'], log: Log): Promise<{ threadAgent?: string }> {
  if (!thread.thread_ts || !to.threadAgents || (to.routes?.agents.length ?? 0) < 2) return {};
  try {
    const agent = await to.threadAgents.agentOf(thread);
    return agent ? { threadAgent: agent } : {};
  } catch (error) {
    log.warn("could not read the thread's agent; routing the message by its channel", { error: error as Error });
    return {};
  }
}

type Asker = { teamId: string; userId: string; channel: string; taskText: string };

/** A notice to send instead of a task, 'silent' for a refusal already announced, or undefined to go ahead. */
async function refusalFor(to: IntakeDestinations, asker: Asker, { at, eventId }: { at: number; eventId: string }): Promise<{ reason: string; text: string } | 'silent' | undefined> {
  const { teamId, userId, channel, taskText } = asker;
  const { team, user, channel: channels } = to.allowed;
  const notAllowed = (team && !team.has(teamId)) || (user && !user.has(userId)) || (channels && !channels.has(channel));
  if (notAllowed) {
    const window = Math.floor(at / 60_000);
    const first = await to.claims.mark(`${STATE_KEYS.notice.prefix}not-allowed#${teamId}#${userId}#${window}`, 120);
    return first ? { reason: 'not-allowed', text: to.messages.notAllowed } : 'silent';
  }
  const rate = await to.rateLimiter.check({ teamId, userId }, at, eventId);
  if (!rate.allowed) return rate.firstRefusalInWindow ? { reason: 'rate-limited', text: to.messages.rateLimited } : 'silent';
  if (!taskText) return { reason: 'empty', text: to.messages.emptyText };
  if (taskText.length > to.maxTextLength) return { reason: 'too-long', text: fill(to.messages.tooLong, { limit: to.maxTextLength }) };
  return undefined;
}

/**
 * Whether a Stop, a click, a form or a context comes from within the team, user and channel
 * allow-lists. Tasks are checked with their notice in `refusalFor`; Slack calls the intake makes
 * itself (prompts) follow the event that asked for them.
 */
export function withinAllowLists(to: Pick<IntakeDestinations, 'allowed'>, result: IntakeResult): boolean {
  const who = whoOf(result);
  if (!who) return true;
  const { team, user, channel } = to.allowed;
  return !((team && !team.has(who.team)) || (user && !user.has(who.user)) || (channel && who.channel !== undefined && !channel.has(who.channel)));
}

/** Who a result acts for, and where: what the allow-lists are checked against (undefined: checked elsewhere). */
function whoOf(result: IntakeResult): { team: string; user: string; channel?: string } | undefined {
  switch (result.kind) {
    case 'stop':
      return { team: result.thread.team_id, user: result.user, channel: result.thread.channel };
    case 'feedback':
      return { team: result.feedback.team_id, user: result.feedback.user, channel: result.feedback.channel };
    case 'context':
      return { team: result.context.team_id, user: result.context.user };
    case 'answer':
      return { team: result.answer.team_id, user: result.answer.user_id, ...(result.answer.channel ? { channel: result.answer.channel } : {}) };
    case 'task':
    case 'slack':
      return undefined;
  }
}

/** What the invoker needs of a shared file to fetch it; a deleted or hidden file has no URL. */
function taskFileOf(file: SlackFile): TaskFile {
  const url = file.mode === 'tombstone' || file.mode === 'hidden_by_limit' ? undefined : (file.url_private_download ?? file.url_private);
  return {
    id: file.id,
    name: file.name ?? file.title ?? file.id,
    mimetype: file.mimetype ?? '',
    ...(file.filetype ? { filetype: file.filetype } : {}),
    size: Math.max(0, file.size ?? 0),
    ...(url ? { url } : {}),
  };
}
