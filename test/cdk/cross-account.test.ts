import { Match } from 'aws-cdk-lib/assertions';
import { EXECUTION_ACCOUNT, functionId, REGION, statementsFor, statementsOfFunction, synthesize, VERIFICATION_ACCOUNT, type Synthesized } from './support/synth';

/** The zones in two accounts: the execution stack admits the verification roles by resource policy. */
const TWO_ACCOUNTS = { executionAccountId: EXECUTION_ACCOUNT, verificationAccountId: VERIFICATION_ACCOUNT, region: REGION };
const RUNTIME_ARN = `arn:aws:bedrock-agentcore:${REGION}:${EXECUTION_ACCOUNT}:runtime/slack_zone_exec-AbCdEf1234`;
const FUNCTION_ARN = `arn:aws:lambda:${REGION}:${EXECUTION_ACCOUNT}:function:ExecutionZone-FunctionUrlHandler-abc`;
const FUNCTION_URL = `https://abcdefghijklmnopqrstuvwxyz012345.lambda-url.${REGION}.on.aws/`;
const roleArn = (name: string) => `arn:aws:iam::${VERIFICATION_ACCOUNT}:role/${name}`;

describe('first step of a two-account deployment (the runtime ARN not known yet)', () => {
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthesize({ ...TWO_ACCOUNTS });
  });
  afterAll(() => synth?.cleanup());

  it('builds the ExecutionZone with its resource policies and says what the VerificationZone needs', () => {
    expect(synth.zones.verification).toBeUndefined();
    synth.execution!.resourceCountIs('AWS::BedrockAgentCore::ResourcePolicy', 2);
    const warnings = synth.zones.execution!.node.metadata.filter((m) => m.type === 'aws:cdk:warning').map((m) => String(m.data));
    expect(warnings).toEqual([expect.stringContaining('pass -c agentRuntimeArn=<the ExecutionZone output RuntimeArn>')]);
    expect(synth.nagFindings).toEqual([]);
  });
});

describe('agentcore across accounts', () => {
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthesize({ ...TWO_ACCOUNTS, agentRuntimeArn: RUNTIME_ARN });
  });
  afterAll(() => synth?.cleanup());

  it('deploys each zone to its own account', () => {
    expect(synth.zones.execution!.account).toBe(EXECUTION_ACCOUNT);
    expect(synth.zones.verification!.account).toBe(VERIFICATION_ACCOUNT);
    expect(synth.zones.verification!.dependencies).toEqual([]);
  });

  it('admits exactly the two verification roles on the runtime and on its DEFAULT endpoint', () => {
    const policies = Object.values(synth.execution!.findResources('AWS::BedrockAgentCore::ResourcePolicy')) as any[];
    expect(policies).toHaveLength(2);
    const runtime = Object.keys(synth.execution!.findResources('AWS::BedrockAgentCore::Runtime'))[0]!;
    const runtimeArn = { 'Fn::GetAtt': [runtime, 'AgentRuntimeArn'] };
    const endpointArn = { 'Fn::Join': ['', [runtimeArn, '/runtime-endpoint/DEFAULT']] };
    expect(policies.map((p) => p.Properties.ResourceArn)).toEqual([runtimeArn, endpointArn]);
    for (const [index, policy] of policies.entries()) {
      // The policy is a JSON string joined around the runtime ARN: render it as CloudFormation will.
      const parts = policy.Properties.Policy['Fn::Join'][1].map((part: unknown) => (typeof part === 'string' ? part : RUNTIME_ARN));
      // AWS::BedrockAgentCore::ResourcePolicy's schema: Policy is a JSON string of 1–20,480 characters.
      expect(parts.join('').length).toBeLessThanOrEqual(20_480);
      expect(JSON.parse(parts.join(''))).toEqual({
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'VerificationZoneCallers',
            Effect: 'Allow',
            Principal: { AWS: `arn:aws:iam::${VERIFICATION_ACCOUNT}:root` },
            Action: ['bedrock-agentcore:InvokeAgentRuntime', 'bedrock-agentcore:InvokeAgentRuntimeForUser'],
            Resource: index === 0 ? RUNTIME_ARN : `${RUNTIME_ARN}/runtime-endpoint/DEFAULT`,
            Condition: { ArnEquals: { 'aws:PrincipalArn': [roleArn('slack-zone-bridge-agent-invoker'), roleArn('slack-zone-bridge-async-result')] } },
          },
        ],
      });
    }
  });

  it('names the two caller roles so the other account can write them down, and lets them call that runtime ARN', () => {
    const v = synth.verification!;
    const resources = v.toJSON().Resources;
    for (const [prefix, name] of [
      ['agent-invoker', 'slack-zone-bridge-agent-invoker'],
      ['async-result', 'slack-zone-bridge-async-result'],
    ] as const) {
      const id = functionId(v, prefix);
      const role = resources[resources[id].Properties.Role['Fn::GetAtt'][0]];
      expect(role.Properties.RoleName).toBe(name);
      expect(resources[id].Properties.Environment.Variables).toEqual(expect.objectContaining({ TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: RUNTIME_ARN }));
      expect(statementsFor(statementsOfFunction(v, id), 'bedrock-agentcore:InvokeAgentRuntime')).toEqual([
        { Effect: 'Allow', Action: ['bedrock-agentcore:InvokeAgentRuntime', 'bedrock-agentcore:InvokeAgentRuntimeForUser'], Resource: [RUNTIME_ARN, `${RUNTIME_ARN}/runtime-endpoint/DEFAULT`] },
      ]);
    }
    const unnamed = Object.values(v.findResources('AWS::IAM::Role')).filter((r: any) => r.Properties.RoleName === undefined);
    expect(unnamed).toHaveLength(2);
  });

  it('passes the AwsSolutions checks', () => {
    expect(synth.nagFindings).toEqual([]);
  });
});

