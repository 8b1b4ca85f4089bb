import type { AgentRoutes } from '../protocols/agent-routes';
import type { Queue } from '../queue/queue';
import type { SecretSource } from '../secrets/secret-source';
import { servicesOf, type FunctionContext } from './function-context';
import { RateLimiter } from './intake/rate-limiter';
import { createSlackIngress, type IngressRequest, type IngressResponse } from './intake/slack-ingress';
import type { RepliesQueueMessage } from './queues/replies-queue';
import type { TasksQueueMessage } from './queues/tasks-queue';
import type { BotThreads } from './stores/bot-threads';
import type { ClaimStore } from './stores/claim-store';
import type { CounterStore } from './stores/counter-store';
import type { Records } from './stores/records';
import { createThreadWork } from './stores/thread-work';
import { createUserContexts } from './surface/user-context';

/**
 * slack-events' wiring, apart from the other three functions' (src/verification/wiring.ts): the ack
 * path's bundle holds only what it runs — the intake, its stores and queues — and none of the
 * invoker's, poller's or poster's code and libraries (docs/architecture.md, "The verification
 * zone's rooms"; test/cdk/bundling.test.ts holds it to that).
 */
export type SlackEventsPorts = {
  signingSecret: SecretSource;
  claims: ClaimStore;
  counters: CounterStore;
  tasks: Queue<TasksQueueMessage>;
  replies: Queue<RepliesQueueMessage>;
  /** The threads the bot answered in; read only with THREAD_FOLLOW_UPS (on by default). */
  threads: BotThreads;
  /** The state table's records: what each user is looking at (app_context_changed), and each thread's agent. */
  records?: Records;
  /** Where each execution agent answers (EXECUTION_AGENTS): tasks are routed by it. */
  routes?: AgentRoutes;
};

export function wireSlackEvents(context: FunctionContext, ports: SlackEventsPorts): (request: IngressRequest) => Promise<IngressResponse> {
  const { config } = context;
  return createSlackIngress({
    signingSecret: ports.signingSecret,
    claims: ports.claims,
    rateLimiter: new RateLimiter({ counters: ports.counters, perMinute: config.RATE_LIMIT_PER_MINUTE }),
    tasks: ports.tasks,
    replies: ports.replies,
    messages: config.messages,
    allowedTeamIds: config.ALLOWED_TEAM_IDS,
    allowedUserIds: config.ALLOWED_USER_IDS,
    allowedChannelIds: config.ALLOWED_CHANNEL_IDS,
    maxTextLength: config.MAX_TEXT_LENGTH,
    claimTtlSeconds: config.EVENT_CLAIM_TTL_SECONDS,
    botUserId: config.SLACK_BOT_USER_ID,
    ...(config.THREAD_FOLLOW_UPS ? { threads: ports.threads } : {}),
    prompts: config.prompts,
    ...(ports.records ? { contexts: createUserContexts(ports.records) } : {}),
    ...(ports.routes ? { routes: ports.routes } : {}),
    ...(ports.routes && ports.records ? { threadAgents: createThreadWork(ports.records, context.clock) } : {}),
    ...servicesOf(context),
  });
}
