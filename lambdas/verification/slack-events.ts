import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createLogger } from '../../src/observability/logger';
import { PipelineMetrics } from '../../src/observability/metrics';
import { ingressSettingsOf, loadVerificationConfig } from '../../src/verification/config';
import { RateLimiter } from '../../src/verification/rate-limiter';
import { secretFromEnv } from '../../src/verification/secret-source';
import { createSlackIngress } from '../../src/verification/slack-ingress';
import { DynamoDbClaimStore } from '../../src/verification/stores/dynamodb-claim-store';
import { DynamoDbCounterStore } from '../../src/verification/stores/dynamodb-counter-store';
import { dynamoDb, required, sqsQueue } from './shared/clients';

/** slack-events: API Gateway → verify, filter, authorize, rate-limit, claim, enqueue, ack. */
const config = loadVerificationConfig();
const log = createLogger('slack-events');
const metrics = PipelineMetrics.create('slack-events');
const tableName = required('STATE_TABLE_NAME');

const ingress = createSlackIngress({
  signingSecret: secretFromEnv(config.SLACK_SIGNING_SECRET, config.SLACK_SIGNING_SECRET_ARN, 'the Slack signing secret'),
  claims: new DynamoDbClaimStore({ client: dynamoDb(), tableName }),
  rateLimiter: new RateLimiter({ counters: new DynamoDbCounterStore({ client: dynamoDb(), tableName }), perMinute: config.RATE_LIMIT_PER_MINUTE }),
  tasks: sqsQueue('TASK_QUEUE_URL'),
  replies: sqsQueue('REPLY_QUEUE_URL'),
  ...ingressSettingsOf(config),
  log,
  metrics,
});

export const handler = middy(async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  try {
    // The signature covers the exact bytes Slack sent: decode base64 bodies, never re-serialize.
    const body = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64') : (event.body ?? '');
    return await ingress({ headers: event.headers ?? {}, body });
  } finally {
    metrics.powertools.publishStoredMetrics();
  }
});
