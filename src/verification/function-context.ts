import type { Clock } from '../clock';
import type { Log } from '../observability/logger';
import type { PipelineMetrics } from '../observability/metrics';
import type { VerificationConfig } from './config';
import type { Tracer } from './trace';

/**
 * What each function is wired from (src/verification/wiring.ts, slack-events-wiring.ts): its parsed
 * configuration and its services. The Lambda handlers (lambdas/verification/) make one per cold
 * start; the local pipeline (src/local/local-pipeline.ts) one per run.
 */
export type FunctionContext = {
  config: VerificationConfig;
  log: Log;
  metrics?: PipelineMetrics;
  trace?: Tracer;
  /** What the functions read the time on: `systemClock` in Lambda; the local pipeline's choice is explained there. */
  clock: Clock;
};

/** A function's services, as each part takes them. */
export function servicesOf(context: FunctionContext): { log: Log; metrics?: PipelineMetrics; trace?: Tracer; clock: Clock } {
  return {
    log: context.log,
    clock: context.clock,
    ...(context.metrics ? { metrics: context.metrics } : {}),
    ...(context.trace ? { trace: context.trace } : {}),
  };
}
