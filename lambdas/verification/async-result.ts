import { wireAsyncResult } from '../../src/verification/wiring';
import { executionAgentsFromEnv } from './shared/agents';
import { outgoingFiles, questionPorts, records, sqsQueue, usageStore } from './shared/clients';
import { functionContext } from './shared/function-context';
import { livePortsOf } from './shared/slack';
import { sqsBatchHandler } from './shared/sqs-batch';

/** async-result: one get_task_result per poll message (its new text shown in Slack); re-enqueues itself with backoff until done or the deadline. */
const context = functionContext('async-result');
const { config } = context;
// Every configured agent: each task, poll and cancel goes to the one its message names.
const agents = executionAgentsFromEnv();

export const handler = sqsBatchHandler(
  wireAsyncResult(context, {
    agent: agents.default,
    agents,
    polls: sqsQueue(config.POLL_QUEUE_URL, 'POLL_QUEUE_URL'),
    replies: sqsQueue(config.REPLY_QUEUE_URL, 'REPLY_QUEUE_URL'),
    live: livePortsOf(context),
    records: records(config.STATE_TABLE_NAME),
    usage: usageStore(config.STATE_TABLE_NAME),
    outgoingFiles: outgoingFiles(config.STATE_TABLE_NAME),
    questions: questionPorts(config.STATE_TABLE_NAME),
  }),
  context,
);
