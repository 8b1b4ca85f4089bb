import { wireAgentInvoker } from '../../src/verification/wiring';
import { executionAgentsFromEnv } from './shared/agents';
import { outgoingFiles, questionPorts, records, sqsQueue, usageStore } from './shared/clients';
import { functionContext } from './shared/function-context';
import { botTokenOf, livePortsOf, slackOf } from './shared/slack';
import { sqsBatchHandler } from './shared/sqs-batch';

/** agent-invoker: SQS tasks → the thread's earlier messages and the shared files read from Slack → execute_task through the execution agent the task was routed to. */
const context = functionContext('agent-invoker');
const { config } = context;
// Every configured agent: each task, poll and cancel goes to the one its message names.
const agents = executionAgentsFromEnv();

export const handler = sqsBatchHandler(
  wireAgentInvoker(context, {
    agent: agents.default,
    agents,
    polls: sqsQueue(config.POLL_QUEUE_URL, 'POLL_QUEUE_URL'),
    replies: sqsQueue(config.REPLY_QUEUE_URL, 'REPLY_QUEUE_URL'),
    // A task whose AgentCore session is busy goes back on its own queue (src/verification/invoke/session-busy.ts).
    ...(config.TASK_QUEUE_URL ? { tasks: sqsQueue(config.TASK_QUEUE_URL, 'TASK_QUEUE_URL') } : {}),
    slack: () => slackOf(context),
    conversations: () => slackOf(context),
    botToken: () => botTokenOf(context),
    live: livePortsOf(context),
    records: records(config.STATE_TABLE_NAME),
    usage: usageStore(config.STATE_TABLE_NAME),
    outgoingFiles: outgoingFiles(config.STATE_TABLE_NAME),
    questions: questionPorts(config.STATE_TABLE_NAME),
  }),
  context,
);
