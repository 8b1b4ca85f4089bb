import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { CONTROL_TOWER_RULES, STANDARD_ACKNOWLEDGEMENTS } from '../../cdk/constructs/nag-acknowledgements';
import { CREATED_VPC_CIDR } from '../../cdk/constructs/zone-governance';
import { onlyResource, SINGLE_ACCOUNT, synthesize, type Synthesized } from './support/synth';

/**
 * What `governance=strict` builds to meet AWS Control Tower's proactive controls, which
 * @cdklabs/cdk-validator-cfnguard runs on every synthesis (its cfn-guard binary, offline). The
 * default and https deployments' controls are checked where those are synthesized already
 * (agentcore-transport.test.ts, https-transport.test.ts): one synthesis per configuration.
 */

const DEPLOY_MD = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'deploy.md'), 'utf8');
const STANDARD_ACKS = Object.keys(STANDARD_ACKNOWLEDGEMENTS).sort();

const resourcesOf = (t: Template, type: string) => Object.entries(t.findResources(type)) as [string, { Properties: Record<string, any> }][];

/** Both execution hosts in one synthesis (as during a transport swap): the runtime and the function URL. */
describe('governance=strict (executionHosts agentcore and https; an A2A 1.0 agent hosted: a2aVersionHeader)', () => {
  let synth: Synthesized;
  let execution: Template;
  let verification: Template;
  beforeAll(() => {
    synth = synthesize({ ...SINGLE_ACCOUNT, governance: 'strict', executionHosts: 'agentcore,https', a2aVersionHeader: 'true' });
    execution = synth.execution!;
    verification = synth.verification!;
  });
  afterAll(() => synth?.cleanup());

  it('passes every Control Tower control but one, acknowledged for one function: the function URL, which streams and so cannot be in a VPC', () => {
    expect(synth.controls.violations).toEqual([]);
    expect(synth.controls.acknowledged).toEqual([
      { control: 'ct-lambda-pr-3', paths: [expect.stringMatching(/^ExecutionZone\/FunctionUrl\/UrlHandler\/Function\//)], reason: expect.stringContaining('RESPONSE_STREAM') },
    ]);
    expect(synth.nagFindings).toEqual([]);
  });

  it('encrypts every table, queue and log group with the zone\'s own customer-managed key, which CloudWatch Logs may use', () => {
    for (const template of [execution, verification]) {
      const key = onlyResource(template, 'AWS::KMS::Key', { EnableKeyRotation: true });
      const keyArn = { 'Fn::GetAtt': [key.id, 'Arn'] };
      const tables = resourcesOf(template, 'AWS::DynamoDB::Table');
      expect(tables.length).toBeGreaterThan(0);
      for (const [, table] of tables) expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: keyArn });
      for (const [, queue] of resourcesOf(template, 'AWS::SQS::Queue')) expect(queue.Properties.KmsMasterKeyId).toEqual(keyArn);
      const groups = resourcesOf(template, 'AWS::Logs::LogGroup');
      expect(groups.length).toBeGreaterThan(0);
      for (const [, group] of groups) {
        expect(group.Properties.KmsKeyId).toEqual(keyArn);
        expect(group.Properties.RetentionInDays).toBeGreaterThanOrEqual(365);
      }
      const logsStatement = key.resource.Properties.KeyPolicy.Statement.find((s: any) => s.Sid === 'CloudWatchLogsOfThisAccount');
      expect(logsStatement.Principal).toEqual({ Service: 'logs.us-east-1.amazonaws.com' });
      expect(logsStatement.Condition.ArnLike['kms:EncryptionContext:aws:logs:arn']).toBe(`arn:aws:logs:us-east-1:${SINGLE_ACCOUNT.executionAccountId}:log-group:*`);
    }
    // The queues each zone has, to be sure the loop above saw them: three pairs, and the worker's.
    expect(resourcesOf(verification, 'AWS::SQS::Queue')).toHaveLength(6);
    expect(resourcesOf(execution, 'AWS::SQS::Queue')).toHaveLength(2);
  });

  it('puts every function in private subnets of the zone\'s VPC (but the function URL), and the AgentCore runtime in its VPC network mode', () => {
    const urlHandler = onlyResource(execution, 'AWS::Lambda::Url').resource.Properties.TargetFunctionArn['Fn::GetAtt'][0];
    expect(execution.toJSON().Resources[urlHandler].Properties.VpcConfig).toBeUndefined();
    for (const template of [execution, verification]) {
      const subnets = resourcesOf(template, 'AWS::EC2::Subnet');
      const privateSubnets = subnets.filter(([, s]) => s.Properties.MapPublicIpOnLaunch === false && !s.Properties.Tags.some((t: any) => t.Key === 'aws-cdk:subnet-type' && t.Value === 'Public'));
      for (const [, fn] of resourcesOf(template, 'AWS::Lambda::Function').filter(([id]) => id !== urlHandler)) {
        expect(fn.Properties.VpcConfig.SecurityGroupIds).toHaveLength(1);
        for (const subnet of fn.Properties.VpcConfig.SubnetIds) expect(privateSubnets.map(([id]) => id)).toContain(subnet.Ref);
      }
    }
    expect(resourcesOf(verification, 'AWS::Lambda::Function')).toHaveLength(4);
    expect(resourcesOf(execution, 'AWS::Lambda::Function')).toHaveLength(2);
    const runtime = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime');
    expect(runtime.resource.Properties.NetworkConfiguration).toEqual({
      NetworkMode: 'VPC',
      NetworkModeConfig: { SecurityGroups: [expect.anything()], Subnets: [expect.anything(), expect.anything()] },
    });
  });

  it('gives the execution zone no way out: isolated subnets, no NAT or internet gateway, egress only to the endpoints', () => {
    execution.resourceCountIs('AWS::EC2::NatGateway', 0);
    execution.resourceCountIs('AWS::EC2::InternetGateway', 0);
    for (const [, subnet] of resourcesOf(execution, 'AWS::EC2::Subnet')) expect(subnet.Properties.Tags).toContainEqual({ Key: 'aws-cdk:subnet-type', Value: 'Isolated' });
    const functionsSg = onlyResource(execution, 'AWS::EC2::SecurityGroup', { GroupDescription: 'execution zone functions: HTTPS out only' });
    const endpointsSg = onlyResource(execution, 'AWS::EC2::SecurityGroup', { GroupDescription: 'Interface endpoints: HTTPS from the VPC' });
    // No inline egress (at most CDK's placeholder that allows nothing): every rule is one of the two below.
    const inline = (functionsSg.resource.Properties.SecurityGroupEgress ?? []) as any[];
    expect(inline.filter((rule) => rule.Description !== 'Disallow all traffic')).toEqual([]);
    const egress = resourcesOf(execution, 'AWS::EC2::SecurityGroupEgress').filter(([, e]) => JSON.stringify(e.Properties.GroupId).includes(functionsSg.id));
    expect(egress.map(([, e]) => e.Properties).map(({ GroupId, Description, ...rule }) => rule)).toEqual(
      expect.arrayContaining([
        { IpProtocol: 'tcp', FromPort: 443, ToPort: 443, DestinationSecurityGroupId: { 'Fn::GetAtt': [endpointsSg.id, 'GroupId'] } },
        { IpProtocol: 'tcp', FromPort: 443, ToPort: 443, DestinationPrefixListId: expect.stringMatching(/^pl-/) },
      ]),
    );
    expect(egress).toHaveLength(2);
    // The runtime uses the same security group.
    const runtime = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime');
    expect(runtime.resource.Properties.NetworkConfiguration.NetworkModeConfig.SecurityGroups).toEqual([{ 'Fn::GetAtt': [functionsSg.id, 'GroupId'] }]);
  });

  it('reaches AWS through endpoints: DynamoDB by gateway, the rest by interface with private DNS, open to the VPC only', () => {
    const services = (t: Template) =>
      resourcesOf(t, 'AWS::EC2::VPCEndpoint')
        .map(([, e]) => `${e.Properties.VpcEndpointType}:${JSON.stringify(e.Properties.ServiceName).match(/\.([a-z-]+)"/)![1]}`)
        .sort();
    expect(services(execution)).toEqual(['Gateway:dynamodb', 'Interface:bedrock-agentcore', 'Interface:bedrock-runtime', 'Interface:logs', 'Interface:sqs']);
    expect(services(verification)).toEqual(['Gateway:dynamodb', 'Interface:bedrock-agentcore', 'Interface:logs', 'Interface:secretsmanager', 'Interface:sqs']);
    for (const t of [execution, verification]) {
      for (const [, e] of resourcesOf(t, 'AWS::EC2::VPCEndpoint').filter(([, e]) => e.Properties.VpcEndpointType === 'Interface')) expect(e.Properties.PrivateDnsEnabled).toBe(true);
      t.hasResourceProperties('AWS::EC2::SecurityGroup', {
        GroupDescription: 'Interface endpoints: HTTPS from the VPC',
        SecurityGroupIngress: [Match.objectLike({ CidrIp: CREATED_VPC_CIDR, FromPort: 443, ToPort: 443 })],
      });
    }
  });

  it('lets the verification zone out to Slack through one NAT gateway, HTTPS only, from private subnets', () => {
    verification.resourceCountIs('AWS::EC2::NatGateway', 1);
    const sg = onlyResource(verification, 'AWS::EC2::SecurityGroup', { GroupDescription: 'verification zone functions: HTTPS out only' });
    expect(sg.resource.Properties.SecurityGroupEgress).toEqual([expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 })]);
    // Public subnets hold the NAT gateway only and give nothing a public IP by itself (CT.EC2.PR.11).
    for (const [, subnet] of resourcesOf(verification, 'AWS::EC2::Subnet')) expect(subnet.Properties.MapPublicIpOnLaunch).toBe(false);
  });

  it('logs API Gateway execution errors (never bodies) and traces with X-Ray, into a log group made first with the key', () => {
    verification.hasResourceProperties('AWS::ApiGateway::Stage', {
      TracingEnabled: true,
      MethodSettings: [Match.objectLike({ LoggingLevel: 'ERROR', DataTraceEnabled: false, HttpMethod: '*', ResourcePath: '/*' })],
    });
    verification.resourceCountIs('AWS::ApiGateway::Account', 1);
    const group = resourcesOf(verification, 'AWS::Logs::LogGroup').find(([, g]) => JSON.stringify(g.Properties.LogGroupName ?? '').includes('API-Gateway-Execution-Logs_'));
    expect(group).toBeDefined();
    const stage = onlyResource(verification, 'AWS::ApiGateway::Stage');
    expect(stage.resource.DependsOn).toContain(group![0]);
  });

  it('allow-lists A2A-Version on the runtime only because a2aVersionHeader says an A2A 1.0 agent is hosted there', () => {
    const runtime = onlyResource(execution, 'AWS::BedrockAgentCore::Runtime');
    expect(runtime.resource.Properties.RequestHeaderConfiguration).toEqual({ RequestHeaderAllowlist: ['A2A-Version'] });
  });
});

