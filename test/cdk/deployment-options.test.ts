import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { acknowledgeWildcards } from '../../cdk/constructs/nag-acknowledgements';
import { buildZones } from '../../cdk/zones';
import { CDK_JSON, functionId, onlyResource, REGION, SINGLE_ACCOUNT, statementsFor, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/** Context switches beyond the two transports: external execution zones, WAF, model ids, a swap. */
const synths: Synthesized[] = [];
const synth = (context: Record<string, unknown>) => {
  const result = synthesize({ ...SINGLE_ACCOUNT, ...context });
  synths.push(result);
  return result;
};
afterAll(() => synths.forEach((s) => s.cleanup()));

describe('an execution zone this app does not deploy', () => {
  it('https with a bearer token: no ExecutionZone stack; the callers may read that one secret', () => {
    const s = synth({ externalExecution: 'true', transport: 'https', executionUrl: 'https://agents.example.com/rpc', executionBearerSecretName: 'prod/agent-token', executionProtocol: 'a2a', a2aVersion: '0.3' });
    expect(s.zones.execution).toBeUndefined();
    expect(s.app.node.tryFindChild('ExecutionZone')).toBeUndefined();
    for (const prefix of ['agent-invoker', 'async-result']) {
      const id = functionId(s.verification!, prefix);
      expect(s.verification!.toJSON().Resources[id].Properties.Environment.Variables).toEqual(
        expect.objectContaining({
          TRANSPORT: 'https',
          EXECUTION_URL: 'https://agents.example.com/rpc',
          EXECUTION_AUTH: 'bearer',
          EXECUTION_BEARER_SECRET_ARN: 'prod/agent-token',
          EXECUTION_PROTOCOL: 'a2a',
          A2A_VERSION: '0.3',
        }),
      );
      const reads = statementsFor(statementsOfFunction(s.verification!, id), 'secretsmanager:GetSecretValue');
      expect(reads).toHaveLength(1);
      expect(JSON.stringify(reads[0].Resource)).toContain(':secret:prod/agent-token-??????');
      expect(statementsOfFunction(s.verification!, id).flatMap((st) => [st.Action].flat()).filter((a: string) => a.startsWith('lambda:') || a.startsWith('bedrock-agentcore:'))).toEqual([]);
    }
    expect(s.nagFindings).toEqual([]);
  });

  it('agentcore by ARN and endpoint: the callers may invoke that runtime through that endpoint', () => {
    const arn = `arn:aws:bedrock-agentcore:us-west-2:333333333333:runtime/other_agent-XyZ0123456`;
    const s = synth({ externalExecution: 'true', agentRuntimeArn: arn, agentRuntimeQualifier: 'prod' });
    expect(s.zones.execution).toBeUndefined();
    const id = functionId(s.verification!, 'agent-invoker');
    expect(s.verification!.toJSON().Resources[id].Properties.Environment.Variables).toEqual(
      expect.objectContaining({ TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: arn, AGENTCORE_QUALIFIER: 'prod' }),
    );
    expect(statementsFor(statementsOfFunction(s.verification!, id), 'bedrock-agentcore:InvokeAgentRuntime')).toEqual([
      { Effect: 'Allow', Action: ['bedrock-agentcore:InvokeAgentRuntime', 'bedrock-agentcore:InvokeAgentRuntimeForUser'], Resource: [arn, `${arn}/runtime-endpoint/prod`] },
    ]);
    expect(s.nagFindings).toEqual([]);
  });
});

describe('waf (on by default)', () => {
  it('attaches a regional web ACL with the common rule set (body rules counted) and a per-IP rate rule to the stage', () => {
    const s = synth({ wafRateLimit: '3000' });
    const acl = onlyResource(s.verification!, 'AWS::WAFv2::WebACL');
    expect(acl.resource.Properties).toEqual(
      expect.objectContaining({
        Scope: 'REGIONAL',
        DefaultAction: { Allow: {} },
        Rules: [
          expect.objectContaining({
            Name: 'AWSManagedRulesCommonRuleSet',
            OverrideAction: { None: {} },
            Statement: {
              ManagedRuleGroupStatement: expect.objectContaining({
                VendorName: 'AWS',
                Name: 'AWSManagedRulesCommonRuleSet',
                RuleActionOverrides: expect.arrayContaining([{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }]),
              }),
            },
          }),
          expect.objectContaining({ Name: 'RatePerIp', Action: { Block: {} }, Statement: { RateBasedStatement: { Limit: 3000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } } }),
        ],
      }),
    );
    const stage = onlyResource(s.verification!, 'AWS::ApiGateway::Stage').id;
    s.verification!.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [acl.id, 'Arn'] },
      ResourceArn: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([{ Ref: stage }])] }),
    });
    // APIG3 is met by the web ACL rather than acknowledged.
    expect(s.nagFindings).toEqual([]);
    expect(acknowledged(s.zones.verification!.api.api.deploymentStage)).not.toHaveProperty('Annotation::AwsSolutions-APIG3');
  });

  it('waf=false removes it; APIG3 is then acknowledged on the stage with the reason', () => {
    const s = synth({ waf: 'false' });
    expect(Object.keys(s.verification!.findResources('AWS::WAFv2::WebACL'))).toEqual([]);
    expect(Object.keys(s.verification!.findResources('AWS::WAFv2::WebACLAssociation'))).toEqual([]);
    expect(acknowledged(s.zones.verification!.api.api.deploymentStage)).toEqual(
      expect.objectContaining({ 'Annotation::AwsSolutions-APIG3': expect.stringContaining('context waf=false; it is on by default') }),
    );
    expect(s.nagFindings).toEqual([]);
  });
});

