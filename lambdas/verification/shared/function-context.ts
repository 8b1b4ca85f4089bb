import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Logger } from '@aws-lambda-powertools/logger';
import type middy from '@middy/core';
import { systemClock } from '../../../src/clock';
import { createLogger } from '../../../src/observability/logger';
import { PipelineMetrics } from '../../../src/observability/metrics';
import { loadVerificationConfig } from '../../../src/verification/config';
import type { FunctionContext } from '../../../src/verification/function-context';

/** What every verification function starts from: its parsed configuration, logger and metrics. */
export type LambdaFunctionContext = FunctionContext & { log: Logger; metrics: PipelineMetrics };

export function functionContext(serviceName: string): LambdaFunctionContext {
  const log = createLogger(serviceName);
  return { config: loadVerificationConfig(), log, metrics: PipelineMetrics.create(serviceName, log), clock: systemClock };
}

/** Powertools' middlewares: the Lambda context on every log line, metrics flushed after each invocation. */
export function powertools<E, R>(context: LambdaFunctionContext): Array<middy.MiddlewareObj<E, R>> {
  return [injectLambdaContext(context.log) as middy.MiddlewareObj<E, R>, logMetrics(context.metrics.powertools, { captureColdStartMetric: true }) as middy.MiddlewareObj<E, R>];
}
