import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock';
import { newRequestId } from '../contract/request-id';
import { taskLogger, type Log } from '../observability/logger';
import type { PipelineMetrics } from '../observability/metrics';
import type { Queue } from '../queue/queue';
import { MAX_TASK_FILES, conversationOf, threadOf, type ReplyMessage, type TaskFile, type TaskMessage } from './queue-messages';
import type { RateLimiter } from './rate-limiter';
import type { SecretSource } from '../secrets/secret-source';
import { classifyEvent, SlackEnvelopeSchema, type SlackFile } from './slack-event';
import type { BotThreads } from './stores/bot-threads';
import { verifySlackSignature } from './slack-signature';
import type { ClaimState, ClaimStore } from './stores/claim-store';
import { EVENT_CLAIM_LEASE_SECONDS } from './pipeline-settings';
import { noTrace, type Tracer } from './trace';
import { fill, type UserMessages } from './user-messages';

export type IngressRequest = { headers: Readonly<Record<string, string | undefined>>; body: Buffer | string };
export type IngressResponse = { statusCode: number; headers: Record<string, string>; body: string };

export type SlackIngressOptions = {
  signingSecret: SecretSource;
  claims: ClaimStore;
  rateLimiter: RateLimiter;
  tasks: Queue<TaskMessage>;
  replies: Queue<ReplyMessage>;
  messages: UserMessages;
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
  log: Log;
  metrics?: PipelineMetrics;
  trace?: Tracer;
  clock?: Clock;
};

const text = (statusCode: number, body: string): IngressResponse => ({ statusCode, headers: { 'Content-Type': 'text/plain' }, body });
const OK = () => text(200, '');

/** A signature mismatch re-reads the signing secret at most this often. */
const SECRET_REFRESH_INTERVAL_MS = 60_000;

/**
 * The slack-events function: verify, filter, authorize, rate-limit, claim the event id, enqueue,
 * acknowledge. No Slack API call and no execution-zone call happen here, so it answers well
 * inside Slack's 3 seconds; anything that needs Slack goes through the replies queue.
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

  return async function handle(request) {
    const started = clock.now();
    if (!(await verified(request))) return text(401, 'invalid signature');

    let envelope;
    try {
      envelope = SlackEnvelopeSchema.parse(JSON.parse(request.body.toString()));
    } catch {
      options.log.warn('acknowledged a signed payload that is not a known Slack event envelope');
      return OK();
    }
    if (envelope.type === 'url_verification') return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ challenge: envelope.challenge }) };

    const log = taskLogger(options.log, { event_id: envelope.event_id });
    const decision = classifyEvent(envelope, options.botUserId);
    if (decision.kind === 'ignore') {
      log.debug('ignored event', { reason: decision.reason, type: envelope.event.type });
      return OK();
    }
    const thread = threadOf({ team_id: envelope.team_id, ...decision });
    if (decision.followUp) {
      if (!options.threads) {
        log.debug('ignored event', { reason: 'follow-ups-off', type: envelope.event.type });
        return OK();
      }
      let answeredThere: boolean;
      try {
        // A follow-up is a reply in a thread: its conversation is that thread.
        answeredThere = await options.threads.has(conversationOf(thread));
      } catch (error) {
        log.error('could not look up the thread; asking Slack to retry', { error: error as Error });
        return text(500, 'temporarily unavailable');
      }
      if (!answeredThere) {
        log.debug('ignored event', { reason: 'not-in-bot-thread', type: envelope.event.type });
        return OK();
      }
    }

    // Claim first: a Slack retry (same event_id) is acknowledged here without a second task or reply.
    const claimKey = `event#${envelope.event_id}`;
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
    const files = decision.files?.slice(0, MAX_TASK_FILES).map(taskFileOf);
    // A message of files alone is still a question about them.
    const taskText = decision.text || (files?.length ? options.messages.filesWithoutText : '');
    const taskLog = taskLogger(log, { request_id: requestId, correlation_id: requestId });
    trace({ requestId, hop: 'ingress', at: started, detail: { event_id: envelope.event_id, user: decision.user, channel: decision.channel, ts: decision.ts, thread_ts: decision.thread_ts } });

    try {
      const found = await refusalFor(envelope.team_id, decision.user, decision.channel, taskText, started);
      // A reply without a mention may not have been meant for the bot at all: never answer it with a
      // refusal in front of the people talking (not allowed, too long, slow down).
      const refusal = found && decision.followUp ? 'silent' : found;
      if (refusal === 'silent') {
        trace({ requestId, hop: 'refused', at: clock.now(), detail: { replied: false } });
      } else if (refusal) {
        await options.replies.send({ ...thread, request_id: requestId, kind: 'notice', text: refusal.text, received_at: started });
        options.metrics?.refused(refusal.reason);
        taskLog.info('event refused with a notice', { reason: refusal.reason });
        trace({ requestId, hop: 'refused', at: clock.now(), detail: { reason: refusal.reason } });
      } else {
        // Traced before the send: an in-memory consumer may start on the task before send returns.
        trace({ requestId, hop: 'queued', at: clock.now() });
        await options.tasks.send(
          {
            ...thread,
            request_id: requestId,
            event_id: envelope.event_id,
            user_id: decision.user,
            text: taskText,
            received_at: started,
            ...(files?.length ? { files } : {}),
            ...(decision.botUserId ? { bot_user_id: decision.botUserId } : {}),
            ...(decision.followUp ? { follow_up: true } : {}),
          },
          { attributes: { request_id: requestId, event_id: envelope.event_id } },
        );
        taskLog.info('task queued', { text_length: taskText.length, files: files?.length ?? 0, follow_up: decision.followUp ?? false });
      }
    } catch (error) {
      // Nothing was queued: give the claim back so Slack's retry can succeed at once. If even that
      // fails, the lease runs out before Slack's next retry.
      await options.claims.release(claimKey, token).catch((releaseError: unknown) => taskLog.error('could not release the event claim', { error: releaseError as Error }));
      taskLog.error('could not queue the event; asking Slack to retry', { error: error as Error });
      return text(500, 'temporarily unavailable');
    }
    // Queued: from here on a retry is a duplicate. If marking it fails, a later retry takes the
    // claim over and queues the same request id again, which the rest of the pipeline dedupes.
    await options.claims
      .complete(claimKey, token, { ttlSeconds: options.claimTtlSeconds })
      .then((kept) => kept || taskLog.warn('the event claim was taken over while this delivery queued it; the same request id goes twice and is deduplicated downstream'))
      .catch((error: unknown) => taskLog.error('could not mark the event claim done; a Slack retry may queue the same request id again', { error: error as Error }));
    options.metrics?.latency('ack', clock.now() - started);
    return OK();
  };

  /** A notice to send instead of a task, 'silent' for a refusal already announced, or undefined to go ahead. */
  async function refusalFor(teamId: string, userId: string, channel: string, taskText: string, at: number): Promise<{ reason: string; text: string } | 'silent' | undefined> {
    const notAllowed = (lists.team && !lists.team.has(teamId)) || (lists.user && !lists.user.has(userId)) || (lists.channel && !lists.channel.has(channel));
    if (notAllowed) {
      const window = Math.floor(at / 60_000);
      const first = await options.claims.mark(`notice#not-allowed#${teamId}#${userId}#${window}`, 120);
      return first ? { reason: 'not-allowed', text: options.messages.notAllowed } : 'silent';
    }
    const rate = await options.rateLimiter.check({ teamId, userId }, at);
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