/** The cdk-nag acknowledgements recorded on one construct, by rule. */
function acknowledged(scope: IConstruct): Record<string, string> {
  return Object.assign({}, ...scope.node.metadata.filter((m) => m.type === 'aws:cdk:acknowledged-rules').map((m) => m.data as Record<string, string>));
}

describe('bedrockModelId', () => {
  it('an on-demand model: the foundation model in the stack region only', () => {
    const s = synth({ bedrockModelId: 'anthropic.claude-3-5-haiku-20241022-v1:0' });
    const statements = Object.values(s.execution!.findResources('AWS::IAM::Policy')).flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    expect(statementsFor(statements, 'bedrock:InvokeModel')).toEqual([
      // Converse and, for answers shown live, ConverseStream.
      { Effect: 'Allow', Action: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'], Resource: `arn:aws:bedrock:${REGION}::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0` },
    ]);
  });

  it('a global inference profile: the model in every region, acknowledged with its reason', () => {
    const s = synth({ bedrockModelId: 'global.anthropic.claude-sonnet-4-5-20250929-v1:0' });
    const statements = Object.values(s.execution!.findResources('AWS::IAM::Policy')).flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    expect(statementsFor(statements, 'bedrock:InvokeModel')).toEqual([
      {
        Effect: 'Allow',
        Action: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
        Resource: [
          'arn:aws:bedrock:*::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0',
          `arn:aws:bedrock:${REGION}:111111111111:inference-profile/global.anthropic.claude-sonnet-4-5-20250929-v1:0`,
        ],
      },
    ]);
    expect(s.nagFindings).toEqual([]);
  });

  it('an inference profile with explicit routing regions', () => {
    const s = synth({ bedrockModelId: 'eu.amazon.nova-lite-v1:0', bedrockModelRegions: 'eu-west-1,eu-central-1' });
    const statements = Object.values(s.execution!.findResources('AWS::IAM::Policy')).flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    const resources = statementsFor(statements, 'bedrock:InvokeModel')[0].Resource;
    expect([...resources].sort()).toEqual([
      'arn:aws:bedrock:eu-central-1::foundation-model/amazon.nova-lite-v1:0',
      'arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-lite-v1:0',
      `arn:aws:bedrock:${REGION}:111111111111:inference-profile/eu.amazon.nova-lite-v1:0`,
    ]);
  });
});

describe('swapping the transport', () => {
  it('executionHosts=agentcore,https runs both hosts on one task table while the verification zone uses one', () => {
    const s = synth({ transport: 'https', executionHosts: 'agentcore,https' });
    const e = s.execution!;
    e.resourceCountIs('AWS::BedrockAgentCore::Runtime', 1);
    e.resourceCountIs('AWS::Lambda::Url', 1);
    e.resourceCountIs('AWS::DynamoDB::Table', 1);
    const table = onlyResource(e, 'AWS::DynamoDB::Table').id;
    e.hasResourceProperties('AWS::BedrockAgentCore::Runtime', { EnvironmentVariables: Match.objectLike({ TASK_TABLE_NAME: { Ref: table } }) });
    e.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ TASK_TABLE_NAME: { Ref: table } }) } });
    const env = s.verification!.toJSON().Resources[functionId(s.verification!, 'agent-invoker')].Properties.Environment.Variables;
    expect(env.TRANSPORT).toBe('https');
    expect(s.nagFindings).toEqual([]);
  });
});

