import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import middy from '@middy/core';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { runHandoffMessage } from '../../src/execution/handoff-message';
import { runtimeFromEnv } from '../../src/execution/runtime-from-env';

/**
 * Finishes tasks the function-URL host accepted and handed off; results land in the task table.
 * A message carries the task's params or, when they were too large for it, points at the copy
 * in the task table, which is read here and erased once the task is done.
 */
const runtime = runtimeFromEnv();

export const handler = middy(async (event: SQSEvent, context: Context) =>
  processPartialResponse(
    event,
    async (record: SQSRecord) => {
      await runHandoffMessage(runtime, record.body);
    },
    new BatchProcessor(EventType.SQS),
    { context },
  ),
);
