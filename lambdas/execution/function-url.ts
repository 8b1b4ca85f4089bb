import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
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
 *
 * The URL streams its response (`InvokeMode: RESPONSE_STREAM`; middy wraps the handler in
 * `awslambda.streamifyResponse` and pipes the body it returns into the response stream): a
 * caller that asks for a streamed answer (`Accept: text/event-stream`) gets the task's text as
 * the worker writes it to the task table, until the task ends or the stream's hold is over
 * (docs/contract.md, "Streamed answers"); every other answer is one body, as in buffered mode.
 */
const workerQueueUrl = process.env.WORKER_QUEUE_URL;
const workerQueue = workerQueueUrl ? new SqsQueue<never>({ client: sqsClient(), queueUrl: workerQueueUrl }) : undefined;
const runtime = runtimeFromEnv(process.env, {
  handoff: async (task) => {
    if (!workerQueue) throw new Error('WORKER_QUEUE_URL is not set: accepted tasks cannot be finished');
    await workerQueue.sendBody(await handoffMessageBody(runtime, task));
  },
});

export const handler = middy(async (event: LambdaFunctionURLEvent, context: Context) => handleFunctionUrlEvent(runtime, event, { remainingMs: () => context.getRemainingTimeInMillis() }), {
  streamifyResponse: true,
});
