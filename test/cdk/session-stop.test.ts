import { Match } from 'aws-cdk-lib/assertions';
import { activeSessionQuota } from '../../cdk/constructs/agentcore-execution-host';
import { functionId, onlyResource, SINGLE_ACCOUNT, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/**
 * AGENTCORE_STOP_SESSION in a deployment (docs/operations.md, "AgentCore sessions"): the callers
 * may end a session only when the setting asks for it, and the runtime alarms on its live sessions
 * near the Region's quota.
 */
const stopActions = (synth: Synthesized, prefix: string) =>
  statementsOfFunction(synth.verification!, functionId(synth.verification!, prefix)).filter((statement) => [statement.Action].flat().includes('bedrock-agentcore:StopRuntimeSession'));

describe('AgentCore session stop (transport=agentcore)', () => {
  let plain: Synthesized;
  let stopping: Synthesized;
  beforeAll(() => {
    plain = synthesize({ ...SINGLE_ACCOUNT });
    stopping = synthesize({ ...SINGLE_ACCOUNT, verificationEnvironment: JSON.stringify({ AGENTCORE_STOP_SESSION: 'quiet-2m' }) });
  });
  afterAll(() => {
    plain?.cleanup();
    stopping?.cleanup();
  });

  it('grants no StopRuntimeSession by default (never: the idle timeout ends sessions)', () => {
    for (const prefix of ['agent-invoker', 'async-result']) expect(stopActions(plain, prefix)).toEqual([]);
  });

  it('grants StopRuntimeSession on the runtime and its endpoint to agent-invoker and async-result when the setting ends sessions', () => {
    for (const prefix of ['agent-invoker', 'async-result']) {
      const [statement, ...more] = stopActions(stopping, prefix);
      expect(more).toEqual([]);
      expect(statement.Effect).toBe('Allow');
      expect(JSON.stringify(statement.Resource)).toContain('runtime-endpoint/DEFAULT');
      expect(JSON.stringify(statement.Resource)).toContain('AgentRuntimeArn');
    }
  });

  it('alarms on ActiveSessionCount at 80 % of the Region\'s quota, to the execution zone\'s topic', () => {
    const topic = onlyResource(plain.execution!, 'AWS::SNS::Topic');
    plain.execution!.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [Match.objectLike({ Expression: 'SELECT MAX(ActiveSessionCount) FROM "AWS/Bedrock-AgentCore"', Period: 60 })],
      Threshold: 4_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ Ref: topic.id }],
    });
    expect([activeSessionQuota('us-east-1'), activeSessionQuota('us-west-2'), activeSessionQuota('eu-west-1'), activeSessionQuota('${Token[AWS.Region.1]}')]).toEqual([5_000, 5_000, 2_500, 2_500]);
  });
});