/** Runs a command in the repository's root; resolves with its exit code and output. */
function runCommand(command: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: path.join(__dirname, '..', '..'), env: { ...process.env, ...env }, timeout: 50_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('governance=strict offline (no account named: `npx cdk synth` without credentials)', () => {
  it('names the DynamoDB prefix list given by -c dynamodbPrefixListId, with no lookup', () => {
    const synth = synthesize({ governance: 'strict', dynamodbPrefixListId: 'pl-02cd2c6b' });
    try {
      const egress = resourcesOf(synth.execution!, 'AWS::EC2::SecurityGroupEgress').map(([, e]) => e.Properties);
      expect(egress).toContainEqual(expect.objectContaining({ DestinationPrefixListId: 'pl-02cd2c6b', FromPort: 443 }));
      expect(synth.app.node.metadata.filter((entry) => entry.type === 'aws:cdk:missing-context')).toEqual([]);
    } finally {
      synth.cleanup();
    }
  });

  it('without it, says which value to give (a lookup needs an account and Region)', () => {
    expect(() => synthesize({ governance: 'strict' })).toThrow(/governance=strict needs the DynamoDB prefix list of the Region for the execution zone: give -c dynamodbPrefixListId=pl-/);
  });

  it('the app the CDK CLI runs prints that message alone, without a stack trace, and exits 1', async () => {
    // Prepare: the app as `npx cdk synth -c governance=strict` runs it (cdk.json's command, the context in CDK_CONTEXT_JSON).
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk-strict-'));
    try {
      // Act
      const run = await runCommand('npx', ['tsx', 'cdk/bin/app.ts'], { CDK_CONTEXT_JSON: JSON.stringify({ governance: 'strict' }), CDK_OUTDIR: outdir });
      // Assess
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toMatch(/^governance=strict needs the DynamoDB prefix list of the Region for the execution zone: give -c dynamodbPrefixListId=pl-[^\n]*$/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses the key outside strict', () => {
    expect(() => synthesize({ dynamodbPrefixListId: 'pl-02cd2c6b' })).toThrow(/dynamodbPrefixListId: is used only with governance=strict/);
  });
});

describe('docs/deploy.md, "Governed accounts"', () => {
  const section = DEPLOY_MD.slice(DEPLOY_MD.indexOf('## Governed accounts'));

  it('lists every control the default acknowledges, by id, and says how strict meets it', () => {
    expect(DEPLOY_MD).toContain('## Governed accounts');
    const rows = section.split('\n').filter((line) => line.startsWith('| `ct-'));
    expect(rows.map((row) => row.match(/^\| `(ct-[a-z0-9-]+)`/)![1]).sort()).toEqual(Object.keys(CONTROL_TOWER_RULES).sort());
    for (const id of STANDARD_ACKS) expect(rows.find((row) => row.startsWith(`| \`${id}\``))).toMatch(/acknowledged/);
  });
});
