import type { LambdaFunctionURLEvent } from 'aws-lambda';
import middy from '@middy/core';
import { handoffMessageBody } from '../../src/execution/handoff-message';
import { handleFunctionUrlEvent } from '../../src/execution/hosts/lambda-url-handler';
import { runtimeFromEnv } from '../../src/execution/runtime-from-env';
import { SqsQueue, sqsClient } from '../../src/queue/sqs-queue';

/**
 * The execution zone behind a Lambda function URL (the `https` transport). A Lambda cannot keep
 * working after it answers, so a task that outlives the sync budget is handed to the worker
 * queue (execution-worker) and this function answers `accepted`. Params too large for an SQS
 * message (attachments) go to the task store and the message points at them
 * (src/execution/handoff-message.ts).
 */
const workerQueueUrl = process.env.WORKER_QUEUE_URL;
const workerQueue = workerQueueUrl ? new SqsQueue<never>({ client: sqsClient(), queueUrl: workerQueueUrl }) : undefined;
const runtime = runtimeFromEnv(process.env, {
  handoff: async (task) => {
    if (!workerQueue) throw new Error('WORKER_QUEUE_URL is not set: accepted tasks cannot be finished');
    await workerQueue.sendBody(await handoffMessageBody(runtime, task));
  },
});

export const handler = middy(async (event: LambdaFunctionURLEvent) => handleFunctionUrlEvent(runtime, event));
