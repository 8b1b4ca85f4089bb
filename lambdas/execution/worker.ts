import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import middy from '@middy/core';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { HandoffMessageSchema } from '../../src/execution/handoff-message';
import { runtimeFromEnv } from '../../src/execution/runtime-from-env';

/** Finishes tasks the function-URL host accepted and handed off; results land in the task table. */
const runtime = runtimeFromEnv();

export const handler = middy(async (event: SQSEvent, context: Context) =>
  processPartialResponse(
    event,
    async (record: SQSRecord) => {
      const message = HandoffMessageSchema.parse(JSON.parse(record.body));
      await runtime.service.runHandedOff(message.task_id, message.params);
    },
    new BatchProcessor(EventType.SQS),
    { context },
  ),
);
