import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONTEXT_DEFAULTS, DeploymentConfigError, parseDeploymentConfig } from '../../cdk/config';
import { modelTargetOf } from '../../cdk/constructs/bedrock-model-access';
import { governancePlanner } from '../../cdk/zones';

const cdkJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'));

describe('cdk.json', () => {
  it('runs the app with the project toolchain', () => {
    expect(cdkJson.app).toBe('npx tsx cdk/bin/app.ts');
  });

  it('spells out the same defaults the code applies, so operators read the real ones', () => {
    for (const [key, value] of Object.entries(CONTEXT_DEFAULTS)) expect([key, cdkJson.context[key]]).toEqual([key, value]);
  });
});

describe('parseDeploymentConfig', () => {
  it('defaults to one account, transport agentcore, the execution zone linked by stack reference', () => {
    const config = parseDeploymentConfig({});
    expect(config).toEqual(
      expect.objectContaining({
        appName: 'slack-zone-bridge',
        transport: 'agentcore',
        executionHosts: ['agentcore'],
        crossAccount: false,
        executionTarget: { kind: 'linked' },
        executionEnv: { account: undefined, region: undefined },
      }),
    );
    expect(config.callerRoleNames).toBeUndefined();
    // Secure by default: a WAF web ACL on the Slack request URL, the function URL pinned to the caller roles.
    expect(config.context).toEqual(expect.objectContaining({ waf: true, wafRateLimit: 2000, pinVerificationRoles: true }));
  });

  it('reads `-c key=value` strings: booleans, numbers and comma lists', () => {
    const config = parseDeploymentConfig({ waf: 'false', apiRateLimit: '10', allowedTeamIds: 'T1, T2,', executionHosts: 'agentcore,https', transport: 'https' });
    expect(config.context.waf).toBe(false);
    expect(config.context.apiRateLimit).toBe(10);
    expect(config.context.allowedTeamIds).toEqual(['T1', 'T2']);
    expect(config.executionHosts).toEqual(['agentcore', 'https']);
  });

  it('uses the CLI environment when no account or region is given', () => {
    const config = parseDeploymentConfig({}, { account: '123456789012', region: 'eu-west-1' });
    expect(config.executionEnv).toEqual({ account: '123456789012', region: 'eu-west-1' });
    expect(config.verificationEnv).toEqual({ account: '123456789012', region: 'eu-west-1' });
  });

  it('two accounts: names the caller roles and waits for the runtime ARN from the other account', () => {
    const base = { executionAccountId: '111111111111', verificationAccountId: '222222222222', region: 'us-east-1' };
    expect(parseDeploymentConfig(base).executionTarget).toEqual({ kind: 'pending', missing: expect.stringContaining('-c agentRuntimeArn=') });
    const config = parseDeploymentConfig({ ...base, agentRuntimeArn: 'arn:aws:bedrock-agentcore:us-east-1:111111111111:runtime/a-AbCdEf1234' });
    expect(config.crossAccount).toBe(true);
    expect(config.callerRoleNames).toEqual({ invoker: 'slack-zone-bridge-agent-invoker', poller: 'slack-zone-bridge-async-result' });
    expect(config.executionTarget).toEqual({ kind: 'agentcore-arn', runtimeArn: 'arn:aws:bedrock-agentcore:us-east-1:111111111111:runtime/a-AbCdEf1234' });
  });

  it('two accounts over https: the URL must come with the function it belongs to', () => {
    const base = { executionAccountId: '111111111111', verificationAccountId: '222222222222', region: 'us-east-1', transport: 'https' };
    expect(parseDeploymentConfig(base).executionTarget).toEqual({ kind: 'pending', missing: expect.stringContaining('-c executionFunctionArn=') });
    expect(() => parseDeploymentConfig({ ...base, executionUrl: 'https://x.lambda-url.us-east-1.on.aws/' })).toThrow(/executionFunctionArn: is required for a SigV4-signed executionUrl/);
  });

  it('an external execution zone is named by URL or ARN; the app then deploys no execution host', () => {
    expect(() => parseDeploymentConfig({ externalExecution: 'true' })).toThrow(/agentRuntimeArn: is required with externalExecution=true/);
    expect(() => parseDeploymentConfig({ externalExecution: 'true', transport: 'https' })).toThrow(/executionUrl: is required/);
    const config = parseDeploymentConfig({ externalExecution: 'true', transport: 'https', executionUrl: 'https://agent.example.com/', executionBearerSecretName: 'token' });
    expect(config.executionHosts).toEqual([]);
    expect(config.executionTarget).toEqual({ kind: 'https-url', url: 'https://agent.example.com/', auth: 'bearer', bearerSecretName: 'token' });
  });

  it('names every bad key in one error', () => {
    let error: unknown;
    try {
      parseDeploymentConfig({ transport: 'grpc', executionAccountId: '12', logRetentionDays: '42', executionUrl: 'http://insecure.example.com' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DeploymentConfigError);
    const message = (error as Error).message;
    for (const key of ['transport', 'executionAccountId', 'logRetentionDays', 'executionUrl']) expect(message).toContain(`${key}:`);
  });

  it.each([
    [{ executionHosts: 'https' }, /executionHosts: must include the transport/],
    [{ agentcoreIdleTimeoutSeconds: '3600', agentcoreMaxLifetimeSeconds: '1800' }, /agentcoreIdleTimeoutSeconds: must not exceed/],
    [{ transport: 'https', taskTimeoutMs: '900000' }, /taskTimeoutMs: must be at most 840000/],
    [{ pollFirstDelaySeconds: '120', pollMaxDelaySeconds: '60' }, /pollFirstDelaySeconds/],
    [{ executionAccountId: '111111111111', verificationAccountId: '222222222222', agentRuntimeArn: 'arn:aws:bedrock-agentcore:us-east-1:111111111111:runtime/a-AbCdEf1234' }, /region .* is required/],
  ])('refuses %j', (context, message) => {
    expect(() => parseDeploymentConfig(context)).toThrow(message);
  });
});

describe('governance', () => {
  it('is standard unless asked; strict takes a key ARN and VPC ids, and only strict does', () => {
    expect(parseDeploymentConfig({}).context).toEqual(expect.objectContaining({ governance: 'standard', a2aVersionHeader: false }));
    const strict = parseDeploymentConfig({ governance: 'strict', kmsKeyArn: 'arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab', vpcId: 'vpc-0123456789abcdef0' });
    expect(strict.context).toEqual(expect.objectContaining({ governance: 'strict', vpcId: 'vpc-0123456789abcdef0' }));
    // Silently ignoring them would deploy an ungoverned app to an operator who thinks otherwise.
    expect(() => parseDeploymentConfig({ vpcId: 'vpc-0123456789abcdef0' })).toThrow(/vpcId: is used only with governance=strict/);
    expect(() => parseDeploymentConfig({ governance: 'strict', kmsKeyArn: 'alias/mine', executionVpcId: 'subnet-1' })).toThrow(/kmsKeyArn: must be a KMS key ARN.*executionVpcId: must be a VPC id/);
    expect(() => parseDeploymentConfig({ governance: 'lenient' })).toThrow(DeploymentConfigError);
  });
});

describe('modelTargetOf', () => {
  it('reads a model id, a geography inference profile and a global profile', () => {
    expect(modelTargetOf('anthropic.claude-3-5-haiku-20241022-v1:0')).toEqual({ kind: 'foundation-model', modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0' });
    expect(modelTargetOf('us.anthropic.claude-3-5-haiku-20241022-v1:0')).toEqual({
      kind: 'inference-profile',
      profileId: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
      modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      regions: ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2'],
    });
    expect(modelTargetOf('global.amazon.nova-2-lite-v1:0')).toEqual(expect.objectContaining({ modelId: 'amazon.nova-2-lite-v1:0', regions: 'any' }));
    expect(modelTargetOf('amazon.nova-lite-v1:0')).toEqual({ kind: 'foundation-model', modelId: 'amazon.nova-lite-v1:0' });
  });

  it('asks for the routing regions of a geography it does not know, and refuses ARNs', () => {
    expect(() => modelTargetOf('xx.anthropic.claude-3-5-haiku-20241022-v1:0')).toThrow(/set bedrockModelRegions/);
    expect(modelTargetOf('xx.anthropic.claude-3-5-haiku-20241022-v1:0', ['ap-east-1'])).toEqual(expect.objectContaining({ regions: ['ap-east-1'] }));
    expect(() => modelTargetOf('arn:aws:bedrock:us-east-1::foundation-model/x.y')).toThrow(/not an ARN/);
  });
});

describe('governancePlanner (governance=strict, which zone creates which endpoints)', () => {
  const plan = (raw: Record<string, unknown>) => {
    const config = parseDeploymentConfig({ executionAccountId: '111111111111', region: 'us-east-1', governance: 'strict', ...raw });
    const of = governancePlanner(config, 365);
    return { execution: of('execution'), verification: of('verification') };
  };

  it('gives each zone its own VPC and the endpoints it uses, by transport', () => {
    const agentcore = plan({});
    expect(agentcore.execution).toEqual({ interfaceEndpoints: ['logs', 'bedrock-runtime', 'bedrock-agentcore'], dynamodbGateway: true, logRetention: 365 });
    expect(agentcore.verification).toEqual({ interfaceEndpoints: ['sqs', 'secretsmanager', 'logs', 'bedrock-agentcore'], dynamodbGateway: true, logRetention: 365 });
    const https = plan({ transport: 'https' });
    expect(https.execution.interfaceEndpoints).toEqual(['logs', 'bedrock-runtime', 'sqs']);
    expect(https.verification.interfaceEndpoints).toEqual(['sqs', 'secretsmanager', 'logs']);
  });

  it('one VPC for both zones: the execution zone (deployed first) creates every endpoint, the verification zone none (one per service a VPC)', () => {
    const shared = plan({ vpcId: 'vpc-0123456789abcdef0', kmsKeyArn: 'arn:aws:kms:us-east-1:111111111111:key/abcd' });
    expect(shared.execution).toEqual({
      kmsKeyArn: 'arn:aws:kms:us-east-1:111111111111:key/abcd',
      vpcId: 'vpc-0123456789abcdef0',
      interfaceEndpoints: ['logs', 'bedrock-runtime', 'bedrock-agentcore', 'sqs', 'secretsmanager'],
      dynamodbGateway: true,
      logRetention: 365,
    });
    expect(shared.verification).toEqual(expect.objectContaining({ vpcId: 'vpc-0123456789abcdef0', interfaceEndpoints: [], dynamodbGateway: false }));
    // Two VPCs, or two accounts: each zone creates its own.
    const separate = plan({ executionVpcId: 'vpc-0aaaaaaaaaaaaaaaa', verificationVpcId: 'vpc-0bbbbbbbbbbbbbbbb' });
    expect(separate.verification.interfaceEndpoints).toHaveLength(4);
    const twoAccounts = plan({ vpcId: 'vpc-0123456789abcdef0', verificationAccountId: '222222222222' });
    expect(twoAccounts.verification.interfaceEndpoints).toHaveLength(4);
  });
});
