import { systemClock } from '../../clock';
import { newRequestId } from '../../contract/request-id';
import { taskLogger, type Log } from '../../observability/logger';
import type { PipelineMetrics } from '../../observability/metrics';
import type { Queue } from '../../queue/queue';
import type { AgentRoutes } from '../../protocols/agent-routes';
import type { SecretSource } from '../../secrets/secret-source';
import type { Clock } from '../../clock';
import type { RepliesQueueMessage } from '../queues/replies-queue';
import type { TasksQueueMessage } from '../queues/tasks-queue';
import type { BotThreads } from '../stores/bot-threads';
import type { ClaimStore } from '../stores/claim-store';
import { once } from '../stores/once';
import { EVENT_CLAIM_LEASE_SECONDS } from '../pipeline-settings';
import { noTrace, type Tracer } from '../trace';
import type { UserContexts } from '../surface/user-context';
import type { UserMessages } from '../messages/user-messages';
import { EVENT_HANDLERS, INTERACTION_HANDLERS } from './intake-table';
import { ignore, type IntakeContext, type IntakeDecision, type TaskDraft } from './intake';
import type { PromptSettings } from '../surface/suggested-prompts';
import { deliverIntakeResult, withinAllowLists, type IntakeDestinations } from './intake-results';
import type { RateLimiter } from './rate-limiter';
import { createSignatureCheck } from './signature-check';
import { header, readSlackRequest, type IngressRequest, type IngressResponse, type SlackRequest } from './slack-request';

export type { IngressRequest, IngressResponse };

