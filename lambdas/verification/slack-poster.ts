import { createLogger } from '../../src/observability/logger';
import { PipelineMetrics } from '../../src/observability/metrics';
import { createSlackWebClient, WebApiSlackReplies } from '../../src/slack/slack-replies';
import { loadVerificationConfig } from '../../src/verification/config';
import { secretFromEnv } from '../../src/verification/secret-source';
import { createSlackPoster } from '../../src/verification/slack-poster';
import { DynamoDbClaimStore } from '../../src/verification/stores/dynamodb-claim-store';
import { dynamoDb, required } from './shared/clients';
import { sqsBatchHandler } from './shared/sqs-batch';

/** slack-poster: SQS replies → chat.postMessage in the thread, once per chunk even on redelivery. */
const config = loadVerificationConfig();
const log = createLogger('slack-poster');
const metrics = PipelineMetrics.create('slack-poster');
const botToken = secretFromEnv(config.SLACK_BOT_TOKEN, config.SLACK_BOT_TOKEN_ARN, 'the Slack bot token');

let replies: WebApiSlackReplies | undefined;
let clientToken: string | undefined;
/** The client is rebuilt when the cached token changes (after a rotation). */
async function slackReplies(): Promise<WebApiSlackReplies> {
  const token = await botToken.get();
  if (!replies || token !== clientToken) {
    replies = new WebApiSlackReplies(createSlackWebClient({ token, apiUrl: config.SLACK_API_URL }));
    clientToken = token;
  }
  return replies;
}

export const handler = sqsBatchHandler(
  createSlackPoster({
    replies: slackReplies,
    claims: new DynamoDbClaimStore({ client: dynamoDb(), tableName: required('STATE_TABLE_NAME') }),
    reactions: config.SLACK_REACTIONS,
    log,
    metrics,
  }),
  log,
  metrics,
);
