import { Token } from 'aws-cdk-lib';
import { Capture, Match, type Template } from 'aws-cdk-lib/assertions';
import { STANDARD_ACKNOWLEDGEMENTS } from '../../cdk/constructs/nag-acknowledgements';
import { acknowledgedByStack, EXECUTION_ACCOUNT, functionId, onlyResource, REGION, SINGLE_ACCOUNT, statementsFor, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/** The default deployment: transport=agentcore, both zones in one account and region. */
let synth: Synthesized;
let execution: Template;
let verification: Template;

beforeAll(() => {
  synth = synthesize({ ...SINGLE_ACCOUNT });
  execution = synth.execution!;
  verification = synth.verification!;
});
afterAll(() => synth?.cleanup());

/** The AgentCore runtime's execution role, and every statement of its policies. */
const runtimeRole = (t: Template = execution) =>
  onlyResource(t, 'AWS::IAM::Role', { AssumeRolePolicyDocument: Match.objectLike({ Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'bedrock-agentcore.amazonaws.com' } })]) }) });
const runtimeStatements = (t: Template = execution): any[] => {
  const role = runtimeRole(t);
  return Object.values(t.findResources('AWS::IAM::Policy'))
    .filter((p: any) => p.Properties.Roles.some((r: any) => r.Ref === role.id))
    .flatMap((p: any) => p.Properties.PolicyDocument.Statement);
};

describe('ExecutionZone (agentcore)', () => {
  it('runs the runtime host on AgentCore from code: NODE_22, main.js, HTTP, lifecycle from context', () => {
    execution.resourceCountIs('AWS::BedrockAgentCore::Runtime', 1);
    execution.hasResourceProperties('AWS::BedrockAgentCore::Runtime', {
      AgentRuntimeArtifact: { CodeConfiguration: { Runtime: 'NODE_22', EntryPoint: ['main.js'], Code: { S3: Match.objectLike({ Prefix: Match.stringLikeRegexp('\\.zip$') }) } } },
      ProtocolConfiguration: 'HTTP',
      NetworkConfiguration: { NetworkMode: 'PUBLIC' },
      LifecycleConfiguration: { IdleRuntimeSessionTimeout: 300, MaxLifetime: 28800 },
    });
  });

  it('configures the runtime for Bedrock and the DynamoDB task store', () => {
    const table = onlyResource(execution, 'AWS::DynamoDB::Table');
    execution.hasResourceProperties('AWS::BedrockAgentCore::Runtime', {
      EnvironmentVariables: Match.objectLike({
        EXECUTOR: 'bedrock',
        BEDROCK_MODEL_ID: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
        TASK_STORE: 'dynamodb',
        TASK_TABLE_NAME: { Ref: table.id },
        SYNC_BUDGET_MS: '5000',
        TASK_TIMEOUT_MS: '600000',
        AWS_REGION: REGION,
      }),
    });
  });

  it('keeps tasks in an on-demand table with TTL and point-in-time recovery, retained on delete', () => {
    execution.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        KeySchema: [{ AttributeName: 'task_id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'task_id', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('lets the runtime invoke exactly the configured model: the US inference profile and the model in its routing regions', () => {
    const statements = runtimeStatements();
    const bedrock = statements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('bedrock:')));
    expect(bedrock).toHaveLength(1);
    expect(bedrock[0].Action).toEqual(['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream']);
    const arns = bedrock[0].Resource.map((r: any) => JSON.stringify(r));
    expect(arns).toHaveLength(5);
    expect(arns[0]).toMatch(/:bedrock:us-east-1:.*:inference-profile\/us\.anthropic\.claude-3-5-haiku-20241022-v1:0"/);
    for (const region of ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2']) {
      expect(arns.some((a: string) => a.includes(`:bedrock:${region}::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0`))).toBe(true);
    }
    expect(statementsFor(statements, 'dynamodb:GetItem')).toEqual([
      expect.objectContaining({ Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], Resource: { 'Fn::GetAtt': [onlyResource(execution, 'AWS::DynamoDB::Table').id, 'Arn'] } }),
    ]);
  });

  it("lets the runtime's role read its own code zip and nothing else of the assets bucket", () => {
    const bucket = new Capture();
    const key = new Capture();
    execution.hasResourceProperties('AWS::BedrockAgentCore::Runtime', {
      AgentRuntimeArtifact: { CodeConfiguration: Match.objectLike({ Code: { S3: { Bucket: bucket, Prefix: key } } }) },
    });
    expect(bucket.asString()).toBe(`cdk-hnb659fds-assets-${EXECUTION_ACCOUNT}-${REGION}`);
    execution.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: runtimeRole().id }],
      PolicyDocument: { Statement: Match.arrayWith([{ Effect: 'Allow', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket.asString()}/${key.asString()}` }]) },
    });
    const s3 = runtimeStatements().filter((s) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
    expect(s3).toEqual([{ Effect: 'Allow', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket.asString()}/${key.asString()}` }]);
    // The runtime is created (and updated) only once its role may read the new key.
    const runtime = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime');
    const policy = onlyResource(execution, 'AWS::IAM::Policy', { Roles: [{ Ref: runtimeRole().id }] });
    expect(runtime.resource.DependsOn).toContain(policy.id);
  });

  it('needs no resource policy for a verification zone in the same account', () => {
    execution.resourceCountIs('AWS::BedrockAgentCore::ResourcePolicy', 0);
    execution.resourceCountIs('AWS::Lambda::Url', 0);
  });

  it('alarms on runtime system errors to its own topic', () => {
    const topic = onlyResource(execution, 'AWS::SNS::Topic');
    execution.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Bedrock-AgentCore',
      MetricName: 'SystemErrors',
      AlarmActions: [{ Ref: topic.id }],
    });
  });

  it('outputs the runtime ARN for a verification zone elsewhere', () => {
    execution.hasOutput('RuntimeArn', { Value: { 'Fn::GetAtt': [onlyResource(execution, 'AWS::BedrockAgentCore::Runtime').id, 'AgentRuntimeArn'] } });
  });
});

