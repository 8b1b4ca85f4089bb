import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Log } from './logger';

/**
 * The pipeline's CloudWatch metrics (EMF through Powertools Metrics). Dimensions stay few —
 * protocol, transport, outcome kind, error code, hop — so the number of metric series stays small.
 */
type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

export const METRICS_NAMESPACE = 'SlackZoneBridge';

export type Hop = 'ack' | 'execute' | 'poll' | 'post';

export class PipelineMetrics {
  constructor(private readonly metrics: Metrics) {}

  /** `log` receives Powertools' own warnings as structured lines. */
  static create(serviceName: string, log?: Pick<Log, 'debug' | 'info' | 'warn' | 'error'>): PipelineMetrics {
    return new PipelineMetrics(new Metrics({ namespace: METRICS_NAMESPACE, serviceName, ...(log ? { logger: withoutEmptyFlushWarning(log) } : {}) }));
  }

  /** The underlying Powertools Metrics, for the handler's flush middleware (logMetrics). */
  get powertools(): Metrics {
    return this.metrics;
  }

  taskSent(protocol: string, transport: string): void {
    this.single({ protocol, transport }, 'TasksSent', 1, MetricUnit.Count);
  }

  outcome(stage: 'execute' | 'poll', kind: 'success' | 'pending' | 'failure', code?: number | string): void {
    this.single({ stage, outcome: kind, ...(code !== undefined ? { code: String(code) } : {}) }, 'Outcomes', 1, MetricUnit.Count);
  }

  latency(hop: Hop, milliseconds: number): void {
    this.single({ hop }, 'HopLatency', milliseconds, MetricUnit.Milliseconds);
  }

  slackApiError(code: string): void {
    this.single({ code }, 'SlackApiErrors', 1, MetricUnit.Count);
  }

  refused(reason: string): void {
    this.single({ reason }, 'EventsRefused', 1, MetricUnit.Count);
  }

  private single(dimensions: Record<string, string>, name: string, value: number, unit: Unit): void {
    const metric = this.metrics.singleMetric();
    for (const [key, dimensionValue] of Object.entries(dimensions)) metric.addDimension(key, dimensionValue);
    metric.addMetric(name, unit, value);
  }
}

/**
 * Every metric here is a single metric, written the moment it is made, so the flush after an
 * invocation usually finds nothing stored (only the cold-start metric) — which Powertools reports
 * as a warning on every warm invocation. That one warning says nothing here; the rest pass.
 */
function withoutEmptyFlushWarning(log: Pick<Log, 'debug' | 'info' | 'warn' | 'error'>) {
  return {
    debug: (message: string, ...rest: unknown[]) => log.debug(message, { details: rest }),
    info: (message: string, ...rest: unknown[]) => log.info(message, { details: rest }),
    warn: (message: string, ...rest: unknown[]) => {
      if (!message.startsWith('No application metrics to publish')) log.warn(message, { details: rest });
    },
    error: (message: string, ...rest: unknown[]) => log.error(message, { details: rest }),
  };
}
