import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../clock';
import { newRequestId } from '../../contract/request-id';
import { taskLogger, type Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { Queue } from '../../queue/queue';
import type { ReplyQueueMessage, TaskQueueMessage } from '../queues/surface-messages';
import { EVENT_HANDLERS, INTERACTION_HANDLERS } from './intake-table';
import { ignore, type IntakeContext, type IntakeDecision, type IntakeResult, type PromptSettings, type TaskDraft } from './intake';
import { readSlackRequest } from './slack-request';
import { MAX_TASK_FILES, type TaskFile } from '../queues/queue-messages';
import type { RateLimiter } from './rate-limiter';
import type { SecretSource } from '../../secrets/secret-source';
import type { SlackFile } from './slack-event';
import type { BotThreads } from '../stores/bot-threads';
import { verifySlackSignature } from './slack-signature';
import type { ClaimState, ClaimStore } from '../stores/claim-store';
import { EVENT_CLAIM_LEASE_SECONDS } from '../pipeline-settings';
import { noTrace, type Tracer } from '../trace';
import type { UserContexts } from '../surface/user-context';
import { fill, type UserMessages } from '../messages/user-messages';
import type { AgentRoutes } from '../../protocols/agent-routes';
import { routeMessage } from '../routing/agent-routing';

export type IngressRequest = { headers: Readonly<Record<string, string | undefined>>; body: Buffer | string };
export type IngressResponse = { statusCode: number; headers: Record<string, string>; body: string };

export type SlackIngressOptions = {
  signingSecret: SecretSource;
  claims: ClaimStore;
  rateLimiter: RateLimiter;
  /** Tasks, and Stops (agent-invoker holds the execution agent that cancels). */
  tasks: Queue<TaskQueueMessage>;
  /** Replies and notices, and the Slack calls and feedback the intake asks for (slack-poster holds the bot token). */
  replies: Queue<ReplyQueueMessage>;
  messages: UserMessages;
  /** The suggested prompts (AGENT_PROMPTS_JSON). Without them, none are offered. */
  prompts?: PromptSettings;
  /** Where what each user looks at is remembered (app_context_changed), for their next task. */
  contexts?: UserContexts;
  allowedTeamIds?: readonly string[];
  allowedUserIds?: readonly string[];
  allowedChannelIds?: readonly string[];
  maxTextLength: number;
  claimTtlSeconds: number;
  botUserId?: string;
  /**
   * Where the bot has answered: a reply in such a thread is taken without a mention. Without it
   * (THREAD_FOLLOW_UPS=false), every channel message needs a mention.
   */
  threads?: BotThreads;
  /**
   * Where each execution agent answers (EXECUTION_AGENTS): each task is routed here, once, and
   * carries its agent's name (src/verification/routing/agent-routing.ts). Without it, tasks name no agent
   * and go to the default one.
   */
  routes?: AgentRoutes;
  /** The agent each thread's latest task went to (thread-work), so a thread stays with its agent. */
  threadAgents?: { agentOf(thread: TaskDraft['thread']): Promise<string | undefined> };
  log: Log;
  metrics?: PipelineMetrics;
  trace?: Tracer;
  clock?: Clock;
};

const NO_PROMPTS: PromptSettings = { home: [], channel: [] };

const text = (statusCode: number, body: string): IngressResponse => ({ statusCode, headers: { 'Content-Type': 'text/plain' }, body });
const OK = () => text(200, '');

/** A signature mismatch re-reads the signing secret at most this often. */
const SECRET_REFRESH_INTERVAL_MS = 60_000;

/**
 * The slack-events function, for events and interactivity alike (one URL): verify the signature,
 * read the request, look up its handler in the intake table (src/verification/intake/), claim it,
 * enqueue what the handler asked for, acknowledge. A task also passes the allow-lists, the rate
 * limit and the length check here. No Slack API call and no execution-zone call happen here, so
 * it answers well inside Slack's 3 seconds; anything that needs Slack goes through a queue.
 */
export function createSlackIngress(options: SlackIngressOptions): (request: IngressRequest) => Promise<IngressResponse> {
  const clock = options.clock ?? systemClock;
  const trace = options.trace ?? noTrace;
  const lists = {
    team: options.allowedTeamIds && new Set(options.allowedTeamIds),
    user: options.allowedUserIds && new Set(options.allowedUserIds),
    channel: options.allowedChannelIds && new Set(options.allowedChannelIds),
  };

  let lastRefreshAt = -Infinity;
  async function verified(request: IngressRequest): Promise<boolean> {
    const input = {
      timestamp: header(request, 'x-slack-request-timestamp'),
      signature: header(request, 'x-slack-signature'),
      rawBody: request.body,
      nowSeconds: Math.floor(clock.now() / 1000),
    };
    const first = verifySlackSignature({ ...input, secret: await options.signingSecret.get() });
    if (first.ok) return true;
    // A mismatch may mean the secret was rotated since we cached it: read it once more — at most
    // once a minute, so a flood of forged requests costs neither a Secrets Manager bill nor an outage.
    if (first.reason === 'mismatch' && input.nowSeconds * 1000 - lastRefreshAt >= SECRET_REFRESH_INTERVAL_MS) {
      lastRefreshAt = input.nowSeconds * 1000;
      try {
        const second = verifySlackSignature({ ...input, secret: await options.signingSecret.refresh() });
        if (second.ok) return true;
      } catch (error) {
        options.log.warn('could not re-read the signing secret; the request is refused', { error: error as Error });
      }
    }
    options.log.warn('refused a request with a bad Slack signature', { reason: first.reason });
    options.metrics?.refused(`signature-${first.reason}`);
    return false;
  }

  const intakeContext = (now: number): IntakeContext => ({
    ...(options.botUserId ? { botUserId: options.botUserId } : {}),
    ...(options.threads ? { threads: options.threads } : {}),
    prompts: options.prompts ?? NO_PROMPTS,
    log: options.log,
    now,
  });

  return async function handle(request) {
    const started = clock.now();
    if (!(await verified(request))) return text(401, 'invalid signature');

    // Verify → read → look up the handler → claim → enqueue → ack (docs/architecture.md §2.6).
    const read = readSlackRequest(request.body, header(request, 'content-type'));
    if (read.kind === 'url-verification') return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ challenge: read.challenge }) };
    if (read.kind === 'unreadable') {
      options.log.warn('acknowledged a signed request the intake cannot read', { why: read.why });
      return OK();
    }
    const what = read.kind === 'event' ? read.envelope.event.type : read.payload.type;
    const log = read.kind === 'event' ? taskLogger(options.log, { event_id: read.envelope.event_id }) : options.log;
    let decision: IntakeDecision;
    try {
      if (read.kind === 'event') {
        const handler = EVENT_HANDLERS[read.envelope.event.type];
        decision = handler ? await handler(read.envelope, intakeContext(started)) : ignore('event-type');
      } else {
        const handler = INTERACTION_HANDLERS[read.payload.type];
        if (!handler) {
          // Slack would retry an error: a payload type we do not take is acknowledged, and said.
          log.warn('acknowledged an interactivity payload of a type the intake does not take', { type: read.payload.type });
          return OK();
        }
        decision = await handler(read.payload, intakeContext(started));
      }
    } catch (error) {
      log.error('could not decide on the request; asking Slack to retry', { type: what, error: error as Error });
      return text(500, 'temporarily unavailable');
    }
    if (decision.kind === 'ignore') {
      log.debug('ignored event', { reason: decision.reason, type: what });
      return OK();
    }
    // The allow-lists hold for Stops, clicks, forms and contexts as for messages: from outside them, nothing changes.
    const outside = decision.results.filter((result) => !withinAllowLists(result));
    if (outside.length) {
      for (const result of outside) options.metrics?.refused(`not-allowed-${result.kind}`);
      log.info('ignored a request from outside the allow-lists', { type: what, results: outside.map((result) => result.kind) });
      decision = { ...decision, results: decision.results.filter(withinAllowLists) };
      if (decision.results.length === 0) return OK();
    }

    // Claim first: a Slack retry (same event_id, same click) is acknowledged here without doing the work twice.
    const { claimKey } = decision;
    const token = randomUUID();
    let claim: ClaimState;
    try {
      // The request id is stored with the claim: a retry that takes over a dead delivery's claim
      // sends the same task again (the same id), never a second one.
      claim = await options.claims.acquire(claimKey, { token, leaseSeconds: EVENT_CLAIM_LEASE_SECONDS, ttlSeconds: options.claimTtlSeconds, value: newRequestId() });
    } catch (error) {
      log.error('could not claim the event; asking Slack to retry', { error: error as Error });
      return text(500, 'temporarily unavailable');
    }
    const retry = { retry_num: header(request, 'x-slack-retry-num'), retry_reason: header(request, 'x-slack-retry-reason') };
    if (claim.status === 'done') {
      log.info('duplicate event acknowledged', retry);
      return OK();
    }
    if (claim.status === 'busy') {
      // An earlier delivery is still on it. Not 2xx: if that delivery dies, Slack comes back after
      // its lease and this event is not lost.
      log.info('event is being handled by an earlier delivery; asking Slack to retry later', { ...retry, lease_ends_at: new Date(claim.leaseEndsAt).toISOString() });
      return text(503, 'in progress');
    }
    if (claim.takenOver) log.warn('took over the claim of an earlier delivery that did not finish', retry);

    const requestId = claim.value ?? newRequestId();
    const eventId = read.kind === 'event' ? read.envelope.event_id : claimKey;
    try {
      for (const result of decision.results) await enqueue(result, { requestId, eventId, started, log });
    } catch (error) {
      // Nothing (or not all) was queued: give the claim back so Slack's retry can succeed at once.
      // If even that fails, the lease runs out before Slack's next retry.
      await options.claims.release(claimKey, token).catch((releaseError: unknown) => log.error('could not release the event claim', { error: releaseError as Error }));
      log.error('could not queue the event; asking Slack to retry', { error: error as Error });
      return text(500, 'temporarily unavailable');
    }
    // Queued: from here on a retry is a duplicate. If marking it fails, a later retry takes the
    // claim over and queues the same request id again, which the rest of the pipeline dedupes.
    await options.claims
      .complete(claimKey, token, { ttlSeconds: options.claimTtlSeconds })
      .then((kept) => kept || log.warn('the event claim was taken over while this delivery queued it; the same request id goes twice and is deduplicated downstream'))
      .catch((error: unknown) => log.error('could not mark the event claim done; a Slack retry may queue the same request id again', { error: error as Error }));
    options.metrics?.latency('ack', clock.now() - started);
    return OK();
  };

  /** One thing the handler asked for, where it goes: a queue, or the record of what the user looks at. */
  async function enqueue(result: IntakeResult, at: { requestId: string; eventId: string; started: number; log: Log }): Promise<void> {
    switch (result.kind) {
      case 'task':
        return enqueueTask(result.task, at);
      case 'stop':
        trace({ requestId: at.requestId, hop: 'stop', at: clock.now(), detail: { channel: result.thread.channel, thread_ts: result.thread.thread_ts } });
        await options.tasks.send({ ...result.thread, kind: 'stop', event_id: at.eventId, user_id: result.user, stopped_at: result.at, ...(result.streamingTs.length ? { streaming_ts: result.streamingTs } : {}) }, { attributes: { event_id: at.eventId } });
        at.log.info('Stop queued', { channel: result.thread.channel, thread_ts: result.thread.thread_ts });
        return;
      case 'slack':
        await options.replies.send({ kind: 'action', id: at.eventId, action: result.action });
        at.log.info('Slack action queued', { type: result.action.type });
        return;
      case 'feedback':
        await options.replies.send({ kind: 'feedback', ...result.feedback, clicked_at: at.started });
        at.log.info('feedback queued', { request_id: result.feedback.request_id, value: result.feedback.value, comment: result.feedback.comment !== undefined });
        return;
      case 'context':
        if (!options.contexts) return;
        await options.contexts.remember(result.context.team_id, result.context.user, { entities: result.context.entities });
        return;
    }
  }

  async function enqueueTask(draft: TaskDraft, at: { requestId: string; eventId: string; started: number; log: Log }): Promise<void> {
    const { requestId, eventId, started } = at;
    const thread = draft.thread;
    const files = draft.files?.slice(0, MAX_TASK_FILES).map(taskFileOf);
    const taskLog = taskLogger(at.log, { request_id: requestId, correlation_id: requestId });
    trace({ requestId, hop: 'ingress', at: started, detail: { event_id: eventId, user: draft.user, channel: thread.channel, ts: thread.ts, thread_ts: thread.thread_ts } });
    const routed = options.routes ? routeMessage(options.routes, { channel: thread.channel, text: draft.text, ...(await threadAgentOf(thread, taskLog)) }) : undefined;
    // A message of files alone is still a question about them.
    const taskText = (routed ? routed.text : draft.text) || (files?.length ? options.messages.filesWithoutText : '');

    const found = await refusalFor(thread.team_id, draft.user, thread.channel, taskText, { at: started, eventId });
    // A reply without a mention may not have been meant for the bot at all: never answer it with a
    // refusal in front of the people talking (not allowed, too long, slow down).
    const refusal = found && draft.followUp ? 'silent' : found;
    if (refusal === 'silent') {
      trace({ requestId, hop: 'refused', at: clock.now(), detail: { replied: false } });
    } else if (refusal) {
      await options.replies.send({ ...thread, request_id: requestId, kind: 'notice', text: refusal.text, received_at: started });
      options.metrics?.refused(refusal.reason);
      taskLog.info('event refused with a notice', { reason: refusal.reason });
      trace({ requestId, hop: 'refused', at: clock.now(), detail: { reason: refusal.reason } });
    } else {
      // Traced before the send: an in-memory consumer may start on the task before send returns.
      trace({ requestId, hop: 'queued', at: clock.now(), ...(routed ? { detail: { agent: routed.agent, routed_by: routed.by } } : {}) });
      await options.tasks.send(
        {
          ...thread,
          request_id: requestId,
          event_id: eventId,
          user_id: draft.user,
          text: taskText,
          received_at: started,
          ...(files?.length ? { files } : {}),
          ...(draft.botUserId ? { bot_user_id: draft.botUserId } : {}),
          ...(draft.followUp ? { follow_up: true } : {}),
          ...(routed ? { agent: routed.agent } : {}),
        },
        { attributes: { request_id: requestId, event_id: eventId } },
      );
      taskLog.info('task queued', { text_length: taskText.length, files: files?.length ?? 0, follow_up: draft.followUp ?? false, ...(routed ? { agent: routed.agent, routed_by: routed.by } : {}) });
    }
  }

  /**
   * The agent the thread's latest task went to: read only for a message in a thread, and only when
   * there is more than one agent to choose from. A failed read routes the message without it.
   */
  async function threadAgentOf(thread: TaskDraft['thread'], log: Log): Promise<{ threadAgent?: string }> {
    if (!thread.thread_ts || !options.threadAgents || (options.routes?.agents.length ?? 0) < 2) return {};
    try {
      const agent = await options.threadAgents.agentOf(thread);
      return agent ? { threadAgent: agent } : {};
    } catch (error) {
      log.warn("could not read the thread's agent; routing the message by its channel", { error: error as Error });
      return {};
    }
  }

  /**
   * Whether a Stop, a click, a form or a context comes from within the team, user and channel
   * allow-lists. Tasks are checked with their notice in `refusalFor`; Slack calls the intake makes
   * itself (prompts) follow the event that asked for them.
   */
  function withinAllowLists(result: IntakeResult): boolean {
    const who = whoOf(result);
    if (!who) return true;
    return !((lists.team && !lists.team.has(who.team)) || (lists.user && !lists.user.has(who.user)) || (lists.channel && who.channel !== undefined && !lists.channel.has(who.channel)));
  }

  /** A notice to send instead of a task, 'silent' for a refusal already announced, or undefined to go ahead. */
  async function refusalFor(teamId: string, userId: string, channel: string, taskText: string, { at, eventId }: { at: number; eventId: string }): Promise<{ reason: string; text: string } | 'silent' | undefined> {
    const notAllowed = (lists.team && !lists.team.has(teamId)) || (lists.user && !lists.user.has(userId)) || (lists.channel && !lists.channel.has(channel));
    if (notAllowed) {
      const window = Math.floor(at / 60_000);
      const first = await options.claims.mark(`notice#not-allowed#${teamId}#${userId}#${window}`, 120);
      return first ? { reason: 'not-allowed', text: options.messages.notAllowed } : 'silent';
    }
    const rate = await options.rateLimiter.check({ teamId, userId }, at, eventId);
    if (!rate.allowed) return rate.firstRefusalInWindow ? { reason: 'rate-limited', text: options.messages.rateLimited } : 'silent';
    if (!taskText) return { reason: 'empty', text: options.messages.emptyText };
    if (taskText.length > options.maxTextLength) return { reason: 'too-long', text: fill(options.messages.tooLong, { limit: options.maxTextLength }) };
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

function header(request: IngressRequest, name: string): string | undefined {
  const direct = request.headers[name];
  if (direct !== undefined) return direct;
  const found = Object.keys(request.headers).find((key) => key.toLowerCase() === name);
  return found ? request.headers[found] : undefined;
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
    case 'task':
    case 'slack':
      return undefined;
  }
}
