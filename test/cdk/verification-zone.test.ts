import { Match, type Template } from 'aws-cdk-lib/assertions';
import { createLocalPipeline } from '../../src/local/local-pipeline';
import type { ExecutionAgent } from '../../src/protocols/execution-agent';
import type { SlackReplies } from '../../src/slack/slack-replies';
import { visibilityTimeoutSeconds } from '../../src/verification/pipeline-settings';
import { functionId, onlyResource, SINGLE_ACCOUNT, statementsFor, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/** What the verification zone is whatever the transport: queues, functions, secrets, API, alarms. */
let synth: Synthesized;
let template: Template;

beforeAll(() => {
  synth = synthesize({ ...SINGLE_ACCOUNT, allowedTeamIds: 'T0001,T0002', slackBotUserId: 'U0BOT', slackReactions: 'true', alarmEmail: 'ops@example.com' });
  template = synth.verification!;
});
afterAll(() => synth?.cleanup());

const resources = () => template.toJSON().Resources as Record<string, any>;
const queueByDlqArn = (dlqId: string) => Object.entries(resources()).find(([, r]) => r.Type === 'AWS::SQS::Queue' && r.Properties.RedrivePolicy?.deadLetterTargetArn?.['Fn::GetAtt']?.[0] === dlqId);
const eventSourceOf = (fnId: string) => Object.values(resources()).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === fnId);

describe('functions', () => {
  it.each([
    ['slack-events', 10, 512],
    ['agent-invoker', 60, 1024],
    ['async-result', 30, 256],
    ['slack-poster', 60, 256],
  ])('%s: arm64, nodejs22.x, %i s, %i MB, source maps on, own log group with retention', (prefix, timeout, memory) => {
    const fn = resources()[functionId(template, prefix)];
    expect(fn.Properties).toEqual(
      expect.objectContaining({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Timeout: timeout, MemorySize: memory, Handler: 'index.handler' }),
    );
    expect(fn.Properties.Environment.Variables.NODE_OPTIONS).toBe('--enable-source-maps');
    const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref;
    expect(resources()[logGroupId]).toEqual(
      expect.objectContaining({ Type: 'AWS::Logs::LogGroup', Properties: expect.objectContaining({ RetentionInDays: 30 }), DeletionPolicy: 'Retain' }),
    );
  });

  it('gives every function a role without managed policies: it may write its own log group and what it is granted', () => {
    for (const [, role] of Object.entries(template.findResources('AWS::IAM::Role'))) {
      expect((role as any).Properties.ManagedPolicyArns).toBeUndefined();
    }
    for (const prefix of ['slack-events', 'agent-invoker', 'async-result', 'slack-poster']) {
      const id = functionId(template, prefix);
      const logs = statementsFor(statementsOfFunction(template, id), 'logs:PutLogEvents');
      expect(logs).toEqual([
        { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [resources()[id].Properties.LoggingConfig.LogGroup.Ref, 'Arn'] } },
      ]);
    }
  });

  it('passes slack-events its secret, table, queues and filters; no secret value anywhere', () => {
    const env = resources()[functionId(template, 'slack-events')].Properties.Environment.Variables;
    const signing = onlyResource(template, 'AWS::SecretsManager::Secret', { Description: Match.stringLikeRegexp('signing secret') });
    expect(env).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      SLACK_SIGNING_SECRET_ARN: { Ref: signing.id },
      STATE_TABLE_NAME: { Ref: onlyResource(template, 'AWS::DynamoDB::Table').id },
      TASK_QUEUE_URL: { Ref: expect.any(String) },
      REPLY_QUEUE_URL: { Ref: expect.any(String) },
      ALLOWED_TEAM_IDS: 'T0001,T0002',
      SLACK_BOT_USER_ID: 'U0BOT',
      RATE_LIMIT_PER_MINUTE: '20',
      MAX_TEXT_LENGTH: '4000',
      THREAD_FOLLOW_UPS: 'true',
    });
  });
});

