import { createLogger } from '../../src/observability/logger';
import { PipelineMetrics } from '../../src/observability/metrics';
import { createAsyncResult } from '../../src/verification/async-result';
import { loadVerificationConfig, pollScheduleOf } from '../../src/verification/config';
import { userMessages } from '../../src/verification/user-messages';
import { defaultAgentFromEnv } from './shared/agents';
import { sqsQueue } from './shared/clients';
import { sqsBatchHandler } from './shared/sqs-batch';

/** async-result: one get_task_result per poll message; re-enqueues itself with backoff until done or the deadline. */
const config = loadVerificationConfig();
const log = createLogger('async-result');
const metrics = PipelineMetrics.create('async-result');

export const handler = sqsBatchHandler(
  createAsyncResult({
    agent: defaultAgentFromEnv(),
    polls: sqsQueue('POLL_QUEUE_URL'),
    replies: sqsQueue('REPLY_QUEUE_URL'),
    messages: userMessages(config.USER_MESSAGES_JSON),
    schedule: pollScheduleOf(config),
    maxReceiveCount: config.POLL_MAX_RECEIVE_COUNT,
    log,
    metrics,
  }),
  log,
  metrics,
);