describe('Slack settings', () => {
  it('the invoker reads the bot token even without reactions (thread context, files), and secrets can be imported by name', () => {
    const s = synth({ signingSecretName: 'slack/signing', botTokenSecretName: 'slack/bot' });
    s.verification!.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const resources = s.verification!.toJSON().Resources;
    expect(resources[functionId(s.verification!, 'slack-events')].Properties.Environment.Variables.SLACK_SIGNING_SECRET_ARN).toBe('slack/signing');
    expect(resources[functionId(s.verification!, 'slack-poster')].Properties.Environment.Variables.SLACK_BOT_TOKEN_ARN).toBe('slack/bot');
    const invokerEnv = resources[functionId(s.verification!, 'agent-invoker')].Properties.Environment.Variables;
    expect(invokerEnv.SLACK_REACTIONS).toBe('false');
    expect(invokerEnv.SLACK_BOT_TOKEN_ARN).toBe('slack/bot');
    expect(statementsFor(statementsOfFunction(s.verification!, functionId(s.verification!, 'agent-invoker')), 'secretsmanager:GetSecretValue')).not.toEqual([]);
    // Follow-ups without a mention: on by default, in the two functions that use the record.
    for (const name of ['slack-events', 'slack-poster']) expect(resources[functionId(s.verification!, name)].Properties.Environment.Variables.THREAD_FOLLOW_UPS).toBe('true');
  });

  it('-c streamReplies=false turns live answers off in the three functions that show them; the invoker takes one task at a time', () => {
    const on = synth({}).verification!;
    const off = synth({ streamReplies: 'false' }).verification!;
    for (const name of ['agent-invoker', 'async-result', 'slack-poster']) {
      expect(on.toJSON().Resources[functionId(on, name)].Properties.Environment.Variables.STREAM_REPLIES).toBe('true');
      expect(off.toJSON().Resources[functionId(off, name)].Properties.Environment.Variables.STREAM_REPLIES).toBe('false');
    }
    // A task may carry tens of MB of files: never five of them in one invocation.
    const invoker = functionId(on, 'agent-invoker');
    const mapping = Object.values(on.toJSON().Resources as Record<string, any>).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === invoker);
    expect(mapping.Properties.BatchSize).toBe(1);
  });

  it('-c userDailyTokenBudget / channelDailyTokenBudget / teamDailyTokenBudget reach the functions that check and settle budgets, and no other', () => {
    const s = synth({ userDailyTokenBudget: '200000', teamDailyTokenBudget: '20000000' });
    const env = (name: string) => s.verification!.toJSON().Resources[functionId(s.verification!, name)].Properties.Environment.Variables;
    for (const name of ['agent-invoker', 'async-result']) {
      expect(env(name)).toMatchObject({ USER_DAILY_TOKEN_BUDGET: '200000', TEAM_DAILY_TOKEN_BUDGET: '20000000' });
      expect(env(name)).not.toHaveProperty('CHANNEL_DAILY_TOKEN_BUDGET');
    }
    for (const name of ['slack-events', 'slack-poster']) expect(env(name)).not.toHaveProperty('USER_DAILY_TOKEN_BUDGET');
    expect(() => synth({ userDailyTokenBudget: '0' })).toThrow(/userDailyTokenBudget/);
  });

  it('-c threadFollowUps=false turns follow-ups without a mention off', () => {
    const s = synth({ threadFollowUps: 'false' });
    const resources = s.verification!.toJSON().Resources;
    for (const name of ['slack-events', 'slack-poster']) expect(resources[functionId(s.verification!, name)].Properties.Environment.Variables.THREAD_FOLLOW_UPS).toBe('false');
  });
});

describe('acknowledgeWildcards', () => {
  it('acknowledges only the wildcard findings a pattern explains; any other still fails the checks', () => {
    const app = new App();
    const stack = new Stack(app, 'Probe');
    const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new PolicyStatement({ actions: ['s3:GetObject*'], resources: ['arn:aws:s3:::bucket/*'] }));
    role.addToPolicy(new PolicyStatement({ actions: ['sqs:*'], resources: ['*'] }));
    acknowledgeWildcards(stack, [{ pattern: /^Action::s3:GetObject\*$/, reason: 'probe' }, { pattern: /^Resource::arn:aws:s3:::bucket\/\*$/, reason: 'probe' }]);
    const iam5 = new AwsSolutionsChecks().validateScope(app).violations.filter((v) => v.ruleName.startsWith('AwsSolutions-IAM5'));
    expect(iam5.map((v) => v.ruleName).sort()).toEqual(['AwsSolutions-IAM5[Action::sqs:*]', 'AwsSolutions-IAM5[Resource::*]']);
  });
});

describe('the cdk-nag plugin the app registers', () => {
  it('fails synthesis on a finding nobody acknowledged', () => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk-test-'));
    try {
      const app = new App({ outdir, context: { ...CDK_JSON.context, ...SINGLE_ACCOUNT, 'aws:cdk:bundling-stacks': [] } });
      const zones = buildZones(app);
      new Queue(zones.verification!, 'QueueWithoutDlqOrTls');
      expect(() => app.synth()).toThrow(/AwsSolutions-SQS3[\s\S]*QueueWithoutDlqOrTls|QueueWithoutDlqOrTls[\s\S]*AwsSolutions-SQS3/);
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  });
});