describe('queues', () => {
  it.each([
    ['agent-invoker', 3, 360, 'TASK_MAX_RECEIVE_COUNT'],
    ['async-result', 5, 180, 'POLL_MAX_RECEIVE_COUNT'],
    ['slack-poster', 5, 360, 'REPLY_MAX_RECEIVE_COUNT'],
  ])('%s consumes a queue with a DLQ after %i receives, visibility 6× its timeout (%i s), and reads the same count', (prefix, receives, visibility, variable) => {
    const fnId = functionId(template, prefix);
    const mapping = eventSourceOf(fnId);
    expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    const queueId = mapping.Properties.EventSourceArn['Fn::GetAtt'][0];
    const queue = resources()[queueId];
    expect(queue.Properties).toEqual(
      expect.objectContaining({ VisibilityTimeout: visibility, SqsManagedSseEnabled: true, RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [expect.any(String), 'Arn'] }, maxReceiveCount: receives } }),
    );
    const dlqId = queue.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0];
    expect(resources()[dlqId].Properties).toEqual(expect.objectContaining({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1209600 }));
    expect(resources()[fnId].Properties.Environment.Variables[variable]).toBe(String(receives));
    expect(queueByDlqArn(dlqId)?.[0]).toBe(queueId);
  });

  it('are the queues the local pipeline simulates: same visibility timeouts and receive counts (one table, src/verification/pipeline-settings.ts)', async () => {
    const local = createLocalPipeline({ agent: {} as ExecutionAgent, slack: {} as SlackReplies, signingSecret: 'unused', env: { POWERTOOLS_LOG_LEVEL: 'SILENT' } });
    try {
      const consumers = { tasks: 'agent-invoker', polls: 'async-result', replies: 'slack-poster' } as const;
      for (const [name, prefix] of Object.entries(consumers) as Array<[keyof typeof consumers, string]>) {
        const queueId = eventSourceOf(functionId(template, prefix)).Properties.EventSourceArn['Fn::GetAtt'][0];
        const deployed = resources()[queueId].Properties;
        const simulated = local.queues[name];
        expect({ name, visibility: simulated.visibilityTimeoutSeconds, receives: simulated.maxReceiveCount }).toEqual({
          name,
          visibility: deployed.VisibilityTimeout,
          receives: deployed.RedrivePolicy.maxReceiveCount,
        });
        expect(deployed.VisibilityTimeout).toBe(visibilityTimeoutSeconds(name));
      }
    } finally {
      await local.stop();
    }
  });

  it('refuses every non-TLS request on all six queues', () => {
    const queues = Object.keys(template.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(6);
    for (const id of queues) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      });
    }
  });

  it('lets each function send only where its handler sends', () => {
    const sendTargets = (prefix: string) =>
      statementsFor(statementsOfFunction(template, functionId(template, prefix)), 'sqs:SendMessage')
        .flatMap((s) => [s.Resource].flat())
        .map((r: any) => r['Fn::GetAtt'][0])
        .sort();
    const consumed = (prefix: string) => eventSourceOf(functionId(template, prefix)).Properties.EventSourceArn['Fn::GetAtt'][0];
    const tasks = consumed('agent-invoker');
    const polls = consumed('async-result');
    const replies = consumed('slack-poster');
    expect(sendTargets('slack-events')).toEqual([replies, tasks].sort());
    // The invoker puts back a task whose AgentCore session is busy (src/verification/invoke/session-busy.ts).
    expect(sendTargets('agent-invoker')).toEqual([polls, replies, tasks].sort());
    expect(sendTargets('async-result')).toEqual([polls, replies].sort());
    expect(sendTargets('slack-poster')).toEqual([]);
  });
});

describe('alarms', () => {
  it('alarms on every DLQ holding a message and on every function error, all to one TLS-only topic', () => {
    const topic = onlyResource(template, 'AWS::SNS::Topic');
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topic.id } });
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as any[];
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topic.id }]);
    const dlqs = Object.values(resources())
      .filter((r) => r.Type === 'AWS::SQS::Queue' && r.Properties.RedrivePolicy)
      .map((r) => r.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0]);
    for (const dlq of dlqs) {
      expect(alarms).toContainEqual(
        expect.objectContaining({
          Properties: expect.objectContaining({
            MetricName: 'ApproximateNumberOfMessagesVisible',
            Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }],
            Threshold: 1,
            ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          }),
        }),
      );
    }
    for (const prefix of ['slack-events', 'agent-invoker', 'async-result', 'slack-poster']) {
      expect(alarms).toContainEqual(
        expect.objectContaining({ Properties: expect.objectContaining({ MetricName: 'Errors', Namespace: 'AWS/Lambda', Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId(template, prefix) } }], Threshold: 1 }) }),
      );
    }
    // …and seven on the functions' own metrics (test/cdk/pipeline-alarms.test.ts).
    expect(alarms).toHaveLength(dlqs.length + 4 + 7);
  });
});