describe('VerificationZone (agentcore)', () => {
  it('points agent-invoker and async-result at the runtime: TRANSPORT=agentcore and its ARN from the ExecutionZone output', () => {
    for (const prefix of ['agent-invoker', 'async-result']) {
      const env = verification.toJSON().Resources[functionId(verification, prefix)].Properties.Environment.Variables;
      expect(env.TRANSPORT).toBe('agentcore');
      expect(env.EXECUTION_PROTOCOL).toBe('execute-task');
      expect(env.AGENTCORE_RUNTIME_ARN).toEqual({ 'Fn::GetStackOutput': expect.objectContaining({ StackName: 'ExecutionZone', Region: REGION }) });
      expect(env).not.toHaveProperty('EXECUTION_URL');
      expect(env).not.toHaveProperty('AGENTCORE_QUALIFIER');
    }
  });

  it('lets exactly the invoker and the poller call the runtime and its DEFAULT endpoint, nothing wider', () => {
    for (const prefix of ['agent-invoker', 'async-result']) {
      const invoke = statementsFor(statementsOfFunction(verification, functionId(verification, prefix)), 'bedrock-agentcore:InvokeAgentRuntime');
      expect(invoke).toHaveLength(1);
      const [runtimeArn, endpointArn] = invoke[0].Resource;
      expect(invoke[0]).toEqual({ Effect: 'Allow', Action: ['bedrock-agentcore:InvokeAgentRuntime', 'bedrock-agentcore:InvokeAgentRuntimeForUser'], Resource: [runtimeArn, endpointArn] });
      expect(runtimeArn).toEqual({ 'Fn::GetStackOutput': expect.objectContaining({ StackName: 'ExecutionZone' }) });
      expect(endpointArn).toEqual({ 'Fn::Join': ['', [runtimeArn, '/runtime-endpoint/DEFAULT']] });
    }
    for (const prefix of ['slack-events', 'slack-poster']) {
      expect(statementsFor(statementsOfFunction(verification, functionId(verification, prefix)), 'bedrock-agentcore:InvokeAgentRuntime')).toEqual([]);
    }
    // InvokeAgentRuntimeForUser (runtimeUserId: docs/contract.md, "Who is asking") only ever beside InvokeAgentRuntime, on the same resources.
    const statements = Object.values(verification.findResources('AWS::IAM::Policy')).flatMap((p: any) => p.Properties.PolicyDocument.Statement as any[]);
    const forUser = statements.filter((s) => [s.Action].flat().includes('bedrock-agentcore:InvokeAgentRuntimeForUser'));
    expect(forUser.length).toBeGreaterThan(0);
    for (const statement of forUser) expect([statement.Action].flat()).toEqual(['bedrock-agentcore:InvokeAgentRuntime', 'bedrock-agentcore:InvokeAgentRuntimeForUser']);
  });

  it('makes the verification zone depend on the execution zone it reads', () => {
    expect(synth.zones.verification!.dependencies).toContain(synth.zones.execution);
  });
});

