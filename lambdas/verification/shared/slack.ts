import { secretFromEnv, type SecretSource } from '../../../src/secrets/secret-source';
import { slackRepliesFromSecret } from '../../../src/slack/slack-replies';
import type { FunctionContext } from '../../../src/verification/function-context';
import type { LivePorts } from '../../../src/verification/wiring';
import { liveReplies } from './clients';

/**
 * The bot token and the Slack client, for the functions that call Slack (agent-invoker,
 * slack-poster). Kept apart from function-context.ts so slack-events — the ack path — never
 * bundles @slack/web-api.
 */
const botTokens = new WeakMap<FunctionContext, SecretSource>();
/** The bot token, one cached source per function however many ports use it. */
export function botTokenOf(context: FunctionContext): SecretSource {
  let token = botTokens.get(context);
  if (!token) botTokens.set(context, (token = secretFromEnv(context.config.SLACK_BOT_TOKEN, context.config.SLACK_BOT_TOKEN_ARN, 'the Slack bot token')));
  return token;
}

const clients = new WeakMap<FunctionContext, ReturnType<typeof slackRepliesFromSecret>>();
/**
 * A Slack client whose token follows rotation (on Slack's invalid_auth the secret is re-read):
 * posts, reactions, thread reads and file downloads, one per function.
 */
export function slackOf(context: FunctionContext) {
  let client = clients.get(context);
  if (!client) clients.set(context, (client = slackRepliesFromSecret(botTokenOf(context), { apiUrl: context.config.SLACK_API_URL })));
  return client;
}

/** Live answers (STREAM_REPLIES): Slack's status/stream/update methods and the record of each task's live message. */
export function livePortsOf(context: FunctionContext): LivePorts | undefined {
  if (!context.config.STREAM_REPLIES) return undefined;
  return { slack: () => slackOf(context), store: liveReplies(context.config.STATE_TABLE_NAME) };
}