describe('state and secrets', () => {
  it('keeps claims, counters and reply idempotency in an on-demand table with TTL and PITR', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
    const table = onlyResource(template, 'AWS::DynamoDB::Table').id;
    const itemActions = (prefix: string) => statementsOfFunction(template, functionId(template, prefix)).filter((s) => [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
    // Claims: UpdateItem to acquire, complete and release, PutItem for markers, GetItem for the
    // item a refused condition met (ReturnValuesOnConditionCheckFailure). Nothing deletes: TTL does.
    const claimActions = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];
    // Each under its own key prefixes only (test/cdk/state-table-grants.test.ts has which).
    const ownKeys = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': expect.any(Array) } };
    expect(itemActions('slack-events')).toEqual([{ Effect: 'Allow', Action: claimActions, Resource: { 'Fn::GetAtt': [table, 'Arn'] }, Condition: ownKeys }]);
    expect(itemActions('slack-poster')).toEqual([{ Effect: 'Allow', Action: claimActions, Resource: { 'Fn::GetAtt': [table, 'Arn'] }, Condition: ownKeys }]);
    // The record of each task's live message (docs/architecture.md §2.5): read, created, moved on.
    const liveActions = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];
    expect(itemActions('agent-invoker')).toEqual([{ Effect: 'Allow', Action: liveActions, Resource: { 'Fn::GetAtt': [table, 'Arn'] }, Condition: ownKeys }]);
    expect(itemActions('async-result')).toEqual([{ Effect: 'Allow', Action: liveActions, Resource: { 'Fn::GetAtt': [table, 'Arn'] }, Condition: ownKeys }]);
  });

  it('creates both Slack secrets without a value in the template', () => {
    const secrets = Object.values(template.findResources('AWS::SecretsManager::Secret')) as any[];
    expect(secrets).toHaveLength(2);
    for (const secret of secrets) {
      expect(secret.Properties.SecretString).toBeUndefined();
      expect(secret.Properties.GenerateSecretString).toEqual({});
    }
  });

  it('lets only the functions that use a secret read it', () => {
    const signing = onlyResource(template, 'AWS::SecretsManager::Secret', { Description: Match.stringLikeRegexp('signing secret') }).id;
    const bot = onlyResource(template, 'AWS::SecretsManager::Secret', { Description: Match.stringLikeRegexp('bot token') }).id;
    const reads = (prefix: string) => statementsFor(statementsOfFunction(template, functionId(template, prefix)), 'secretsmanager:GetSecretValue').map((s) => s.Resource.Ref);
    expect(reads('slack-events')).toEqual([signing]);
    expect(reads('slack-poster')).toEqual([bot]);
    // The invoker reads the thread and files, and both follow-up functions show the answer live.
    expect(reads('agent-invoker')).toEqual([bot]);
    expect(reads('async-result')).toEqual([bot]);
  });
});

describe('Slack request URL', () => {
  it('routes POST /slack/events to slack-events through a throttled, access-logged regional stage', () => {
    const fn = functionId(template, 'slack-events');
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'POST',
      AuthorizationType: 'NONE',
      Integration: Match.objectLike({ Type: 'AWS_PROXY', Uri: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([{ 'Fn::GetAtt': [fn, 'Arn'] }])] }) }),
      RequestParameters: { 'method.request.header.X-Slack-Signature': true, 'method.request.header.X-Slack-Request-Timestamp': true },
    });
    template.hasResourceProperties('AWS::ApiGateway::Resource', { PathPart: 'events' });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: [Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100, DataTraceEnabled: false })],
    });
    template.hasOutput('SlackRequestUrl', { Value: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith(['/slack/events'])] }) });
  });

  it('refuses requests without the Slack signing headers with 401, before any function runs', () => {
    const api = onlyResource(template, 'AWS::ApiGateway::RestApi').id;
    const validator = onlyResource(template, 'AWS::ApiGateway::RequestValidator', { ValidateRequestParameters: true, ValidateRequestBody: true });
    expect(validator.resource.Properties.RestApiId).toEqual({ Ref: api });
    const envelope = onlyResource(template, 'AWS::ApiGateway::Model', { ContentType: 'application/json' });
    expect(envelope.resource.Properties.Schema).toMatchObject({ type: 'object', required: ['type'], properties: { type: { type: 'string' } } });
    // The POST method is the one the validator checks: both headers required, the body against the model.
    const post = onlyResource(template, 'AWS::ApiGateway::Method', { HttpMethod: 'POST' }).resource.Properties;
    expect(post.RequestValidatorId).toEqual({ Ref: validator.id });
    expect(post.RequestParameters).toEqual({ 'method.request.header.X-Slack-Signature': true, 'method.request.header.X-Slack-Request-Timestamp': true });
    expect(post.RequestModels).toEqual({ 'application/json': { Ref: envelope.id } });
    // What the gateway answers a request the validator refuses for its headers.
    const refusal = onlyResource(template, 'AWS::ApiGateway::GatewayResponse', { ResponseType: 'BAD_REQUEST_PARAMETERS' }).resource.Properties;
    expect(refusal).toMatchObject({ StatusCode: '401', RestApiId: { Ref: api } });
  });

  it('attaches a WAF web ACL by default: per-IP rate rule (2000 per 5 minutes) on the stage', () => {
    const acl = onlyResource(template, 'AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      Rules: Match.arrayWith([Match.objectLike({ Name: 'RatePerIp', Action: { Block: {} }, Statement: { RateBasedStatement: { Limit: 2000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } } })]),
    });
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [acl.id, 'Arn'] },
      ResourceArn: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([{ Ref: onlyResource(template, 'AWS::ApiGateway::Stage').id }])] }),
    });
  });
});

it('passes the AwsSolutions checks', () => {
  expect(synth.nagFindings).toEqual([]);
});
