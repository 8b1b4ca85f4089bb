import { Duration, Stack } from 'aws-cdk-lib';
import { Dashboard, GraphWidget, MathExpression, TextWidget, type IMetric, type IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../../src/observability/metrics';
import { activeSessions } from './agentcore-execution-host';

/**
 * A metric of the pipeline's own (namespace SlackZoneBridge) as the dashboard reads it: its name and
 * the exact dimension set the code writes it with (`service` is Powertools' own, on every metric
 * unless the code clears it). test/cdk/operations-dashboard.test.ts checks each against what
 * src/observability/metrics.ts emits and that the code calls the method that emits it.
 */
export type DashboardMetric = { name: string; dimensions: readonly string[] };

export const DASHBOARD_METRICS = {
  agentTasks: { name: 'AgentTasks', dimensions: ['agent', 'protocol', 'service'] },
  agentOutcomes: { name: 'AgentOutcomes', dimensions: ['agent', 'outcome', 'protocol', 'service', 'stage'] },
  budgetRefusals: { name: 'BudgetRefusals', dimensions: ['scope', 'service'] },
  answerLatency: { name: 'AnswerLatency', dimensions: ['agent', 'stage'] },
  inputTokens: { name: 'InputTokens', dimensions: ['agent', 'service'] },
  outputTokens: { name: 'OutputTokens', dimensions: ['agent', 'service'] },
  feedback: { name: 'AnswerFeedback', dimensions: ['agent', 'service', 'value'] },
  sessionsEnded: { name: 'AgentSessionsEnded', dimensions: ['agent', 'service', 'when'] },
} as const satisfies Record<string, DashboardMetric>;

export interface OperationsDashboardProps {
  /** The pipeline's queues: their dead-letter queues' depths are shown. */
  readonly deadLetterQueues: ReadonlyArray<{ readonly label: string; readonly queue: IQueue }>;
  /** @default the stack's name + '-operations' */
  readonly dashboardName?: string;
}

const PERIOD = Duration.minutes(5);

/**
 * Every series of a pipeline metric — one per agent (or per stage, scope, value) — found by a
 * SEARCH expression on its exact dimension set: the agents are whatever EXECUTION_AGENTS names,
 * not known when CDK synthesizes.
 */
export function search(metric: DashboardMetric, statistic: string, filter: Record<string, string> = {}, label?: string): MathExpression {
  const where = Object.entries(filter).map(([key, value]) => ` ${key}="${value}"`).join('');
  return new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},${[...metric.dimensions].sort().join(',')}} MetricName="${metric.name}"${where}', '${statistic}', ${PERIOD.toSeconds()})`,
    usingMetrics: {},
    period: PERIOD,
    ...(label ? { label } : {}),
  });
}

/**
 * The verification zone's CloudWatch dashboard (docs/operations.md, "Dashboard"): tasks and how
 * they end per agent, what users wait for (first sign, first text, final answer: p50 and p99),
 * tokens per agent, the 👍 share of feedback, the dead-letter queues, and AgentCore's live sessions.
 */
export class OperationsDashboard extends Construct {
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    const m = DASHBOARD_METRICS;
    const graph = (title: string, left: IMetric[], options: { right?: IMetric[]; width?: number; unit?: string } = {}): IWidget =>
      new GraphWidget({ title, left, ...(options.right ? { right: options.right } : {}), width: options.width ?? 8, height: 6, ...(options.unit ? { leftYAxis: { label: options.unit, showUnits: false } } : {}) });
    const latency = (stage: string, title: string) =>
      graph(title, [search(m.answerLatency, 'p50', { stage }, `p50 ${stage}`), search(m.answerLatency, 'p99', { stage }, `p99 ${stage}`)], { unit: 'ms' });
    const positive = search(m.feedback, 'Sum', { value: 'positive' });
    const negative = search(m.feedback, 'Sum', { value: 'negative' });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName ?? `${Stack.of(this).stackName}-operations`,
      defaultInterval: Duration.hours(3),
      widgets: [
        [new TextWidget({ markdown: '## Slack zone bridge\nPer agent: tasks, how they ended, what users waited for, tokens and feedback; the dead-letter queues and AgentCore\'s live sessions. Metrics: docs/operations.md, "Metrics".', width: 24, height: 2 })],
        [
          graph('Tasks sent, per agent', [search(m.agentTasks, 'Sum')]),
          graph('Agent calls by outcome, per agent and stage', [search(m.agentOutcomes, 'Sum')]),
          graph('Tasks refused by a budget', [search(m.budgetRefusals, 'Sum')]),
        ],
        [latency('first-sign', 'Time to the first sign of life (p50, p99)'), latency('first-text', 'Time to the first text (p50, p99)'), latency('final', 'Time to the final answer (p50, p99)')],
        [
          graph('Tokens per agent', [search(m.inputTokens, 'Sum')], { right: [search(m.outputTokens, 'Sum')] }),
          graph('Feedback: 👍 share of ratings (%)', [new MathExpression({ expression: '100 * SUM(positive) / (SUM(positive) + SUM(negative))', usingMetrics: { positive, negative }, period: PERIOD, label: '👍 %' })], {
            right: [new MathExpression({ expression: 'SUM(positive) + SUM(negative)', usingMetrics: { positive, negative }, period: PERIOD, label: 'ratings' })],
          }),
          graph('Dead-letter queues (messages waiting)', props.deadLetterQueues.map(({ label, queue }) => queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum', label }))),
        ],
        [graph('AgentCore active sessions (the account, this Region)', [activeSessions()], { width: 12 }), graph('AgentCore sessions ended by StopRuntimeSession', [search(m.sessionsEnded, 'Sum')], { width: 12 })],
      ],
    });
  }
}
