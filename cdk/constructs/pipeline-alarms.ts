import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, SLACK_API_FAILURES_METRIC, type SlackApiErrorKind } from '../../src/observability/metrics';
import type { OperationsAlarms } from './operations-alarms';

/**
 * The `service` dimension Powertools puts on every metric a verification function emits: the name
 * its handler passes to `functionContext` (lambdas/verification/*.ts; a test keeps them equal).
 */
export const VERIFICATION_SERVICES = {
  invoker: 'agent-invoker',
  poller: 'async-result',
  poster: 'slack-poster',
} as const;

const PERIOD = Duration.minutes(5);

/** Per kind of Slack API failure: the alarm, how many failures in 5 minutes raise it, and what it means. */
const SLACK_API_ALARMS: Record<SlackApiErrorKind, { id: string; threshold: number; description: string }> = {
  client: {
    id: 'SlackApiClientErrorsAlarm',
    threshold: 1,
    description:
      'Slack refused a Web API call (4xx-like: invalid_auth, token_revoked, missing_scope, not_in_channel, channel_not_found…). Retries do not help: the SlackApiErrors metric (by code) and the log say which; fix the token, scope or channel.',
  },
  server: {
    id: 'SlackApiServerErrorsAlarm',
    threshold: 5,
    description: 'Slack failed 5 or more Web API calls in 5 minutes (5xx-like, internal_error, or no answer). Replies are retried from the replies queue; check https://slack-status.com.',
  },
  throttled: {
    id: 'SlackApiThrottledAlarm',
    threshold: 5,
    description: 'Slack rate-limited 5 or more Web API calls in 5 minutes (ratelimited, HTTP 429) beyond the Retry-After waits: replies are delayed by a redelivery each.',
  },
};

export interface PipelineAlarmsProps {
  readonly alarms: OperationsAlarms;
}

/**
 * Alarms on the verification functions' own CloudWatch metrics (namespace SlackZoneBridge, EMF via
 * Powertools; src/observability/metrics.ts). An alarm on a metric names the exact dimension set of
 * one series, and Powertools puts `service` on every metric besides the explicit dimensions:
 *
 * - Slack API failures: `SlackApiErrors` is by service and code (unbounded values), so the functions
 *   also emit `SlackApiFailures` by `kind` alone (client / server / throttled, without `service`):
 *   one plain alarm per kind covers every function that calls Slack.
 * - `RepliesLost` and `MessagesAbandoned`: a Metrics Insights query summing every series of the
 *   metric whose `service` is that function, whatever other dimensions it carries (a SEARCH
 *   expression cannot be alarmed on; a Metrics Insights query returning one series can).
 */
export class PipelineAlarms extends Construct {
  constructor(scope: Construct, id: string, props: PipelineAlarmsProps) {
    super(scope, id);
    for (const [kind, spec] of Object.entries(SLACK_API_ALARMS)) {
      const metric = new Metric({ namespace: METRICS_NAMESPACE, metricName: SLACK_API_FAILURES_METRIC, dimensionsMap: { kind }, statistic: 'Sum', period: PERIOD });
      props.alarms.alarm(this, spec.id, metric, spec.description, spec.threshold);
    }
    props.alarms.alarm(
      this,
      'RepliesLostAlarm',
      byService('RepliesLost', VERIFICATION_SERVICES.poster),
      "slack-poster gave up on a reply (its last receive failed, or it had no visible text): the user has no answer. Read the poster's ERROR line (request_id, code); fix the cause, then redrive the replies DLQ (docs/operations.md).",
    );
    // AgentCore refused a new session: the account's live sessions are at their quota.
    props.alarms.alarm(
      this,
      'AgentCoreSessionLimitAlarm',
      new MathExpression({
        expression: `SELECT SUM(Outcomes) FROM "${METRICS_NAMESPACE}" WHERE code = '${SESSION_QUOTA_CODE}'`,
        usingMetrics: {},
        period: PERIOD,
        label: 'AgentCore session quota refusals',
      }),
      'AgentCore refused a new session: the account has as many live sessions as its quota allows, and tasks are being retried, then answered "busy". Raise the quota (Service Quotas: Amazon Bedrock AgentCore, active session workloads) or shorten agentcoreIdleTimeoutSeconds (docs/operations.md, "AgentCore sessions").',
    );
    for (const [key, queue] of [
      ['invoker', 'tasks'],
      ['poller', 'polls'],
    ] as const) {
      const service = VERIFICATION_SERVICES[key];
      props.alarms.alarm(
        this,
        `${key === 'invoker' ? 'Invoker' : 'Poller'}MessagesAbandonedAlarm`,
        byService('MessagesAbandoned', service),
        `${service} gave up on a ${queue} message on its last receive (the user was sent an apology if the message named its thread). Read its ERROR line by request_id; the message waits in the ${queue} DLQ.`,
      );
    }
  }
}

/** The outcome code the transport gives AgentCore's ServiceQuotaExceededException (src/transport/agentcore.ts). */
const SESSION_QUOTA_CODE = 'transport:session-quota';

/** Every series of `metricName` emitted by `service`, summed per 5 minutes: one time series an alarm can watch. */
function byService(metricName: string, service: string): IMetric {
  return new MathExpression({
    expression: `SELECT SUM(${metricName}) FROM "${METRICS_NAMESPACE}" WHERE service = '${service}'`,
    usingMetrics: {},
    period: PERIOD,
    label: `${metricName} (${service})`,
  });
}
