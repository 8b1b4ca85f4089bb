import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { DeliveryHandler } from '../../../src/queue/queue';
import { deliveryFromSqsRecord } from '../../../src/queue/sqs-queue';
import { powertools, type LambdaFunctionContext } from './function-context';

/** Leave this much of the Lambda's time to report partial failures after calls are cut short. */
const REPORT_MARGIN_MS = 3_000;

/**
 * An SQS-triggered Lambda with partial batch failures: each record goes to `handle` as a
 * Delivery; a record that throws is reported in `batchItemFailures` and redelivered by SQS.
 * The signal aborts calls a little before the Lambda would time out, so a slow execution zone
 * never makes the function die mid-call with the whole batch lost.
 */
export function sqsBatchHandler(handle: DeliveryHandler, context: LambdaFunctionContext) {
  return middy(
    async (event: SQSEvent, lambda: Context, { signal }: { signal: AbortSignal }): Promise<SQSBatchResponse> => {
      const budgetMs = Math.max(1_000, lambda.getRemainingTimeInMillis() - REPORT_MARGIN_MS);
      const combined = AbortSignal.any([signal, AbortSignal.timeout(budgetMs)]);
      const deadline = context.clock.now() + budgetMs;
      const processor = new BatchProcessor(EventType.SQS);
      const result = await processPartialResponse(event, (record: SQSRecord) => handle(deliveryFromSqsRecord(record), { signal: combined, deadline }), processor, {
        context: lambda,
        processInParallel: true,
        throwOnFullBatchFailure: false,
      });
      context.log.debug('batch done', { records: event.Records.length, failed: result.batchItemFailures.length });
      return result;
    },
    { timeoutEarlyInMillis: 500 },
  ).use(powertools<SQSEvent, SQSBatchResponse>(context));
}
