import { createLogger } from '../../src/observability/logger';
import { PipelineMetrics } from '../../src/observability/metrics';
import { createSlackWebClient, WebApiSlackReplies } from '../../src/slack/slack-replies';
import { createAgentInvoker } from '../../src/verification/agent-invoker';
import { loadVerificationConfig, pollScheduleOf } from '../../src/verification/config';
import { secretFromEnv } from '../../src/verification/secret-source';
import { acknowledgeReceipt } from '../../src/verification/slack-poster';
import { userMessages } from '../../src/verification/user-messages';
import { defaultAgentFromEnv } from './shared/agents';
import { sqsQueue } from './shared/clients';
import { sqsBatchHandler } from './shared/sqs-batch';

/** agent-invoker: SQS tasks → execute_task through the default execution agent. */
const config = loadVerificationConfig();
const log = createLogger('agent-invoker');
const metrics = PipelineMetrics.create('agent-invoker');

const botToken = config.SLACK_REACTIONS || config.EXECUTION_SEND_BOT_TOKEN ? secretFromEnv(config.SLACK_BOT_TOKEN, config.SLACK_BOT_TOKEN_ARN, 'the Slack bot token') : undefined;
const slack = config.SLACK_REACTIONS && botToken && (async () => new WebApiSlackReplies(createSlackWebClient({ token: await botToken.get(), apiUrl: config.SLACK_API_URL })));

export const handler = sqsBatchHandler(
  createAgentInvoker({
    agent: defaultAgentFromEnv(),
    polls: sqsQueue('POLL_QUEUE_URL'),
    replies: sqsQueue('REPLY_QUEUE_URL'),
    messages: userMessages(config.USER_MESSAGES_JSON),
    schedule: pollScheduleOf(config),
    maxReceiveCount: config.TASK_MAX_RECEIVE_COUNT,
    log,
    metrics,
    ...(slack ? { onTaskStarted: async (thread) => acknowledgeReceipt(await slack(), thread) } : {}),
    ...(config.EXECUTION_SEND_BOT_TOKEN && botToken ? { botTokenForExecution: botToken } : {}),
  }),
  log,
  metrics,
);
