import { Match, type Template } from 'aws-cdk-lib/assertions';
import { DeploymentConfigError, parseDeploymentConfig } from '../../cdk/config';
import { functionId, onlyResource, SINGLE_ACCOUNT, statementsFor, statementsOfFunction, synthesize } from './support/synth';

/**
 * What reaches the functions' environment from context beyond the basics (docs/deploy.md,
 * "Context reference"): one receive-count setting per queue, the bot token for the execution zone,
 * the poll backoff, and the variables with no key of their own (`-c <zone>Environment`). Plus the
 * outputs day-2 work reads (DLQs, log groups).
 */

const resources = (template: Template) => template.toJSON().Resources as Record<string, any>;
const envOf = (template: Template, prefix: string): Record<string, unknown> => resources(template)[functionId(template, prefix)].Properties.Environment.Variables;
const VERIFICATION_FUNCTIONS = ['slack-events', 'agent-invoker', 'async-result', 'slack-poster'];

describe('one receive-count setting per queue', () => {
  it('-c taskMaxReceiveCount / pollMaxReceiveCount / replyMaxReceiveCount set the queue and its consumer alike', () => {
    const synth = synthesize({ ...SINGLE_ACCOUNT, taskMaxReceiveCount: '4', pollMaxReceiveCount: '6', replyMaxReceiveCount: '7' });
    try {
      const template = synth.verification!;
      for (const [prefix, variable, receives] of [
        ['agent-invoker', 'TASK_MAX_RECEIVE_COUNT', 4],
        ['async-result', 'POLL_MAX_RECEIVE_COUNT', 6],
        ['slack-poster', 'REPLY_MAX_RECEIVE_COUNT', 7],
      ] as const) {
        const fnId = functionId(template, prefix);
        const mapping = Object.values(resources(template)).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === fnId);
        const queue = resources(template)[mapping.Properties.EventSourceArn['Fn::GetAtt'][0]];
        expect([prefix, queue.Properties.RedrivePolicy.maxReceiveCount, envOf(template, prefix)[variable]]).toEqual([prefix, receives, String(receives)]);
      }
    } finally {
      synth.cleanup();
    }
  });

  it('refuses a count SQS does not take, and the variables themselves through -c verificationEnvironment', () => {
    expect(() => parseDeploymentConfig({ replyMaxReceiveCount: '0' })).toThrow(/replyMaxReceiveCount/);
    expect(() => parseDeploymentConfig({ verificationEnvironment: '{"REPLY_MAX_RECEIVE_COUNT":"9"}' })).toThrow(/verificationEnvironment\.REPLY_MAX_RECEIVE_COUNT: is set by CDK from -c replyMaxReceiveCount/);
  });
});

describe('-c executionSendBotToken', () => {
  it('is off by default, and on it tells the invoker, which reads the bot token either way', () => {
    const off = synthesize(SINGLE_ACCOUNT);
    const on = synthesize({ ...SINGLE_ACCOUNT, executionSendBotToken: 'true' });
    try {
      expect(envOf(off.verification!, 'agent-invoker').EXECUTION_SEND_BOT_TOKEN).toBe('false');
      const template = on.verification!;
      const env = envOf(template, 'agent-invoker');
      expect(env.EXECUTION_SEND_BOT_TOKEN).toBe('true');
      const botToken = onlyResource(template, 'AWS::SecretsManager::Secret', { Description: Match.stringLikeRegexp('bot token') }).id;
      expect(env.SLACK_BOT_TOKEN_ARN).toEqual({ Ref: botToken });
      const reads = statementsFor(statementsOfFunction(template, functionId(template, 'agent-invoker')), 'secretsmanager:GetSecretValue');
      expect(reads.flatMap((s) => [s.Resource].flat())).toContainEqual({ Ref: botToken });
    } finally {
      off.cleanup();
      on.cleanup();
    }
  });
});

describe('-c pollBackoffFactor', () => {
  it('goes to both functions that schedule polls, with the rest of the schedule', () => {
    const synth = synthesize({ ...SINGLE_ACCOUNT, pollBackoffFactor: '1.5' });
    try {
      for (const prefix of ['agent-invoker', 'async-result']) {
        expect(envOf(synth.verification!, prefix)).toEqual(expect.objectContaining({ POLL_FIRST_DELAY_S: '2', POLL_BACKOFF_FACTOR: '1.5', POLL_MAX_DELAY_S: '60', POLL_DEADLINE_S: '1800' }));
      }
    } finally {
      synth.cleanup();
    }
    expect(() => parseDeploymentConfig({ pollBackoffFactor: '0.5' })).toThrow(/pollBackoffFactor/);
  });
});

