import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Log } from './logger';

/**
 * The pipeline's CloudWatch metrics (EMF through Powertools Metrics). Dimensions stay few —
 * protocol, transport, outcome kind, error code, hop — so the number of metric series stays small.
 */
type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

export const METRICS_NAMESPACE = 'SlackZoneBridge';

export type Hop = 'ack' | 'execute' | 'poll' | 'post';

/** The waits a user sees (PipelineMetrics.answerLatency). */
export type AnswerStage = 'first-sign' | 'first-text' | 'final';

/**
 * `SlackApiFailures`: every Slack Web API error once more, by kind only, with no `service`
 * dimension, so one CloudWatch alarm per kind covers every function that calls Slack (an alarm
 * names the exact dimension set of one series; cdk/constructs/pipeline-alarms.ts).
 */
export const SLACK_API_FAILURES_METRIC = 'SlackApiFailures';

/** client: Slack refused the request itself (4xx-like); server: Slack or the way to it failed (5xx-like); throttled: rate-limited (429). */
export const SLACK_API_ERROR_KINDS = ['client', 'server', 'throttled'] as const;
export type SlackApiErrorKind = (typeof SLACK_API_ERROR_KINDS)[number];

/** Slack's `ok:false` errors for its own failures, and the transport's `request_error` (no answer). */
const SLACK_SERVER_ERRORS: ReadonlySet<string> = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'request_error']);

/** The kind of a SlackApiError code (`channel_not_found`, `ratelimited`, `http_503`, …). */
export function slackApiErrorKind(code: string): SlackApiErrorKind {
  if (code === 'ratelimited' || code === 'http_429') return 'throttled';
  if (SLACK_SERVER_ERRORS.has(code) || code === 'http_408' || /^http_5\d\d$/.test(code)) return 'server';
  return 'client';
}

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

  /** A task sent to an execution agent, by agent and protocol. */
  agentTask(agent: string, protocol: string): void {
    this.single({ agent, protocol }, 'AgentTasks', 1, MetricUnit.Count);
  }

  /**
   * One call to an execution agent, by agent and protocol: its outcome (`AgentOutcomes`), how long
   * it took (`AgentLatency`), and — when the agent's answer broke its protocol (a `protocol:` code:
   * empty, malformed, another request's id) — a `ProtocolTranslationErrors` count.
   */
  agentCall(agent: string, protocol: string, stage: 'execute' | 'poll', kind: 'success' | 'pending' | 'failure', milliseconds: number, code?: number | string): void {
    this.single({ agent, protocol, stage, outcome: kind }, 'AgentOutcomes', 1, MetricUnit.Count);
    this.single({ agent, protocol, stage }, 'AgentLatency', milliseconds, MetricUnit.Milliseconds);
    if (typeof code === 'string' && code.startsWith('protocol:')) this.single({ agent, protocol, code }, 'ProtocolTranslationErrors', 1, MetricUnit.Count);
  }

  outcome(stage: 'execute' | 'poll', kind: 'success' | 'pending' | 'failure', code?: number | string): void {
    this.single({ stage, outcome: kind, ...(code !== undefined ? { code: String(code) } : {}) }, 'Outcomes', 1, MetricUnit.Count);
  }

  /**
   * What an answer cost in tokens, by agent (docs/contract.md, "Usage"): `InputTokens` (input
   * outside the prompt cache) and `OutputTokens`. Only for an agent that reports usage.
   */
  tokens(agent: string, usage: { input_tokens: number; output_tokens: number }): void {
    this.single({ agent }, 'InputTokens', usage.input_tokens, MetricUnit.Count);
    this.single({ agent }, 'OutputTokens', usage.output_tokens, MetricUnit.Count);
  }

  /**
   * What the user waited for, from the message (slack-events accepting it) to the first sign of
   * life, the first text of the answer shown live, and the final answer posted, by agent. No
   * `service` dimension: the first text is shown by agent-invoker or async-result, whichever reads
   * it, and one series per stage and agent is what the dashboard's percentiles need.
   */
  answerLatency(stage: AnswerStage, agent: string, milliseconds: number): void {
    this.single({ stage, agent }, 'AnswerLatency', milliseconds, MetricUnit.Milliseconds, { withService: false });
  }

  latency(hop: Hop, milliseconds: number): void {
    this.single({ hop }, 'HopLatency', milliseconds, MetricUnit.Milliseconds);
  }

  /** `SlackApiErrors` by service and code, and `SlackApiFailures` by kind alone (what the alarms watch). */
  slackApiError(code: string): void {
    this.single({ code }, 'SlackApiErrors', 1, MetricUnit.Count);
    this.single({ kind: slackApiErrorKind(code) }, SLACK_API_FAILURES_METRIC, 1, MetricUnit.Count, { withService: false });
  }

  /** A reply the user will not see (the last receive failed): alarmed on. */
  replyLost(code: string): void {
    this.single({ code }, 'RepliesLost', 1, MetricUnit.Count);
  }

  /** A task or poll message given up on (its last receive failed): alarmed on. */
  messageAbandoned(stage: 'execute' | 'poll'): void {
    this.single({ stage }, 'MessagesAbandoned', 1, MetricUnit.Count);
  }

  /** A feedback click on an answer, by agent and value (`positive` / `negative`). */
  feedback(agent: string, value: string): void {
    this.single({ agent, value }, 'AnswerFeedback', 1, MetricUnit.Count);
  }

  /** A Stop pressed on a thread's agent session: `cancelled` (a task was working), `idle`, or `refused` (not the asker's, not an admin's). */
  stopped(result: 'cancelled' | 'idle' | 'before-start' | 'refused'): void {
    this.single({ result }, 'SessionsStopped', 1, MetricUnit.Count);
  }

  /** A task refused by a daily token budget, by the budget's scope (user, channel, team). */
  budgetRefused(scope: string): void {
    this.single({ scope }, 'BudgetRefusals', 1, MetricUnit.Count);
  }

  /** A conversation's AgentCore session ended by StopRuntimeSession (AGENTCORE_STOP_SESSION), by agent and when: `after-answer` or `quiet`. */
  sessionEnded(agent: string, when: 'after-answer' | 'quiet'): void {
    this.single({ agent, when }, 'AgentSessionsEnded', 1, MetricUnit.Count);
  }

  /**
   * One guardrail check that found something (docs/operations.md, "Guardrails"): `GuardrailFindings`
   * by direction (input, output), action (masked, blocked, detected) and entity type, the count of
   * that type in the text; never the text.
   */
  guardrailFindings(direction: string, action: string, findings: Record<string, number>): void {
    for (const [entity, count] of Object.entries(findings)) this.single({ direction, action, entity }, 'GuardrailFindings', count, MetricUnit.Count);
  }

  /** Text units a paid guardrail (Bedrock) billed for one check, by direction: what `npm run model` prices. */
  guardrailTextUnits(direction: string, units: number): void {
    this.single({ direction }, 'GuardrailTextUnits', units, MetricUnit.Count);
  }

  /** A check that could not be made (Bedrock unreachable or too slow), by direction. */
  guardrailFailed(direction: string): void {
    this.single({ direction }, 'GuardrailFailures', 1, MetricUnit.Count);
  }

  refused(reason: string): void {
    this.single({ reason }, 'EventsRefused', 1, MetricUnit.Count);
  }

  /** Powertools adds the `service` dimension to every metric unless `withService` is false. */
  private single(dimensions: Record<string, string>, name: string, value: number, unit: Unit, options: { withService?: boolean } = {}): void {
    const metric = this.metrics.singleMetric();
    if (options.withService === false) metric.clearDefaultDimensions();
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