export type SlackIngressOptions = {
  signingSecret: SecretSource;
  claims: ClaimStore;
  rateLimiter: RateLimiter;
  /** Tasks, and Stops (agent-invoker holds the execution agent that cancels). */
  tasks: Queue<TasksQueueMessage>;
  /** Replies and notices, and the Slack calls and feedback the intake asks for (slack-poster holds the bot token). */
  replies: Queue<RepliesQueueMessage>;
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
const UNAVAILABLE = () => text(500, 'temporarily unavailable');

/**
 * The slack-events function, for events and interactivity alike (one URL): verify the signature,
 * read the request, look up its handler in the intake table (src/verification/intake/), claim it,
 * enqueue what the handler asked for, acknowledge (docs/architecture.md §2.6). A task also passes
 * the allow-lists, the rate limit and the length check here. No Slack API call and no
 * execution-zone call happen here, so it answers well inside Slack's 3 seconds; anything that needs
 * Slack goes through a queue.
 */
export function createSlackIngress(options: SlackIngressOptions): (request: IngressRequest) => Promise<IngressResponse> {
  const clock = options.clock ?? systemClock;
  const verified = createSignatureCheck({ ...options, clock });
  const destinations: IntakeDestinations = {
    ...options,
    allowed: {
      ...(options.allowedTeamIds ? { team: new Set(options.allowedTeamIds) } : {}),
      ...(options.allowedUserIds ? { user: new Set(options.allowedUserIds) } : {}),
      ...(options.allowedChannelIds ? { channel: new Set(options.allowedChannelIds) } : {}),
    },
    trace: options.trace ?? noTrace,
    clock,
  };
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
    const read = readSlackRequest(request.body, header(request, 'content-type'));
    if (read.kind === 'url-verification') return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ challenge: read.challenge }) };
    if (read.kind === 'unreadable') {
      options.log.warn('acknowledged a signed request the intake cannot read', { why: read.why });
      return OK();
    }
    const log = read.kind === 'event' ? taskLogger(options.log, { event_id: read.envelope.event_id }) : options.log;
    let decision: IntakeDecision | undefined;
    try {
      decision = await decide(read, intakeContext(started), log);
    } catch (error) {
      log.error('could not decide on the request; asking Slack to retry', { type: read.kind === 'event' ? read.envelope.event.type : read.payload.type, error: error as Error });
      return UNAVAILABLE();
    }
    if (!decision) return OK();
    if (decision.kind === 'ignore') {
      log.debug('ignored event', { reason: decision.reason, type: read.kind === 'event' ? read.envelope.event.type : read.payload.type });
      return OK();
    }
    // The allow-lists hold for Stops, clicks, forms and contexts as for messages: from outside them, nothing changes.
    const outside = decision.results.filter((result) => !withinAllowLists(destinations, result));
    if (outside.length) {
      for (const result of outside) options.metrics?.refused(`not-allowed-${result.kind}`);
      log.info('ignored a request from outside the allow-lists', { type: read.kind === 'event' ? read.envelope.event.type : read.payload.type, results: outside.map((result) => result.kind) });
      decision = { ...decision, results: decision.results.filter((result) => withinAllowLists(destinations, result)) };
      if (decision.results.length === 0) return OK();
    }
    return claimAndDeliver(decision, { eventId: read.kind === 'event' ? read.envelope.event_id : decision.claimKey, started, log, retry: { retry_num: header(request, 'x-slack-retry-num'), retry_reason: header(request, 'x-slack-retry-reason') } });
  };

  /**
   * Claims the request, then queues what the handler asked for (docs/architecture.md §6): a Slack
   * retry of the same event or click is a duplicate, acknowledged without doing the work twice.
   * The request id is stored with the claim: a retry that takes over a dead delivery's claim sends
   * the same task again (the same id), never a second one.
   */
  async function claimAndDeliver(decision: Extract<IntakeDecision, { kind: 'accept' }>, at: { eventId: string; started: number; log: Log; retry: Record<string, string | undefined> }): Promise<IngressResponse> {
    const { log, retry } = at;
    let claimed = false;
    let outcome;
    try {
      outcome = await once(options.claims, decision.claimKey, { leaseSeconds: EVENT_CLAIM_LEASE_SECONDS, ttlSeconds: options.claimTtlSeconds, value: newRequestId() }, async (claim) => {
        claimed = true;
        if (claim.takenOver) log.warn('took over the claim of an earlier delivery that did not finish', retry);
        const requestId = claim.value ?? newRequestId();
        for (const result of decision.results) await deliverIntakeResult(destinations, result, { requestId, eventId: at.eventId, started: at.started, log });
        return { result: requestId };
      });
    } catch (error) {
      // Not claimed, or nothing (not all) queued: the claim was given back, so Slack's retry can
      // succeed at once (if even that failed, the lease runs out before Slack's next retry).
      log.error(claimed ? 'could not queue the event; asking Slack to retry' : 'could not claim the event; asking Slack to retry', { error: error as Error });
      return UNAVAILABLE();
    }
    if (outcome.status === 'duplicate') {
      log.info('duplicate event acknowledged', retry);
      return OK();
    }
    if (outcome.status === 'busy') {
      // An earlier delivery is still on it. Not 2xx: if that delivery dies, Slack comes back after
      // its lease and this event is not lost.
      log.info('event is being handled by an earlier delivery; asking Slack to retry later', { ...retry, lease_ends_at: new Date(outcome.leaseEndsAt).toISOString() });
      return text(503, 'in progress');
    }
    // Queued: from here on a retry is a duplicate. If marking it failed, a later retry takes the
    // claim over and queues the same request id again, which the rest of the pipeline dedupes.
    if (outcome.keepError) log.error('could not mark the event claim done; a Slack retry may queue the same request id again', { error: outcome.keepError as Error });
    else if (!outcome.kept) log.warn('the event claim was taken over while this delivery queued it; the same request id goes twice and is deduplicated downstream');
    options.metrics?.latency('ack', clock.now() - at.started);
    return OK();
  }
}

/** The intake table's decision for a readable request; undefined for a payload type it does not take (acknowledged). */
async function decide(read: Extract<SlackRequest, { kind: 'event' | 'interaction' }>, context: IntakeContext, log: Log): Promise<IntakeDecision | undefined> {
  if (read.kind === 'event') {
    const type = read.envelope.event.type;
    const handler = Object.hasOwn(EVENT_HANDLERS, type) ? EVENT_HANDLERS[type] : undefined;
    return handler ? handler(read.envelope, context) : ignore('event-type');
  }
  const type = read.payload.type;
  const handler = Object.hasOwn(INTERACTION_HANDLERS, type) ? INTERACTION_HANDLERS[type] : undefined;
  if (!handler) {
    // Slack would retry an error: a payload type we do not take is acknowledged, and said.
    log.warn('acknowledged an interactivity payload of a type the intake does not take', { type });
    return undefined;
  }
  return handler(read.payload, context);
}