describe('https across accounts', () => {
  let synth: Synthesized;
  let accountWide: Synthesized;
  const context = { ...TWO_ACCOUNTS, transport: 'https', executionUrl: FUNCTION_URL, executionFunctionArn: FUNCTION_ARN };
  beforeAll(() => {
    synth = synthesize(context);
    accountWide = synthesize({ ...context, pinVerificationRoles: 'false' });
  });
  afterAll(() => {
    synth?.cleanup();
    accountWide?.cleanup();
  });

  /** The function's resource-based permissions, for its IAM-authenticated URL only, to each principal. */
  const expectUrlPermissions = (s: Synthesized, principals: string[]) => {
    const handler = { 'Fn::GetAtt': [functionId(s.execution!, 'Execution zone behind a function URL'), 'Arn'] };
    for (const principal of principals) {
      s.execution!.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunctionUrl', FunctionName: handler, Principal: principal, FunctionUrlAuthType: 'AWS_IAM' });
      s.execution!.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', FunctionName: handler, Principal: principal, InvokedViaFunctionUrl: true });
    }
    const granted = Object.values(s.execution!.findResources('AWS::Lambda::Permission')).map((p: any) => p.Properties.Principal);
    expect([...new Set(granted)].sort()).toEqual([...principals].sort());
  };

  it('by default admits exactly the two verification roles on the function, for its IAM-authenticated URL only', () => {
    expectUrlPermissions(synth, [roleArn('slack-zone-bridge-agent-invoker'), roleArn('slack-zone-bridge-async-result')]);
  });

  it('with pinVerificationRoles=false (first deploy, before the roles exist) admits their account instead', () => {
    expectUrlPermissions(accountWide, [VERIFICATION_ACCOUNT]);
  });

  it('names custom caller role names in the function URL policy', () => {
    const custom = synthesize({ ...context, invokerRoleName: 'ops-invoker', pollerRoleName: 'ops-poller' });
    try {
      expectUrlPermissions(custom, [roleArn('ops-invoker'), roleArn('ops-poller')]);
      expect(custom.nagFindings).toEqual([]);
    } finally {
      custom.cleanup();
    }
  });

  it('warns on the first step that the pinned roles must exist, and how to deploy before they do', () => {
    const first = synthesize({ ...TWO_ACCOUNTS, transport: 'https' });
    try {
      expect(first.zones.verification).toBeUndefined();
      const warnings = first.zones.execution!.node.metadata.filter((m) => m.type === 'aws:cdk:warning').map((m) => String(m.data));
      expect(warnings).toEqual([expect.stringMatching(/-c executionUrl=.*slack-zone-bridge-agent-invoker and slack-zone-bridge-async-result.*-c pinVerificationRoles=false/)]);
      expectUrlPermissions(first, [roleArn('slack-zone-bridge-agent-invoker'), roleArn('slack-zone-bridge-async-result')]);
    } finally {
      first.cleanup();
    }
  });

  it('gives the verification roles the identity half: that URL, that function, nothing else', () => {
    const v = synth.verification!;
    for (const prefix of ['agent-invoker', 'async-result']) {
      const id = functionId(v, prefix);
      expect(v.toJSON().Resources[id].Properties.Environment.Variables).toEqual(
        expect.objectContaining({ TRANSPORT: 'https', EXECUTION_URL: FUNCTION_URL, EXECUTION_AUTH: 'sigv4' }),
      );
      const lambda = statementsOfFunction(v, id).filter((s) => [s.Action].flat().some((a: string) => a.startsWith('lambda:')));
      expect(lambda).toEqual([
        { Effect: 'Allow', Action: 'lambda:InvokeFunctionUrl', Resource: FUNCTION_ARN, Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } } },
        { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: FUNCTION_ARN, Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } } },
      ]);
    }
    v.resourceCountIs('AWS::Lambda::Permission', 1); // API Gateway → slack-events only
    v.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'apigateway.amazonaws.com', Action: 'lambda:InvokeFunction', SourceArn: Match.anyValue() });
  });

  it('passes the AwsSolutions checks, both ways', () => {
    expect(synth.nagFindings).toEqual([]);
    expect(accountWide.nagFindings).toEqual([]);
  });
});
