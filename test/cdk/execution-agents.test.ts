import * as fs from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { parseDeploymentConfig } from '../../cdk/config';
import { buildZones, governancePlanner } from '../../cdk/zones';
import { agentSettingsFrom } from '../../src/protocols/agent-config';
import { CDK_JSON, EXECUTION_ACCOUNT, functionId, REGION, SINGLE_ACCOUNT, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/**
 * Several execution agents in one deployment (issue 27 item 4; docs/deploy.md, "Several execution
 * agents"): the list CDK takes, the EXECUTION_AGENTS it writes, and exactly the grants each agent
 * needs. One synthesis of the fixture serves every template test; the refusals are decided before
 * any stack exists, so they cost no synthesis.
 */

const ROOT = path.join(__dirname, '..', '..');
/** Relative to the project root, as an operator passes it. */
const FILE = 'test/cdk/fixtures/execution-agents.json';
const LIST = JSON.parse(fs.readFileSync(path.join(ROOT, FILE), 'utf8')) as Array<Record<string, unknown>>;
/** What the own runtime's ARN resolves to at deploy time, for reading the template back. */
const OWN_RUNTIME_ARN = `arn:aws:bedrock-agentcore:${REGION}:${EXECUTION_ACCOUNT}:runtime/slack_zone_exec-OwnRt12345`;
const SRE_RUNTIME = 'arn:aws:bedrock-agentcore:us-east-1:333333333333:runtime/sre_agent-AbCdEf1234';
const LEGAL_SECRET = 'arn:aws:secretsmanager:us-east-1:111111111111:secret:legal-agent-token-AbCdEf';
const BILLING_FUNCTION = 'arn:aws:lambda:us-east-1:444444444444:function:billing-agent';

const CALLERS = ['agent-invoker', 'async-result'] as const;
const SINGLE_AGENT_VARIABLES = ['TRANSPORT', 'AGENTCORE_RUNTIME_ARN', 'AGENTCORE_QUALIFIER', 'EXECUTION_URL', 'EXECUTION_AUTH', 'EXECUTION_BEARER_SECRET_ARN', 'EXECUTION_PROTOCOL', 'A2A_VERSION'];

let synth: Synthesized;
beforeAll(() => {
  // AGENTCORE_STOP_SESSION on: the callers may also end sessions, on the AgentCore agents only.
  synth = synthesize({ ...SINGLE_ACCOUNT, executionAgentsFile: FILE, verificationEnvironment: JSON.stringify({ AGENTCORE_STOP_SESSION: 'after-answer' }) });
});
afterAll(() => synth?.cleanup());

const envOf = (prefix: string): Record<string, any> => synth.verification!.toJSON().Resources[functionId(synth.verification!, prefix)].Properties.Environment.Variables;

/** The own runtime's ARN as the verification template refers to it (a weak reference to ExecutionZone's output). */
const ownRuntimeRef = (part: any) =>
  part?.['Fn::GetStackOutput']?.StackName === 'ExecutionZone' && String(part['Fn::GetStackOutput'].OutputName).includes('AgentRuntimeArn');

/** EXECUTION_AGENTS as CloudFormation will render it: the Fn::Join around the own runtime's ARN. */
function rendered(value: any): string {
  if (typeof value === 'string') return value;
  const [separator, parts] = value['Fn::Join'] as [string, any[]];
  return parts
    .map((part) => {
      if (typeof part === 'string') return part;
      if (!ownRuntimeRef(part)) throw new Error(`EXECUTION_AGENTS refers to something other than the own runtime: ${JSON.stringify(part)}`);
      return OWN_RUNTIME_ARN;
    })
    .join(separator);
}

describe('EXECUTION_AGENTS on the functions', () => {
  it('is on slack-events, agent-invoker and async-result, and reads back with the functions\' parser as the same agents', () => {
    // The list as an operator means it: CDK's own keys gone, the own agent at its runtime.
    const intended = LIST.map(({ own, grantArn: _grantArn, ...entry }) => (own ? { ...entry, runtimeArn: OWN_RUNTIME_ARN } : entry));
    const expected = agentSettingsFrom({ env: { EXECUTION_AGENTS: JSON.stringify(intended), AWS_REGION: REGION } });
    expect(expected.agents.map((agent) => agent.name)).toEqual(['general', 'legal', 'sre', 'research', 'billing']);
    for (const prefix of ['slack-events', ...CALLERS]) {
      const env = envOf(prefix);
      const settings = agentSettingsFrom({ env: { EXECUTION_AGENTS: rendered(env.EXECUTION_AGENTS), AWS_REGION: REGION } });
      expect([prefix, settings]).toEqual([prefix, expected]);
      // The list replaces the single agent's variables: both at once would be two answers to one question.
      expect([prefix, SINGLE_AGENT_VARIABLES.filter((name) => name in env)]).toEqual([prefix, []]);
    }
    expect(expected.defaultAgent).toBe('general');
    const byName = Object.fromEntries(expected.agents.map((agent) => [agent.name, agent]));
    expect(byName.general!.transport).toEqual(expect.objectContaining({ kind: 'agentcore', runtimeArn: OWN_RUNTIME_ARN }));
    expect(byName.sre!.transport).toEqual(expect.objectContaining({ kind: 'agentcore', runtimeArn: SRE_RUNTIME, qualifier: 'prod' }));
    expect(byName.legal).toEqual(expect.objectContaining({ protocol: 'a2a', a2aVersion: '1.0', channels: ['C0LEGAL01'], prefix: 'legal', persona: { username: 'Legal', iconEmoji: ':scales:' } }));
    expect(byName.legal!.transport).toEqual(expect.objectContaining({ kind: 'https', auth: 'bearer', bearerSecretArn: LEGAL_SECRET }));
    expect(byName.billing!.transport).toEqual(expect.objectContaining({ kind: 'https', timeoutMs: 20000 }));
  });

  it('writes no list where nothing reads it (slack-poster), and never a token or CDK\'s own keys', () => {
    expect(envOf('slack-poster')).not.toHaveProperty('EXECUTION_AGENTS');
    const text = rendered(envOf('agent-invoker').EXECUTION_AGENTS);
    for (const key of ['"own"', '"grantArn"', '"bearerToken"']) expect(text).not.toContain(key);
  });
});

describe('grants: exactly what each agent needs, on both callers', () => {
  /** Every (action, resource) pair of a role's policies, a resource as the template writes it. */
  const pairsOf = (prefix: string) =>
    statementsOfFunction(synth.verification!, functionId(synth.verification!, prefix)).flatMap((statement) =>
      [statement.Action].flat().flatMap((action: string) => [statement.Resource].flat().map((resource: unknown) => ({ action, resource, condition: statement.Condition }))),
    );
  const AGENT_ACTIONS = ['bedrock-agentcore:InvokeAgentRuntime', 'lambda:InvokeFunctionUrl', 'lambda:InvokeFunction', 'execute-api:Invoke', 'secretsmanager:GetSecretValue'];

  it.each(CALLERS)('%s may call the five agents, each with its own grant, and nothing else', (prefix) => {
    const pairs = pairsOf(prefix).filter((pair) => AGENT_ACTIONS.includes(pair.action));
    // The bot token is the stack's own secret (a Ref); every other read is an agent's.
    const agentPairs = pairs.filter((pair) => !(pair.action === 'secretsmanager:GetSecretValue' && (pair.resource as any)?.Ref));
    const readable = agentPairs.map(({ action, resource, condition }) => ({
      action,
      resource: ownRuntimeRef(resource)
        ? OWN_RUNTIME_ARN
        : (resource as any)?.['Fn::Join']
          ? rendered(resource)
          : resource,
      ...(condition ? { condition } : {}),
    }));
    const sortKey = (p: { action: string; resource: unknown }) => `${p.action} ${JSON.stringify(p.resource)}`;
    expect(readable.sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).toEqual(
      [
        // general: this deployment's runtime and its DEFAULT endpoint.
        { action: 'bedrock-agentcore:InvokeAgentRuntime', resource: OWN_RUNTIME_ARN },
        { action: 'bedrock-agentcore:InvokeAgentRuntime', resource: `${OWN_RUNTIME_ARN}/runtime-endpoint/DEFAULT` },
        // sre: another account's runtime, at the endpoint its qualifier names.
        { action: 'bedrock-agentcore:InvokeAgentRuntime', resource: SRE_RUNTIME },
        { action: 'bedrock-agentcore:InvokeAgentRuntime', resource: `${SRE_RUNTIME}/runtime-endpoint/prod` },
        // research: the one API Gateway route its URL names, in this account.
        { action: 'execute-api:Invoke', resource: `arn:aws:execute-api:us-east-1:${EXECUTION_ACCOUNT}:a1b2c3d4e5/prod/POST/agent` },
        // billing: the function behind the function URL, only through its IAM-authenticated URL.
        { action: 'lambda:InvokeFunction', resource: BILLING_FUNCTION, condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } } },
        { action: 'lambda:InvokeFunctionUrl', resource: BILLING_FUNCTION, condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } } },
        // legal: its bearer token's secret, read only.
        { action: 'secretsmanager:GetSecretValue', resource: LEGAL_SECRET },
      ].sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
    );
    // Reading a secret is all an agent's token needs: no DescribeSecret or anything else on it.
    const onLegal = pairsOf(prefix).filter((pair) => pair.resource === LEGAL_SECRET);
    expect(onLegal.map((pair) => pair.action)).toEqual(['secretsmanager:GetSecretValue']);
  });

  it.each(CALLERS)('%s may end sessions (AGENTCORE_STOP_SESSION) on the two AgentCore agents\' runtimes and endpoints, no other', (prefix) => {
    const stops = pairsOf(prefix)
      .filter((pair) => pair.action === 'bedrock-agentcore:StopRuntimeSession')
      .map((pair) => (ownRuntimeRef(pair.resource) ? OWN_RUNTIME_ARN : (pair.resource as any)?.['Fn::Join'] ? rendered(pair.resource) : pair.resource));
    expect(stops.sort()).toEqual([OWN_RUNTIME_ARN, `${OWN_RUNTIME_ARN}/runtime-endpoint/DEFAULT`, SRE_RUNTIME, `${SRE_RUNTIME}/runtime-endpoint/prod`].sort());
  });

  it('gives slack-events and slack-poster no agent access', () => {
    for (const prefix of ['slack-events', 'slack-poster']) {
      const actions = pairsOf(prefix).map((pair) => pair.action);
      expect([prefix, actions.filter((action) => /^(bedrock-agentcore|lambda|execute-api):/.test(action))]).toEqual([prefix, []]);
    }
  });

  it('is clean for cdk-nag and the Control Tower controls (no wildcard to acknowledge)', () => {
    expect(synth.nagFindings).toEqual([]);
    expect(synth.controls.violations).toEqual([]);
  });
});

