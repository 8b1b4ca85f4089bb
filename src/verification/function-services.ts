import type { Clock } from '../clock';
import type { Log } from '../observability/logger';
import type { PipelineMetrics } from '../observability/metrics';
import type { Tracer } from './trace';

/** What every part of a verification function is handed by the wiring: its log, metrics, trace and clock. */
export type FunctionServices = {
  log: Log;
  metrics?: PipelineMetrics;
  trace?: Tracer;
  clock?: Clock;
};
