import { BatchProcessor, EventType, FullBatchFailureError, processPartialResponse } from '@aws-lambda-powertools/batch';
import middy from '@middy/core';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { HandoffHeldError, runHandoffMessage } from '../../src/execution/handoff-message';
import { runtimeFromEnv } from '../../src/execution/runtime-from-env';

/**
 * Finishes tasks the function-URL host accepted and handed off; results land in the task table.
 * A message carries the task's params or, when they were too large for it, points at the copy
 * in the task table, which is read here and erased once the task is done.
 *
 * A task runs once however often its message is delivered: the worker takes it with a lease
 * (TaskService.runHandedOff), and a delivery that finds it held by another worker runs nothing
 * and hands the message back (a batch item failure, not an invocation error: no Errors alarm),
 * so the queue brings it again after its visibility timeout — to find the task done, or its
 * holder dead and its lease over, and then run it.
 */
const runtime = runtimeFromEnv();

export const handler = middy(async (event: SQSEvent, context: Context) => {
  const processor = new BatchProcessor(EventType.SQS);
  const response = await processPartialResponse(
    event,
    async (record: SQSRecord) => {
      await runHandoffMessage(runtime, record.body);
    },
    processor,
    { context, throwOnFullBatchFailure: false },
  );
  // A batch that failed whole for any other reason is an invocation error, as Powertools makes it by default.
  const failedWhole = event.Records.length > 0 && response.batchItemFailures.length === event.Records.length;
  if (failedWhole && processor.errors.some((error) => !(error instanceof HandoffHeldError))) throw new FullBatchFailureError(processor.errors);
  return response;
});
