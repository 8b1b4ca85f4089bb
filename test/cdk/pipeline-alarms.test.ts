import { transportFailure } from '../../src/protocols/transport-failure';
import { classifyAgentCoreFault } from '../../src/transport/agentcore';
import { TransportError } from '../../src/transport/transport';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Capture, Match, type Template } from 'aws-cdk-lib/assertions';
import { VERIFICATION_SERVICES } from '../../cdk/constructs/pipeline-alarms';
import { METRICS_NAMESPACE, PipelineMetrics, slackApiErrorKind } from '../../src/observability/metrics';
import { functionId, onlyResource, SINGLE_ACCOUNT, synthesize, type Synthesized } from './support/synth';

/**
 * Alarms on the verification functions' own EMF metrics. An alarm watches one series, named by
 * its exact dimension set, so these tests hold the alarms and what PipelineMetrics really writes
 * side by side.
 */
let synth: Synthesized;
let template: Template;

beforeAll(() => {
  synth = synthesize({ ...SINGLE_ACCOUNT });
  template = synth.verification!;
});
afterAll(() => synth?.cleanup());

type Emf = { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] }; [key: string]: unknown };

/** The EMF records `emit` writes to stdout (where Lambda's log agent picks them up). */
function emitted(emit: () => void): Emf[] {
  const disabled = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  const chunks: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    emit();
  } finally {
    write.mockRestore();
    if (disabled === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = disabled;
  }
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Emf);
}

/** The one EMF record of `metricName`: its dimension sets and the values of its dimensions. */
function recordOf(records: Emf[], metricName: string): { dimensionSets: string[][]; values: Record<string, unknown> } {
  const found = records.filter((r) => r._aws.CloudWatchMetrics[0]!.Metrics.some((m) => m.Name === metricName));
  expect(found).toHaveLength(1);
  const directive = found[0]!._aws.CloudWatchMetrics[0]!;
  expect(directive.Namespace).toBe(METRICS_NAMESPACE);
  const values = Object.fromEntries(directive.Dimensions.flat().map((name) => [name, found[0]![name]]));
  return { dimensionSets: directive.Dimensions, values };
}

const topic = () => ({ Ref: onlyResource(template, 'AWS::SNS::Topic').id });

describe('Slack API failures', () => {
  it.each([
    ['channel_not_found', 'client'],
    ['not_in_channel', 'client'],
    ['invalid_auth', 'client'],
    ['http_403', 'client'],
    ['unknown_error', 'client'],
    ['internal_error', 'server'],
    ['service_unavailable', 'server'],
    ['request_error', 'server'],
    ['http_503', 'server'],
    ['http_408', 'server'],
    ['ratelimited', 'throttled'],
    ['http_429', 'throttled'],
  ])('classifies %s as %s', (code, kind) => {
    expect(slackApiErrorKind(code)).toBe(kind);
  });

  it.each([
    ['client', 1],
    ['server', 5],
    ['throttled', 5],
  ])('alarms on %s errors (≥ %i in 5 minutes) on exactly the series slackApiError writes', (kind, threshold) => {
    const code = { client: 'not_in_channel', server: 'internal_error', throttled: 'ratelimited' }[kind]!;
    const records = emitted(() => PipelineMetrics.create(VERIFICATION_SERVICES.poster).slackApiError(code));
    // The per-code metric keeps the service; the aggregate the alarm watches has `kind` alone.
    expect(recordOf(records, 'SlackApiErrors')).toEqual({ dimensionSets: [['service', 'code']], values: { service: 'slack-poster', code } });
    const aggregate = recordOf(records, 'SlackApiFailures');
    expect(aggregate).toEqual({ dimensionSets: [['kind']], values: { kind } });

    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: 'SlackApiFailures',
      Dimensions: Object.entries(aggregate.values).map(([Name, Value]) => ({ Name, Value })),
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 1,
      Threshold: threshold,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topic()],
    });
  });
});

describe('replies lost and messages abandoned', () => {
  /** The Metrics Insights query of the alarm that watches `metricName` for `service`. */
  const alarmQuery = (metricName: string, service: string) => {
    const expression = new Capture();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [{ Id: Match.anyValue(), Expression: expression, Period: 300, ReturnData: true, Label: `${metricName} (${service})` }],
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topic()],
    });
    return expression.asString();
  };

  it.each([
    ['RepliesLost', VERIFICATION_SERVICES.poster, (m: PipelineMetrics) => m.replyLost('not_in_channel')],
    ['MessagesAbandoned', VERIFICATION_SERVICES.invoker, (m: PipelineMetrics) => m.messageAbandoned('execute')],
    ['MessagesAbandoned', VERIFICATION_SERVICES.poller, (m: PipelineMetrics) => m.messageAbandoned('poll')],
  ])('alarms on any %s from %s: every series of the metric with that service, whatever else it carries', (metricName, service, emit) => {
    const query = alarmQuery(metricName, service);
    expect(query).toBe(`SELECT SUM(${metricName}) FROM "${METRICS_NAMESPACE}" WHERE service = '${service}'`);
    // What the function writes carries that service (and maybe more dimensions: the query sums them all).
    const record = recordOf(
      emitted(() => emit(PipelineMetrics.create(service))),
      metricName,
    );
    expect(record.dimensionSets.every((set) => set.includes('service'))).toBe(true);
    expect(record.values.service).toBe(service);
  });

  it('names each function by the service its handler gives Powertools', () => {
    for (const service of Object.values(VERIFICATION_SERVICES)) {
      const handler = fs.readFileSync(path.join(__dirname, '..', '..', 'lambdas', 'verification', `${service}.ts`), 'utf8');
      expect(handler).toContain(`functionContext('${service}')`);
      // …and the stack deploys that handler (its description starts with the service name).
      expect(functionId(template, `${service}:`)).toEqual(expect.any(String));
    }
  });
});

it('alarms on AgentCore refusing a new session (the account at its session quota): the outcome the transport gives it', () => {
  const alarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find((candidate: any) => candidate.Properties.Metrics?.some((m: any) => String(m.Expression).includes('Outcomes'))) as any;
  expect(alarm.Properties.Metrics[0].Expression).toBe(`SELECT SUM(Outcomes) FROM "${METRICS_NAMESPACE}" WHERE code = 'transport:session-quota'`);
  expect(alarm.Properties.Threshold).toBe(1);
  // The code it watches is the one the transport and the protocols produce for ServiceQuotaExceededException.
  expect(transportFailure(new TransportError('quota', classifyAgentCoreFault('ServiceQuotaExceededException', 402)[0], true)).code).toBe('transport:session-quota');
});

it('adds the seven alarms to the verification zone only, and stays nag-clean', () => {
  const pipeline = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((alarm: any) =>
    alarm.Properties.MetricName === 'SlackApiFailures' || alarm.Properties.Metrics?.some((m: any) => String(m.Expression).startsWith('SELECT')),
  );
  expect(pipeline).toHaveLength(7);
  expect(Object.keys(synth.execution!.findResources('AWS::CloudWatch::Alarm', { Properties: { Namespace: METRICS_NAMESPACE } }))).toEqual([]);
  expect(synth.nagFindings).toEqual([]);
});
