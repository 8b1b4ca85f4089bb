import { randomUUID } from 'node:crypto';
import { ConfigError } from '../../src/config/env';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { ExecutionAgentsSchema, agentSettingsFrom, buildExecutionAgents, executionAgentsFrom } from '../../src/protocols/agent-config';
import { createProtocol } from '../../src/protocols/factory';
import { startHandWrittenA2aAgent, startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';

const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/zone-abc1234567';
const loadAgentsConfig = (env: NodeJS.ProcessEnv) => agentSettingsFrom({ env });

describe('agentSettingsFrom plain variables', () => {
  it('defaults to one execute-task agent over agentcore', () => {
    expect(loadAgentsConfig({ AGENTCORE_RUNTIME_ARN: ARN })).toEqual({
      agents: [{ name: 'default', protocol: 'execute-task', stream: true, channels: [], sendBotToken: false, transport: expect.objectContaining({ kind: 'agentcore', runtimeArn: ARN }) }],
      defaultAgent: 'default',
    });
  });

  it('reads EXECUTION_PROTOCOL, A2A_VERSION and TRANSPORT', () => {
    const config = loadAgentsConfig({ EXECUTION_PROTOCOL: 'a2a', A2A_VERSION: '0.3', TRANSPORT: 'https', EXECUTION_URL: 'https://agent.example/' });

    expect(config.agents).toEqual([{ name: 'default', protocol: 'a2a', a2aVersion: '0.3', stream: true, channels: [], sendBotToken: false, transport: expect.objectContaining({ kind: 'https', url: 'https://agent.example/' }) }]);
  });

  it('gives a2a agents dialect 1.0 unless told otherwise', () => {
    expect(loadAgentsConfig({ EXECUTION_PROTOCOL: 'a2a', AGENTCORE_RUNTIME_ARN: ARN }).agents[0]).toMatchObject({ a2aVersion: '1.0' });
  });

  it('takes typed overrides over the environment, and refuses them for a list of agents', () => {
    const env = { TRANSPORT: 'https', EXECUTION_URL: 'https://agent.example/' };

    expect(agentSettingsFrom({ env, overrides: { protocol: 'simple-a2a', transport: { https: { url: 'https://flag.example/' } } } }).agents[0]).toMatchObject({
      protocol: 'simple-a2a',
      transport: { kind: 'https', url: 'https://flag.example/' },
    });
    expect(() => agentSettingsFrom({ env: { EXECUTION_AGENTS: '[]' }, overrides: { protocol: 'a2a' } })).toThrow(/single agent only/);
  });

  it.each([
    ['EXECUTION_PROTOCOL', { EXECUTION_PROTOCOL: 'grpc' }],
    ['A2A_VERSION', { A2A_VERSION: '2.0' }],
    ['TRANSPORT', { TRANSPORT: 'carrier-pigeon' }],
  ])('refuses a bad %s, naming it', (variable, env) => {
    expect(() => loadAgentsConfig(env)).toThrow(new RegExp(variable));
  });
});

describe('agentSettingsFrom EXECUTION_AGENTS', () => {
  const agents = (list: unknown[], extra: Record<string, string> = {}) => loadAgentsConfig({ EXECUTION_AGENTS: JSON.stringify(list), ...extra });
  const local = { name: 'local', protocol: 'execute-task', transport: 'https', url: 'http://127.0.0.1:8080/invocations', auth: 'none' };
  const runtime = { name: 'prod', protocol: 'execute-task', transport: 'agentcore', runtimeArn: ARN, qualifier: 'DEFAULT' };
  const partner = { name: 'partner', protocol: 'a2a', transport: 'https', url: 'https://agent.example.com/a2a' };

  it('sends the bot token only to the agent whose entry says "sendBotToken": true (execute-task only)', () => {
    const config = agents([{ ...runtime, sendBotToken: true, default: true }, partner]);
    expect(config.agents.map((agent) => [agent.name, agent.sendBotToken])).toEqual([['prod', true], ['partner', false]]);
    expect(buildExecutionAgents({ agents: [config.agents[0]!], defaultAgent: 'prod' }, { agentCoreClient: {} as never }).get('prod')!.sendsBotToken).toBe(true);
    expect(() => agents([{ ...partner, sendBotToken: true }])).toThrow(/EXECUTION_AGENTS\[0\]\.sendBotToken: .*needs protocol execute-task/);
  });

  it('reads who may answer each agent\'s questions besides the asker ("approvers": Slack user ids), and refuses what is not one', () => {
    const config = agents([{ ...runtime, approvers: ['U0BOSS', 'W0ADMIN', 'U0BOSS'], default: true }, partner]);
    expect(config.agents.map((agent) => [agent.name, agent.approvers])).toEqual([['prod', ['U0BOSS', 'W0ADMIN']], ['partner', undefined]]);
    expect(buildExecutionAgents({ agents: [config.agents[0]!], defaultAgent: 'prod' }, { agentCoreClient: {} as never }).approvers('prod')).toEqual(['U0BOSS', 'W0ADMIN']);
    expect(() => agents([{ ...runtime, approvers: ['@boss'] }])).toThrow(/EXECUTION_AGENTS\[0\]\.approvers\[0\]: approvers are Slack user ids/);
  });

  it('refuses EXECUTION_SEND_BOT_TOKEN while several agents are configured; with one execute-task agent it stands for that one', () => {
    expect(() => agents([{ ...runtime, default: true }, partner], { EXECUTION_SEND_BOT_TOKEN: 'true' })).toThrow(/EXECUTION_SEND_BOT_TOKEN would send the bot token to every agent.*"sendBotToken": true/);
    expect(agents([runtime], { EXECUTION_SEND_BOT_TOKEN: 'true' }).agents[0]!.sendBotToken).toBe(true);
    expect(() => agents([partner], { EXECUTION_SEND_BOT_TOKEN: 'true' })).toThrow(/no bot_token field/);
    expect(loadAgentsConfig({ AGENTCORE_RUNTIME_ARN: ARN, EXECUTION_SEND_BOT_TOKEN: 'true' }).agents[0]!.sendBotToken).toBe(true);
  });

  it('lists several agents and picks the one marked default', () => {
    const config = agents([local, { ...runtime, default: true }, partner]);

    expect(config.defaultAgent).toBe('prod');
    expect(config.agents.map((agent) => agent.name)).toEqual(['local', 'prod', 'partner']);
  });

  it('keeps the environment\'s transport tuning for every entry unless the entry sets its own', () => {
    const config = agents([{ ...local, default: true }, { ...partner, timeoutMs: 900 }, runtime], { EXECUTION_TIMEOUT_MS: '4000', EXECUTION_MAX_ATTEMPTS: '5', AGENTCORE_TIMEOUT_MS: '8000' });

    expect(config.agents.map((agent) => agent.transport)).toEqual([
      expect.objectContaining({ kind: 'https', timeoutMs: 4000, maxAttempts: 5 }),
      expect.objectContaining({ kind: 'https', timeoutMs: 900, maxAttempts: 5 }),
      expect.objectContaining({ kind: 'agentcore', timeoutMs: 8000, qualifier: 'DEFAULT' }),
    ]);
  });

  it('gives an a2a agent without a dialect the A2A_VERSION one', () => {
    const config = agents([{ ...partner, default: true }], { A2A_VERSION: '0.3' });

    expect(config.agents[0]).toMatchObject({ a2aVersion: '0.3' });
  });

  it('reads streamed reads per agent: the hold of its transport (STREAM_HOLD_S, streamHoldS) and "stream": false', () => {
    const config = agents([{ ...local, default: true, stream: false }, { ...partner, streamHoldS: 5 }, runtime], { STREAM_HOLD_S: '12' });

    expect(config.agents.map((agent) => [agent.stream, agent.transport.streamHoldS])).toEqual([
      [false, 12],
      [true, 5],
      [true, 12],
    ]);
    expect(() => agents([{ ...local, stream: 'no' }])).toThrow(/EXECUTION_AGENTS\[0\]\.stream/);
  });

  it('takes a lone agent as the default without a flag', () => {
    expect(agents([local]).defaultAgent).toBe('local');
  });

  it.each<[string, unknown[], RegExp]>([
    ['no default among several', [local, runtime], /exactly one agent must have "default": true \(found none\)/],
    ['two defaults', [{ ...local, default: true }, { ...runtime, default: true }], /found 2/],
    ['a name used twice', [{ ...local, default: true }, { ...runtime, name: 'local' }], /EXECUTION_AGENTS\[1\]\.name: .*used twice/],
    ['https without a url', [{ ...local, url: undefined }], /EXECUTION_AGENTS\[0\]\.url: transport https needs url/],
    ['agentcore without a runtime ARN', [{ ...runtime, runtimeArn: undefined }], /EXECUTION_AGENTS\[0\]\.runtimeArn: transport agentcore needs runtimeArn/],
    ['an option of another transport', [{ ...local, runtimeArn: ARN }], /EXECUTION_AGENTS\[0\].*runtimeArn/],
    ['a misspelt key', [{ ...runtime, runtimeARN: 'arn:x' }], /runtimeARN/],
    ['a dialect on a non-a2a agent', [{ ...local, a2aVersion: '0.3' }], /a2aVersion applies to protocol a2a only/],
    ['auto without an https url', [{ ...runtime, protocol: 'a2a', a2aVersion: 'auto' }], /a2aVersion auto reads the agent card, so it needs transport https/],
    ['an empty list', [], /at least one agent/],
  ])('refuses %s', (_what, list, message) => {
    expect(() => agents(list)).toThrow(message);
  });

  it('refuses JSON it cannot parse, as a ConfigError', () => {
    expect(() => loadAgentsConfig({ EXECUTION_AGENTS: '[{name: local}]' })).toThrow(ConfigError);
  });

  it('exports the schema for tooling (docs, CDK validation)', () => {
    expect(ExecutionAgentsSchema.safeParse([{ ...local, default: true }]).success).toBe(true);
    expect(ExecutionAgentsSchema.safeParse([{ ...local, protocol: 'soap' }]).success).toBe(false);
  });
});

describe('buildExecutionAgents', () => {
  let sdk: A2aTestAgent;
  let handWritten: A2aTestAgent;
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '50' }) });
  beforeAll(async () => {
    [sdk, handWritten] = await Promise.all([startSdkA2aAgent(), startHandWrittenA2aAgent()]);
  });
  afterAll(() => Promise.all([sdk.close(), handWritten.close()]));

  it('wires each agent with its protocol and the transport built from its own entry', async () => {
    const config = agentSettingsFrom({ env: { EXECUTION_AGENTS: JSON.stringify([
        { name: 'local', protocol: 'execute-task', transport: 'in-process', default: true },
        { name: 'sdk', protocol: 'a2a', transport: 'https', url: sdk.url },
        { name: 'old', protocol: 'a2a', transport: 'https', url: handWritten.url, a2aVersion: 'auto' },
      ]) } });

    const agents = buildExecutionAgents(config, { inProcess: runtime.dispatch });
    const ask = (name: string, text: string) => agents.get(name)!.start({ text }, { requestId: randomUUID() });

    expect(agents.default.name).toBe('local');
    expect(agents.names).toEqual(['local', 'sdk', 'old']);
    expect(await agents.default.start({ text: 'hi' }, { requestId: randomUUID() })).toMatchObject({ kind: 'success', text: 'echo: hi' });
    expect(await ask('sdk', 'hi')).toMatchObject({ kind: 'success', text: 'a2a echo: hi' });
    expect(await ask('old', 'hi')).toMatchObject({ kind: 'success', text: 'plain: hi' });
    expect(agents.get('sdk')).toMatchObject({ protocol: 'a2a', transport: 'https' });
  });

  it('gives each agent its hold of streamed reads, none when its entry says "stream": false or the hold is 0', () => {
    const build = (list: unknown[], env: NodeJS.ProcessEnv = {}) => buildExecutionAgents(agentSettingsFrom({ env: { ...env, EXECUTION_AGENTS: JSON.stringify(list) } }), { inProcess: runtime.dispatch });
    const built = build([
      { name: 'local', protocol: 'execute-task', transport: 'in-process', default: true },
      { name: 'quiet', protocol: 'execute-task', transport: 'in-process', stream: false },
      { name: 'short', protocol: 'a2a', transport: 'https', url: sdk.url, streamHoldS: 5 },
      { name: 'old', protocol: 'simple-a2a', transport: 'https', url: handWritten.url },
    ], { STREAM_HOLD_S: '30' });

    expect(['local', 'quiet', 'short', 'old'].map((name) => [built.get(name)!.streams, built.get(name)!.streamHoldMs])).toEqual([
      [true, 30_000],
      [false, 0],
      [true, 5_000],
      // simple-a2a has no streamed form
      [false, 30_000],
    ]);
    // Streamed reads are on by default (STREAM_HOLD_S 30); STREAM_HOLD_S=0 turns them off.
    expect(build([{ name: 'local', protocol: 'execute-task', transport: 'in-process' }]).default.streamHoldMs).toBe(30_000);
    expect(build([{ name: 'local', protocol: 'execute-task', transport: 'in-process' }]).default.streams).toBe(true);
    expect(build([{ name: 'local', protocol: 'execute-task', transport: 'in-process' }], { STREAM_HOLD_S: '0' }).default.streams).toBe(false);
  });
});

describe('executionAgentsFrom', () => {
  it('parses and builds in one step, failing clearly where a transport needs what nobody wired', () => {
    expect(executionAgentsFrom({ env: { TRANSPORT: 'https', EXECUTION_URL: 'http://127.0.0.1:1/invocations' } }).default).toMatchObject({ name: 'default', transport: 'https', protocol: 'execute-task' });
    expect(() => executionAgentsFrom({ env: { TRANSPORT: 'in-process' } })).toThrow(/in-process/);
  });
});

describe('createProtocol', () => {
  it.each(['execute-task', 'a2a', 'simple-a2a'] as const)('builds %s', (name) => {
    expect(createProtocol(name).name).toBe(name);
  });

  it('refuses a name it does not know', () => {
    expect(() => createProtocol('soap' as never)).toThrow(/unknown execution protocol "soap"/);
  });
});
