import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { DASHBOARD_METRICS } from '../../cdk/constructs/operations-dashboard';
import { METRICS_NAMESPACE, PipelineMetrics } from '../../src/observability/metrics';
import { onlyResource, SINGLE_ACCOUNT, synthesize, type Synthesized } from './support/synth';

/**
 * The dashboard (cdk/constructs/operations-dashboard.ts) in step with the code: every pipeline
 * metric a widget reads is one src/observability/metrics.ts emits, under that name and with that
 * exact dimension set (a SEARCH on another set finds nothing), and the method that emits it is
 * called by the pipeline.
 */

/** What PipelineMetrics writes: each metric's name with its dimension names, `service` included unless the code clears it. */
function emitted(): Map<string, { dimensions: string[]; method: string }> {
  const found = new Map<string, { dimensions: string[]; method: string }>();
  let method = '';
  const fake = {
    singleMetric() {
      const dimensions = ['service'];
      return {
        clearDefaultDimensions: () => void dimensions.splice(0),
        addDimension: (name: string) => void dimensions.push(name),
        addMetric: (name: string) => void found.set(name, { dimensions: [...dimensions].sort(), method }),
      };
    },
  } as unknown as Metrics;
  const metrics = new PipelineMetrics(fake);
  // One call of every method, with arguments of its types; a method added later must be added here.
  const calls: Record<string, () => void> = {
    taskSent: () => metrics.taskSent('execute-task', 'https'),
    agentTask: () => metrics.agentTask('default', 'execute-task'),
    agentCall: () => metrics.agentCall('default', 'execute-task', 'execute', 'failure', 10, 'protocol:empty'),
    outcome: () => metrics.outcome('execute', 'failure', 'x'),
    tokens: () => metrics.tokens('default', { input_tokens: 1, output_tokens: 1 }),
    answerLatency: () => metrics.answerLatency('final', 'default', 10),
    latency: () => metrics.latency('post', 10),
    slackApiError: () => metrics.slackApiError('ratelimited'),
    replyLost: () => metrics.replyLost('x'),
    messageAbandoned: () => metrics.messageAbandoned('poll'),
    feedback: () => metrics.feedback('default', 'positive'),
    stopped: () => metrics.stopped('idle'),
    budgetRefused: () => metrics.budgetRefused('user'),
    sessionEnded: () => metrics.sessionEnded('default', 'quiet'),
    refused: () => metrics.refused('x'),
    guardrailFindings: () => metrics.guardrailFindings('input', 'masked', { EMAIL: 1 }),
    guardrailTextUnits: () => metrics.guardrailTextUnits('input', 1),
    guardrailFailed: () => metrics.guardrailFailed('output'),
  };
  const methods = Object.getOwnPropertyNames(PipelineMetrics.prototype).filter((name) => name !== 'constructor' && name !== 'single' && typeof (PipelineMetrics.prototype as unknown as Record<string, unknown>)[name] === 'function');
  expect(methods.sort()).toEqual(Object.keys(calls).sort());
  for (const [name, call] of Object.entries(calls)) {
    method = name;
    call();
  }
  return found;
}

/** Every source file of the pipeline, outside the metrics module itself. */
function sources(dir = join(__dirname, '..', '..', 'src')): string {
  return readdirSync(dir)
    .map((entry) => join(dir, entry))
    .map((path) => (statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') && !path.endsWith('observability/metrics.ts') ? readFileSync(path, 'utf8') : ''))
    .join('\n');
}

/** The dashboard's body as JSON: tokens (the region, queue names) stand as placeholders. */
function dashboardBody(synth: Synthesized): { widgets: Array<{ properties: { title?: string; metrics?: unknown[][] } }> } {
  const body = onlyResource(synth.verification!, 'AWS::CloudWatch::Dashboard').resource.Properties.DashboardBody;
  const text = typeof body === 'string' ? body : (body['Fn::Join'][1] as unknown[]).map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
  return JSON.parse(text);
}

describe('the operations dashboard', () => {
  let synth: Synthesized;
  let body: ReturnType<typeof dashboardBody>;
  beforeAll(() => {
    synth = synthesize({ ...SINGLE_ACCOUNT });
    body = dashboardBody(synth);
  });
  afterAll(() => synth?.cleanup());

  const expressions = () => body.widgets.flatMap((widget) => (widget.properties.metrics ?? []).map((row) => row.find((cell): cell is { expression: string } => typeof cell === 'object' && cell !== null && 'expression' in cell)?.expression)).filter((e): e is string => e !== undefined);

  it('reads every pipeline metric under the name and the exact dimensions the code writes it with, and the pipeline emits each', () => {
    const code = emitted();
    const src = sources();
    const searches = expressions().flatMap((expression) => [...expression.matchAll(/SEARCH\('\{([^,}]+),([^}]*)\} MetricName="(\w+)"/g)]);
    const read = new Map(searches.map((match) => [match[3]!, { namespace: match[1], dimensions: match[2]!.split(',').sort() }]));
    // Every metric the construct declares is on the dashboard, and nothing else of ours is.
    expect([...read.keys()].sort()).toEqual(Object.values(DASHBOARD_METRICS).map((metric) => metric.name).sort());
    for (const [name, { namespace, dimensions }] of read) {
      expect({ name, namespace }).toEqual({ name, namespace: METRICS_NAMESPACE });
      expect({ name, dimensions: code.get(name)?.dimensions }).toEqual({ name, dimensions });
      const method = code.get(name)!.method;
      expect({ name, called: new RegExp(`metrics\\??\\.${method}\\(`).test(src) }).toEqual({ name, called: true });
    }
  });

  it('shows tasks and outcomes per agent, p50 and p99 of the three waits, tokens, the feedback share, the three DLQs and AgentCore\'s live sessions', () => {
    const titles = body.widgets.map((widget) => widget.properties.title).filter(Boolean);
    expect(titles).toEqual([
      'Tasks sent, per agent',
      'Agent calls by outcome, per agent and stage',
      'Tasks refused by a budget',
      'Time to the first sign of life (p50, p99)',
      'Time to the first text (p50, p99)',
      'Time to the final answer (p50, p99)',
      'Tokens per agent',
      'Feedback: 👍 share of ratings (%)',
      'Dead-letter queues (messages waiting)',
      'AgentCore active sessions (the account, this Region)',
      'AgentCore sessions ended by StopRuntimeSession',
    ]);
    const all = expressions();
    for (const stage of ['first-sign', 'first-text', 'final']) for (const stat of ['p50', 'p99']) expect(all).toContain(`SEARCH('{SlackZoneBridge,agent,stage} MetricName="AnswerLatency" stage="${stage}"', '${stat}', 300)`);
    expect(all).toContain('100 * SUM(positive) / (SUM(positive) + SUM(negative))');
    expect(all).toContain('SELECT MAX(ActiveSessionCount) FROM "AWS/Bedrock-AgentCore"');
    const dlq = body.widgets.find((widget) => widget.properties.title === 'Dead-letter queues (messages waiting)')!;
    expect(dlq.properties.metrics!.map((row) => row.slice(0, 2))).toEqual([
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible'],
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible'],
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible'],
    ]);
  });
});