describe('AWS Control Tower proactive controls (governance=standard, the default)', () => {
  const resourcesOf = (t: Template, type: string) => Object.entries(t.findResources(type)) as [string, { Properties: Record<string, any> }][];

  it('fails no control that is not acknowledged, and acknowledges exactly the ones governance=strict meets, each with its reason', () => {
    expect(synth.controls.violations).toEqual([]);
    expect(acknowledgedByStack(synth.controls)).toEqual({
      ExecutionZone: ['ct-dynamodb-pr-2'],
      VerificationZone: ['ct-apigateway-pr-1', 'ct-apigateway-pr-2', 'ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-dynamodb-pr-2', 'ct-lambda-pr-3'],
    });
    for (const finding of synth.controls.acknowledged) expect(finding.reason).toMatch(/^CT\.[A-Z]+\.PR\.\d+: .{40,}/);
    expect(Object.keys(STANDARD_ACKNOWLEDGEMENTS).sort()).toEqual(['ct-apigateway-pr-1', 'ct-apigateway-pr-2', 'ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-dynamodb-pr-2', 'ct-lambda-pr-3']);
  });

  it('meets CT.SQS.PR.1 itself: every DLQ says it is one (RedriveAllowPolicy, what SQS does without it), every other queue has a DLQ', () => {
    const queues = resourcesOf(verification, 'AWS::SQS::Queue');
    const dlqs = queues.filter(([, q]) => q.Properties.RedriveAllowPolicy);
    expect(dlqs).toHaveLength(3);
    for (const [, dlq] of dlqs) expect(dlq.Properties.RedriveAllowPolicy).toEqual({ redrivePermission: 'allowAll' });
    for (const [, queue] of queues.filter(([, q]) => !q.Properties.RedriveAllowPolicy)) expect(queue.Properties.RedrivePolicy.deadLetterTargetArn).toBeDefined();
  });

  it('meets CT.LAMBDA.PR.2 itself: API Gateway may invoke slack-events from this account (a literal) and this API method only', () => {
    const permission = onlyResource(verification, 'AWS::Lambda::Permission', { Principal: 'apigateway.amazonaws.com' });
    expect(permission.resource.Properties.SourceAccount).toBe(EXECUTION_ACCOUNT);
    expect(JSON.stringify(permission.resource.Properties.SourceArn)).toContain('/POST/slack/events');
  });

  it('allow-lists no request header on the runtime, so no published schema of AWS::BedrockAgentCore::Runtime can refuse it (cfn-lint E3031)', () => {
    // The us-east-1 schema cfn-lint 1.51 ships: Authorization or the custom-header prefix only.
    const schemaPattern = /^(Authorization|X-Amzn-Bedrock-AgentCore-Runtime-Custom-[a-zA-Z0-9_-]+)$/;
    const runtime = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime');
    const allowlist: string[] = runtime.resource.Properties.RequestHeaderConfiguration?.RequestHeaderAllowlist ?? [];
    expect(allowlist.filter((header) => !schemaPattern.test(header))).toEqual([]);
    expect(allowlist).toEqual([]);
  });
});

describe('the deployment without AWS credentials (env-agnostic, as `cdk synth` offline)', () => {
  let agnostic: Synthesized;
  beforeAll(() => {
    agnostic = synthesize({});
  });
  afterAll(() => agnostic?.cleanup());

  it('synthesizes both zones with no account or region and passes cdk-nag', () => {
    expect(Token.isUnresolved(agnostic.zones.execution!.account)).toBe(true);
    expect(Token.isUnresolved(agnostic.zones.verification!.region)).toBe(true);
    expect(agnostic.nagFindings).toEqual([]);
    agnostic.execution!.resourceCountIs('AWS::BedrockAgentCore::Runtime', 1);
  });

  it('acknowledges CT.LAMBDA.PR.2 on the API permission only here: its SourceAccount is the AWS::AccountId parameter, which the rule cannot read', () => {
    expect(agnostic.controls.violations).toEqual([]);
    const permission = onlyResource(agnostic.verification!, 'AWS::Lambda::Permission', { Principal: 'apigateway.amazonaws.com' });
    expect(permission.resource.Properties.SourceAccount).toEqual({ Ref: 'AWS::AccountId' });
    const lambdaPr2 = agnostic.controls.acknowledged.filter((f) => f.control === 'ct-lambda-pr-2');
    expect(lambdaPr2.flatMap((f) => f.paths)).toEqual([expect.stringMatching(/^VerificationZone\/SlackEventsApi\/Api\/Default\/slack\/events\/POST\/ApiPermission\./)]);
    expect(acknowledgedByStack(agnostic.controls).VerificationZone).toContain('ct-lambda-pr-2');
  });

  it('still grants the runtime only its code object: the key under the bootstrap bucket, no wildcard', () => {
    const key = new Capture();
    agnostic.execution!.hasResourceProperties('AWS::BedrockAgentCore::Runtime', { AgentRuntimeArtifact: { CodeConfiguration: Match.objectLike({ Code: { S3: Match.objectLike({ Prefix: key }) } }) } });
    const s3 = runtimeStatements(agnostic.execution!).filter((s) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
    expect(s3).toHaveLength(1);
    expect(s3[0].Action).toBe('s3:GetObject');
    const resource = JSON.stringify(s3[0].Resource);
    expect(resource).toContain(`/${key.asString()}`);
    expect(resource).toContain('cdk-hnb659fds-assets-');
    expect(resource).not.toContain('*');
  });
});

it('passes the AwsSolutions checks with every finding acknowledged per resource', () => {
  expect(synth.nagFindings).toEqual([]);
});