describe('refused at synthesis, with the place', () => {
  const base = { ...SINGLE_ACCOUNT };
  const general = { name: 'general', own: true, protocol: 'execute-task', transport: 'agentcore', default: true };
  const legal = { name: 'legal', protocol: 'a2a', transport: 'https', url: 'https://legal.example.com/a2a', auth: 'bearer', bearerSecretArn: LEGAL_SECRET, channels: ['C0LEGAL01'] };
  const refusal = (context: Record<string, unknown>): string => {
    try {
      parseDeploymentConfig({ ...base, ...context });
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('a channel claimed by two agents, two defaults: the functions\' own routing rules', () => {
    const sre = { name: 'sre', protocol: 'execute-task', transport: 'agentcore', runtimeArn: SRE_RUNTIME, channels: ['C0LEGAL01'] };
    expect(refusal({ executionAgents: [general, legal, sre] })).toMatch(/^invalid CDK context: executionAgents: EXECUTION_AGENTS\[2\]\.channels: channel C0LEGAL01 is claimed by agents "legal" and "sre"/);
    expect(refusal({ executionAgents: [general, { ...legal, default: true }] })).toMatch(/executionAgents: .*exactly one agent must have "default": true \(found 2: "general", "legal"\)/);
  });

  it('a bearer token: never in a template, whatever else the entry says', () => {
    const { bearerSecretArn: _secret, ...withoutSecret } = legal;
    expect(refusal({ executionAgents: JSON.stringify([general, { ...withoutSecret, bearerToken: 'xoxb-secret' }]) })).toMatch(
      /executionAgents: EXECUTION_AGENTS\[1\]\.bearerToken: a token would sit in the template and in cdk\.out; store it in Secrets Manager and name the secret with bearerSecretArn/,
    );
  });

  it('a file that does not exist, or is not JSON; a list given twice', () => {
    expect(refusal({ executionAgentsFile: 'no-such-agents.json' })).toMatch(/executionAgentsFile \(no-such-agents\.json\): no such file .*no-such-agents\.json \(the path is relative to the project root\)/);
    expect(refusal({ executionAgentsFile: 'package.json' })).toMatch(/executionAgentsFile \(package\.json\): must be a JSON list of agent entries/);
    expect(refusal({ executionAgents: '[{"name": ' })).toMatch(/executionAgents: is not valid JSON/);
    expect(refusal({ executionAgentsFile: FILE, executionAgents: [general] })).toMatch(/give the list once/);
  });

  it('what the functions would refuse at start-up: a misspelt key, an http:// URL that is not loopback', () => {
    const sre = { name: 'sre', protocol: 'execute-task', transport: 'agentcore', runtimeARN: SRE_RUNTIME };
    expect(refusal({ executionAgents: [general, sre] })).toMatch(/EXECUTION_AGENTS\[1\]: Unrecognized key: "runtimeARN"/);
    expect(refusal({ executionAgents: [general, { ...legal, url: 'http://legal.example.com/a2a' }] })).toMatch(/EXECUTION_AGENTS\[1\] \("legal"\): .*plain http:\/\//);
  });

  it('a SigV4 agent whose URL does not say what to grant, unless grantArn does; a bearer secret not named by its complete ARN', () => {
    const signed = { name: 'ops', protocol: 'execute-task', transport: 'https', url: 'https://agents.example.com/ops' };
    // A custom domain: the transport cannot sign without a service, and CDK cannot tell what to grant without grantArn.
    expect(refusal({ executionAgents: [general, signed] })).toMatch(/EXECUTION_AGENTS\[1\] \("ops"\): cannot tell the SigV4 service from the host agents\.example\.com/);
    expect(refusal({ executionAgents: [general, { ...signed, sigv4Service: 'execute-api' }] })).toMatch(
      /EXECUTION_AGENTS\[1\]\.url: signed with SigV4, and cannot tell what to grant for agents\.example\.com: give grantArn/,
    );
    expect(refusal({ executionAgents: [general, { ...signed, url: 'https://abc.lambda-url.us-east-1.on.aws/' }] })).toMatch(/EXECUTION_AGENTS\[1\]\.url: .*a function URL does not name its function/);
    expect(refusal({ executionAgents: [general, { ...signed, sigv4Service: 'execute-api', grantArn: 'arn:aws:s3:::bucket' }] })).toMatch(/EXECUTION_AGENTS\[1\]\.grantArn: must be a Lambda function ARN/);
    const granted = parseDeploymentConfig({ ...base, executionAgents: [general, { ...signed, sigv4Service: 'execute-api', grantArn: 'arn:aws:execute-api:us-east-1:555555555555:api1234567/live/POST/ops' }] });
    expect(granted.executionAgents![1]!.grant).toEqual({ kind: 'execute-api', arn: 'arn:aws:execute-api:us-east-1:555555555555:api1234567/live/POST/ops' });
    expect(refusal({ executionAgents: [general, { ...legal, bearerSecretArn: 'legal-agent-token' }] })).toMatch(/EXECUTION_AGENTS\[1\]\.bearerSecretArn: must be the secret's complete ARN/);
  });

  it('an own entry that names an address, uses another transport than -c transport, or comes twice', () => {
    expect(refusal({ executionAgents: [{ ...general, runtimeArn: SRE_RUNTIME }] })).toMatch(/EXECUTION_AGENTS\[0\]\.runtimeArn: an own agent's address and auth are the deployment's/);
    expect(refusal({ executionAgents: [{ ...general, transport: 'https' }] })).toMatch(/EXECUTION_AGENTS\[0\]\.transport: an own agent uses the transport of -c transport \(agentcore\)/);
    expect(refusal({ executionAgents: [general, { ...general, name: 'again', default: false }] })).toMatch(/one entry is this deployment's own execution zone, not 2/);
  });

  it('the bot token to any agent but the own one: "sendBotToken" elsewhere, or executionSendBotToken with several agents', () => {
    const sre = { name: 'sre', protocol: 'execute-task', transport: 'agentcore', runtimeArn: SRE_RUNTIME, channels: ['C0SRE0001'] };
    expect(refusal({ executionAgents: [general, { ...sre, sendBotToken: true }] })).toMatch(/EXECUTION_AGENTS\[1\]\.sendBotToken: the bot token goes only to this deployment's own execution zone/);
    expect(refusal({ executionAgents: [general, sre], executionSendBotToken: 'true' })).toMatch(/executionSendBotToken: would send the bot token to every agent of the list; set "sendBotToken": true on the own entry instead/);
    expect(refusal({ executionAgents: [{ ...sre, default: true }], executionSendBotToken: 'true' })).toMatch(/executionSendBotToken: the one agent of the list is not this deployment's own/);
    const own = parseDeploymentConfig({ ...base, executionAgents: [{ ...general, sendBotToken: true }, sre] });
    expect(own.executionAgents![0]!.entry).toMatchObject({ name: 'general', sendBotToken: true });
  });

  it('EXECUTION_AGENTS through -c verificationEnvironment: CDK writes it', () => {
    expect(refusal({ verificationEnvironment: JSON.stringify({ EXECUTION_AGENTS: '[]' }) })).toMatch(/verificationEnvironment\.EXECUTION_AGENTS: is set by CDK \(or from -c executionAgentsFile, -c executionAgents\)/);
  });

  it('a list that would not fit in Lambda\'s 4 KB of environment, naming the function and the variable', () => {
    const many = Array.from({ length: 30 }, (_, index) => ({ ...legal, name: `agent-${index}`, channels: [`C0AGENT${String(index).padStart(2, '0')}`], prefix: `agent${index}`, ...(index === 0 ? { default: true } : {}) }));
    // The list itself is valid: only its size is wrong.
    expect(parseDeploymentConfig({ ...base, executionAgents: many }).executionAgents).toHaveLength(30);
    const app = new App({ context: { ...CDK_JSON.context, 'aws:cdk:bundling-stacks': [], ...base, executionAgents: many } });
    expect(() => buildZones(app)).toThrow(/VerificationZone\/SlackEvents \(slack-events\): its environment would take about \d+ bytes, over Lambda's limit of 4096 .*the largest, EXECUTION_AGENTS, .*shorten the execution agents list/);
  });
});

describe('what the list changes around it', () => {
  it('the same list from cdk.json (a JSON list) and from -c (its text)', () => {
    const fromJson = parseDeploymentConfig({ ...SINGLE_ACCOUNT, executionAgents: LIST });
    const fromText = parseDeploymentConfig({ ...SINGLE_ACCOUNT, executionAgents: JSON.stringify(LIST) });
    const fromFile = parseDeploymentConfig({ ...SINGLE_ACCOUNT, executionAgentsFile: FILE });
    expect(fromText.executionAgents).toEqual(fromJson.executionAgents);
    expect(fromFile.executionAgents).toEqual(fromJson.executionAgents);
    expect(fromJson.executionAgents!.map((agent) => [agent.name, agent.grant.kind])).toEqual([
      ['general', 'own'],
      ['legal', 'secret'],
      ['sre', 'agentcore'],
      ['research', 'execute-api'],
      ['billing', 'function-url'],
    ]);
  });

  it('foreign agents only: no execution zone needed, and an own entry of an external zone needs its address', () => {
    const foreign = { ...LIST[2]!, default: true };
    const config = parseDeploymentConfig({ ...SINGLE_ACCOUNT, externalExecution: 'true', executionAgents: [foreign, LIST[1]] });
    expect(config.executionHosts).toEqual([]);
    expect(config.executionAgents!.map((agent) => agent.own)).toEqual([false, false]);
    expect(() => parseDeploymentConfig({ ...SINGLE_ACCOUNT, externalExecution: 'true', executionAgents: [LIST[0], LIST[1]] })).toThrow(/an own agent of an external execution zone needs its address \(-c agentRuntimeArn\)/);
  });
});

describe('governance=strict', () => {
  it('gives the verification zone an AgentCore endpoint when any agent of the list is reached over AgentCore, whatever -c transport says', () => {
    const endpoints = (context: Record<string, unknown>) => governancePlanner(parseDeploymentConfig({ ...SINGLE_ACCOUNT, governance: 'strict', ...context }), 365)('verification').interfaceEndpoints;
    const sre = { ...LIST[2]!, default: true };
    expect(endpoints({ transport: 'https', externalExecution: 'true', executionAgents: [sre, LIST[1]] })).toContain('bedrock-agentcore');
    expect(endpoints({ transport: 'https', externalExecution: 'true', executionAgents: [{ ...LIST[1]!, default: true }] })).not.toContain('bedrock-agentcore');
  });
});

describe('docs/deploy.md, "Several execution agents"', () => {
  it('shows the fixture\'s agents: its JSON blocks, together, are this list', () => {
    const deploy = fs.readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8');
    const section = /^## Several execution agents\n([\s\S]*?)(?=^## )/m.exec(deploy)?.[1];
    expect(section).toBeDefined();
    const blocks = [...section!.matchAll(/^```json\n([\s\S]*?)^```/gm)].flatMap((m) => JSON.parse(m[1]!) as unknown[]);
    expect(blocks).toEqual(LIST);
    expect(section).toContain(`-c executionAgentsFile=`);
    expect(section).toContain('chat:write.customize');
  });
});
