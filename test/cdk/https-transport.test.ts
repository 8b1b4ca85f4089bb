import { Match, type Template } from 'aws-cdk-lib/assertions';
import { STANDARD_ACKNOWLEDGEMENTS } from '../../cdk/constructs/nag-acknowledgements';
import { acknowledgedByStack, functionId, onlyResource, REGION, SINGLE_ACCOUNT, statementsFor, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/** transport=https: the execution zone behind a Lambda function URL, same account and region. */
let synth: Synthesized;
let execution: Template;
let verification: Template;

beforeAll(() => {
  synth = synthesize({ ...SINGLE_ACCOUNT, transport: 'https' });
  execution = synth.execution!;
  verification = synth.verification!;
});
afterAll(() => synth?.cleanup());

describe('ExecutionZone (https)', () => {
  it('runs no AgentCore runtime, one function URL with AWS_IAM auth that streams its response', () => {
    execution.resourceCountIs('AWS::BedrockAgentCore::Runtime', 0);
    execution.resourceCountIs('AWS::Lambda::Url', 1);
    const handler = functionId(execution, 'Execution zone behind a function URL');
    execution.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM', TargetFunctionArn: { 'Fn::GetAtt': [handler, 'Arn'] } });
  });

  it('gives the URL function STREAM_MAX_MS and a minute, at most Lambda\'s 15 (a streamed answer ends before its time is out)', () => {
    const handler = functionId(execution, 'Execution zone behind a function URL');
    // The default STREAM_MAX_MS, 14 minutes: 15 minutes.
    expect(execution.toJSON().Resources[handler].Properties.Timeout).toBe(900);
    const shorter = synthesize({ ...SINGLE_ACCOUNT, transport: 'https', executionEnvironment: '{"STREAM_MAX_MS":120000}' });
    try {
      const template = shorter.execution!;
      const id = functionId(template, 'Execution zone behind a function URL');
      expect(template.toJSON().Resources[id].Properties).toEqual(expect.objectContaining({ Timeout: 180, Environment: { Variables: expect.objectContaining({ STREAM_MAX_MS: '120000' }) } }));
    } finally {
      shorter.cleanup();
    }
  });

  it('runs both functions on arm64 nodejs22.x with the execution environment; the URL function hands off to the worker queue', () => {
    const table = onlyResource(execution, 'AWS::DynamoDB::Table').id;
    const handler = functionId(execution, 'Execution zone behind a function URL');
    const worker = functionId(execution, 'Execution zone worker');
    const env = {
      EXECUTOR: 'bedrock',
      BEDROCK_MODEL_ID: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
      TASK_STORE: 'dynamodb',
      TASK_TABLE_NAME: { Ref: table },
      SYNC_BUDGET_MS: '5000',
      TASK_TIMEOUT_MS: '600000',
    };
    const resources = execution.toJSON().Resources;
    const mapping = Object.values(resources).find((r: any) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === worker) as any;
    const workerQueue = mapping.Properties.EventSourceArn['Fn::GetAtt'][0];
    expect(resources[handler].Properties).toEqual(expect.objectContaining({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Timeout: 900 }));
    expect(resources[handler].Properties.Environment.Variables).toEqual({ NODE_OPTIONS: '--enable-source-maps', ...env, WORKER_QUEUE_URL: { Ref: workerQueue } });
    expect(resources[worker].Properties).toEqual(expect.objectContaining({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Timeout: 660 }));
    expect(resources[worker].Properties.Environment.Variables).toEqual({ NODE_OPTIONS: '--enable-source-maps', ...env });
    expect(mapping.Properties).toEqual(expect.objectContaining({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] }));
    expect(statementsFor(statementsOfFunction(execution, handler), 'sqs:SendMessage')).toEqual([
      expect.objectContaining({ Resource: { 'Fn::GetAtt': [workerQueue, 'Arn'] } }),
    ]);
  });

  it('gives the worker queue its own DLQ and alarm; a redelivery comes before the poller gives up', () => {
    const worker = functionId(execution, 'Execution zone worker');
    const resources = execution.toJSON().Resources;
    const mapping = Object.values(resources).find((r: any) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === worker) as any;
    const queue = resources[mapping.Properties.EventSourceArn['Fn::GetAtt'][0]];
    expect(queue.Properties).toEqual(expect.objectContaining({ VisibilityTimeout: 780, SqsManagedSseEnabled: true, RedrivePolicy: expect.objectContaining({ maxReceiveCount: 3 }) }));
    const dlq = queue.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0];
    execution.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }],
      AlarmActions: [{ Ref: onlyResource(execution, 'AWS::SNS::Topic').id }],
    });
  });

  it('lets both functions use the task table and invoke the model, nothing more', () => {
    for (const prefix of ['Execution zone behind a function URL', 'Execution zone worker']) {
      const statements = statementsOfFunction(execution, functionId(execution, prefix));
      expect(statementsFor(statements, 'dynamodb:GetItem')).toHaveLength(1);
      const bedrock = statementsFor(statements, 'bedrock:InvokeModel');
      expect(bedrock).toHaveLength(1);
      expect(bedrock[0].Resource).toHaveLength(5);
      const actions = statements.flatMap((s) => [s.Action].flat());
      expect(actions.filter((a: string) => a.includes('*'))).toEqual([]);
    }
  });

  it('has no cross-account permission on the function when the verification zone is in the same account', () => {
    execution.resourceCountIs('AWS::Lambda::Permission', 0);
  });

  it('outputs the URL and the function ARN for a verification zone elsewhere', () => {
    execution.hasOutput('ExecutionUrl', { Value: { 'Fn::GetAtt': [onlyResource(execution, 'AWS::Lambda::Url').id, 'FunctionUrl'] } });
    execution.hasOutput('ExecutionFunctionArn', { Value: { 'Fn::GetAtt': [functionId(execution, 'Execution zone behind a function URL'), 'Arn'] } });
  });
});

