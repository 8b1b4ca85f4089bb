import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { agentRoutesFromEnv } from '../../src/protocols/agent-routes';
import { secretFromEnv } from '../../src/secrets/secret-source';
import { wireSlackEvents } from '../../src/verification/slack-events-wiring';
import { botThreads, claimStore, counterStore, records, sqsQueue } from './shared/clients';
import { functionContext, powertools } from './shared/function-context';

/** slack-events: API Gateway → verify, filter, authorize, rate-limit, claim, enqueue, ack. */
const context = functionContext('slack-events');
const { config } = context;

const ingress = wireSlackEvents(context, {
  signingSecret: secretFromEnv(config.SLACK_SIGNING_SECRET, config.SLACK_SIGNING_SECRET_ARN, 'the Slack signing secret'),
  claims: claimStore(config.STATE_TABLE_NAME),
  counters: counterStore(config.STATE_TABLE_NAME),
  tasks: sqsQueue(config.TASK_QUEUE_URL, 'TASK_QUEUE_URL'),
  replies: sqsQueue(config.REPLY_QUEUE_URL, 'REPLY_QUEUE_URL'),
  threads: botThreads(config.STATE_TABLE_NAME),
  records: records(config.STATE_TABLE_NAME),
  // Only the routing half of EXECUTION_AGENTS: this function never calls an agent. Without it, tasks
  // name no agent and go to the default one: a list set on agent-invoker alone routes nothing, and
  // never sends a task to an agent name ("default") that list does not have.
  ...(process.env.EXECUTION_AGENTS !== undefined ? { routes: agentRoutesFromEnv(process.env) } : {}),
});

export const handler = middy(async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  // The signature covers the exact bytes Slack sent: decode base64 bodies, never re-serialize.
  const body = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64') : (event.body ?? '');
  return ingress({ headers: event.headers ?? {}, body });
}).use(powertools<APIGatewayProxyEvent, APIGatewayProxyResult>(context));