describe('-c verificationEnvironment and -c executionEnvironment', () => {
  it('write the variables on every function of the zone (JSON text from -c, an object from cdk.json)', () => {
    const synth = synthesize({
      ...SINGLE_ACCOUNT,
      executionHosts: 'agentcore,https',
      verificationEnvironment: '{"SLACK_READ_BUDGET_MS":5000,"EXECUTION_TIMEOUT_MS":"8000"}',
      executionEnvironment: { MAX_CONCURRENT_TASKS: 20, POWERTOOLS_LOG_LEVEL: 'DEBUG' },
    });
    try {
      for (const prefix of VERIFICATION_FUNCTIONS) expect(envOf(synth.verification!, prefix)).toEqual(expect.objectContaining({ SLACK_READ_BUDGET_MS: '5000', EXECUTION_TIMEOUT_MS: '8000' }));
      const execution = synth.execution!;
      for (const prefix of ['Execution zone behind a function URL', 'Execution zone worker']) expect(envOf(execution, prefix)).toEqual(expect.objectContaining({ MAX_CONCURRENT_TASKS: '20', POWERTOOLS_LOG_LEVEL: 'DEBUG' }));
      const runtime = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime').resource.Properties;
      expect(runtime.EnvironmentVariables).toEqual(expect.objectContaining({ MAX_CONCURRENT_TASKS: '20', POWERTOOLS_LOG_LEVEL: 'DEBUG', EXECUTOR: 'bedrock' }));
    } finally {
      synth.cleanup();
    }
  });

  it('writes an object value (USER_MESSAGES_JSON) as its JSON', () => {
    const config = parseDeploymentConfig({ verificationEnvironment: { USER_MESSAGES_JSON: { rateLimited: 'Slow down, please.' } } });
    expect(config.context.verificationEnvironment).toEqual({ USER_MESSAGES_JSON: '{"rateLimited":"Slow down, please."}' });
  });

  it('refuses, in one error naming each, what the functions would refuse at start-up or what CDK sets itself', () => {
    let error: unknown;
    try {
      parseDeploymentConfig({
        verificationEnvironment: {
          SLACK_READ_BUDGET_MS: -1,
          USER_MESSAGES_JSON: { notAKey: 'x' },
          AGENT_PROMPTS_JSON: { home: [{ title: 'no message' }] },
          EXECUTION_TIMEOUT_MS: 'soon',
          EXECUTION_BEARER_TOKEN: 'secret',
          TASK_QUEUE_URL: 'https://sqs.example.com/q',
          MAX_BODY_BYTES: 1,
          NOT_A_VARIABLE: 1,
        },
        executionEnvironment: '{"MAX_BODY_BYTES":0,"EXECUTOR":"echo","SLACK_API_URL":"https://x.example.com/"}',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DeploymentConfigError);
    const message = (error as Error).message;
    for (const expected of [
      /verificationEnvironment\.SLACK_READ_BUDGET_MS: /,
      /verificationEnvironment\.USER_MESSAGES_JSON: must be a JSON object of message keys/,
      /verificationEnvironment\.AGENT_PROMPTS_JSON: is not valid: expected \{"title"\?, "home"\?/,
      /verificationEnvironment\.EXECUTION_TIMEOUT_MS: /,
      /verificationEnvironment\.EXECUTION_BEARER_TOKEN: is not used by a deployment: a secret value would sit in the template/,
      /verificationEnvironment\.TASK_QUEUE_URL: is set by CDK/,
      /verificationEnvironment\.MAX_BODY_BYTES: is not a variable of the verification zone/,
      /verificationEnvironment\.NOT_A_VARIABLE: is not a variable the verification zone reads/,
      /executionEnvironment\.MAX_BODY_BYTES: /,
      /executionEnvironment\.EXECUTOR: is set by CDK/,
      /executionEnvironment\.SLACK_API_URL: is not a variable of the execution zone/,
    ]) {
      expect(message).toMatch(expected);
    }
    expect(() => parseDeploymentConfig({ executionEnvironment: 'MAX_BODY_BYTES=1' })).toThrow(/executionEnvironment: must be a JSON object/);
  });
});

describe('outputs for day-2 work', () => {
  it('the three DLQs and the four log groups of the verification zone; the hosts\' log groups and the worker DLQ of the execution zone', () => {
    const synth = synthesize({ ...SINGLE_ACCOUNT, executionHosts: 'agentcore,https' });
    try {
      const verification = synth.verification!.toJSON();
      const dlqs = ['Tasks', 'Polls', 'Replies'].map((name) => verification.Outputs[`${name}DlqArn`].Value['Fn::GetAtt'][0] as string);
      const deadLetterTargets = Object.values(verification.Resources as Record<string, any>)
        .filter((r) => r.Type === 'AWS::SQS::Queue' && r.Properties.RedrivePolicy)
        .map((r) => r.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0]);
      expect(dlqs.sort()).toEqual(deadLetterTargets.sort());
      const groups = verification.Outputs.VerificationLogGroups.Value['Fn::Join'];
      expect(groups[0]).toBe(' ');
      expect(groups[1]).toEqual(VERIFICATION_FUNCTIONS.map((prefix) => resources(synth.verification!)[functionId(synth.verification!, prefix)].Properties.LoggingConfig.LogGroup));

      const execution = synth.execution!;
      const outputs = execution.toJSON().Outputs;
      const runtime = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime').id;
      const [separator, names] = outputs.ExecutionLogGroups.Value['Fn::Join'];
      expect(separator).toBe(' ');
      expect(names[0]).toEqual({ 'Fn::Join': ['', ['/aws/bedrock-agentcore/runtimes/', { 'Fn::GetAtt': [runtime, 'AgentRuntimeId'] }, '-DEFAULT']] });
      expect(names.slice(1)).toEqual(['Execution zone behind a function URL', 'Execution zone worker'].map((prefix) => resources(execution)[functionId(execution, prefix)].Properties.LoggingConfig.LogGroup));
      expect(outputs.WorkerDlqArn.Value['Fn::GetAtt'][1]).toBe('Arn');
    } finally {
      synth.cleanup();
    }
  });
});