describe('VerificationZone (https)', () => {
  it('points agent-invoker and async-result at the function URL with SigV4', () => {
    for (const prefix of ['agent-invoker', 'async-result']) {
      const env = verification.toJSON().Resources[functionId(verification, prefix)].Properties.Environment.Variables;
      expect(env).toEqual(
        expect.objectContaining({
          TRANSPORT: 'https',
          EXECUTION_AUTH: 'sigv4',
          EXECUTION_PROTOCOL: 'execute-task',
          EXECUTION_URL: { 'Fn::GetStackOutput': expect.objectContaining({ StackName: 'ExecutionZone', Region: REGION }) },
        }),
      );
      expect(env).not.toHaveProperty('AGENTCORE_RUNTIME_ARN');
    }
  });

  it('lets exactly the invoker and the poller call that one function, only through its IAM-authenticated URL', () => {
    for (const prefix of ['agent-invoker', 'async-result']) {
      const statements = statementsOfFunction(verification, functionId(verification, prefix));
      const lambda = statements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('lambda:')));
      const functionArn = lambda[0]?.Resource;
      expect(functionArn).toEqual({ 'Fn::GetStackOutput': expect.objectContaining({ StackName: 'ExecutionZone' }) });
      expect(lambda).toEqual([
        { Effect: 'Allow', Action: 'lambda:InvokeFunctionUrl', Resource: functionArn, Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } } },
        { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: functionArn, Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } } },
      ]);
      expect(statementsFor(statements, 'bedrock-agentcore:InvokeAgentRuntime')).toEqual([]);
    }
    for (const prefix of ['slack-events', 'slack-poster']) {
      const actions = statementsOfFunction(verification, functionId(verification, prefix)).flatMap((s) => [s.Action].flat());
      expect(actions.filter((a: string) => a.startsWith('lambda:'))).toEqual([]);
    }
  });

  it('keeps everything else as with agentcore', () => {
    verification.resourceCountIs('AWS::SQS::Queue', 6);
    verification.resourceCountIs('AWS::Lambda::Function', 4);
    verification.hasResourceProperties('AWS::ApiGateway::Method', { HttpMethod: 'POST', RequestParameters: Match.objectLike({ 'method.request.header.X-Slack-Signature': true }) });
  });
});

it('passes the AwsSolutions checks', () => {
  expect(synth.nagFindings).toEqual([]);
});

describe('AWS Control Tower proactive controls (governance=standard, https)', () => {
  it('fails no control that is not acknowledged; the execution functions are acknowledged for the default\'s reasons', () => {
    expect(synth.controls.violations).toEqual([]);
    const byStack = acknowledgedByStack(synth.controls);
    expect(byStack.ExecutionZone).toEqual(['ct-cloudwatch-pr-2', 'ct-cloudwatch-pr-3', 'ct-dynamodb-pr-2', 'ct-lambda-pr-3']);
    for (const ids of Object.values(byStack)) for (const id of ids) expect(Object.keys(STANDARD_ACKNOWLEDGEMENTS)).toContain(id);
    // The worker queue's DLQ declares itself one, so CT.SQS.PR.1 passes here too.
    expect(synth.controls.acknowledged.map((f) => f.control)).not.toContain('ct-sqs-pr-1');
  });
});
