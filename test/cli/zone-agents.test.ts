import { createServer, type Server } from 'node:http';
import { startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { closeServer, listenOnLoopback } from '../support/http';
import { runZone, spawnZone } from '../support/spawn';

/**
 * `zone agents` lists the configured execution agents from the same environment `zone call` and
 * the verification functions read; `zone agents check` checks each one (its card, then the zone
 * contract's core, or a round trip for an A2A agent) and exits 0 only if every agent passes.
 */
describe('zone agents', () => {
  let runtime: RunningRuntime;
  let a2a: A2aTestAgent;
  let broken: Server;
  let brokenUrl: string;
  beforeAll(async () => {
    runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: '100' });
    a2a = await startSdkA2aAgent();
    // Answers every call with a body that is no JSON-RPC at all.
    broken = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}'));
    brokenUrl = `${await listenOnLoopback(broken)}/invocations`;
  });
  afterAll(async () => {
    await runtime.close();
    await a2a.close();
    await closeServer(broken);
  });

  const agents = () => [
    { name: 'general', protocol: 'execute-task', transport: 'https', url: runtime.invocationsUrl, default: true },
    { name: 'legal', protocol: 'a2a', transport: 'https', url: a2a.url, channels: ['C0LEGAL'], prefix: 'legal', displayName: 'Legal', icon: ':scales:' },
  ];

  it('lists each agent with where it answers, who it posts as, its protocol and its transport', async () => {
    // Nothing listens on port 1: the list is the shell's configuration, and says so.
    const { code, output } = await runZone(['agents', '--verification-port', '1'], { EXECUTION_AGENTS: JSON.stringify(agents()) });

    expect(code).toBe(0);
    expect(output).toMatch(/^this shell's environment \(no local stack answers at http:\/\/127\.0\.0\.1:1\):$/m);
    expect(output).toMatch(/^2 execution agents$/m);
    expect(output).toMatch(/^agent\s+answers\s+posts as\s+protocol\s+transport\s+where$/m);
    expect(output).toMatch(new RegExp(`^general\\s+default\\s+\\(the app\\)\\s+execute-task\\s+https\\s+${runtime.invocationsUrl.replace(/[.]/g, '\\.')}`, 'm'));
    expect(output).toMatch(/^legal\s+channels C0LEGAL; prefix "legal:"\s+Legal :scales:\s+a2a 1\.0\s+https\s+http:\/\/127\.0\.0\.1:\d+\/a2a/m);
  });

  it('describes the running stack, not the shell: `TRANSPORT=agentcore npm start` is reported as AgentCore through its emulator, from any shell', async () => {
    // Prepare: the stack as a newcomer starts it, with the SDK's own Node-version warning left on.
    const quiet = process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { TRANSPORT: 'agentcore' });
    if (quiet !== undefined) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = quiet;
    try {
      const [, base] = await stack.waitFor(/playground\s+(http:\/\/127\.0\.0\.1:\d+)\//);
      // Act: a second shell without the variable, and one with it (but no runtime ARN).
      const plain = await runZone(['agents', '--url', base!]);
      const withVariable = await runZone(['agents', '--url', base!], { TRANSPORT: 'agentcore' });
      // Assess
      for (const run of [plain, withVariable]) {
        expect(run.code).toBe(0);
        expect(run.output).toMatch(new RegExp(`^the local stack at ${base!.replace(/[.]/g, '\\.')} \\(zone start\\):$`, 'm'));
        expect(run.output).toMatch(/^default\s+default\s+\(the app\)\s+execute-task\s+agentcore\s+arn:aws:bedrock-agentcore:\S+ \(the local AgentCore emulator at http:\/\/127\.0\.0\.1:\d+\)$/m);
      }
      // The stack's first lines are its own: no AWS SDK warning about Node versions above them.
      expect(stack.output().trimStart()).toMatch(/^slack-zone-bridge is running locally/);
      expect(stack.output()).not.toMatch(/NodeVersionSupportWarning/);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  }, 60_000);

  it('refuses a routing mistake, naming its place', async () => {
    const bad = [...agents(), { name: 'sre', protocol: 'execute-task', transport: 'https', url: runtime.invocationsUrl, channels: ['C0LEGAL'] }];
    const { code, output } = await runZone(['agents', '--env'], { EXECUTION_AGENTS: JSON.stringify(bad) });

    expect(code).toBe(1);
    expect(output).toMatch(/EXECUTION_AGENTS\[2\]\.channels: channel C0LEGAL is claimed by agents "legal" and "sre"/);
  });

  it('check: every agent passes — the runtime its core cases, the A2A agent a round trip — and it exits 0', async () => {
    const { code, output } = await runZone(['agents', 'check', '--slow-ms', '600'], { EXECUTION_AGENTS: JSON.stringify(agents()) });

    expect(output).toMatch(/^agent\s+protocol\s+transport\s+card\s+check\s+result$/m);
    expect(output).toMatch(/^general\s+execute-task\s+https\s+.*core: \d+ passed, 0 failed.*\s+PASS$/m);
    expect(output).toMatch(/^legal\s+a2a\s+https\s+read \(sdk-test-agent\)\s+round trip: answered\s+PASS$/m);
    expect(output).toMatch(/^all 2 agents pass$/m);
    expect(code).toBe(0);
  }, 60_000);

  it('check: an agent that breaks the contract fails its row, and the command exits 1', async () => {
    const list = [...agents(), { name: 'broken', protocol: 'execute-task', transport: 'https', url: brokenUrl, maxAttempts: 1 }];
    const { code, output } = await runZone(['agents', 'check', '--slow-ms', '600'], { EXECUTION_AGENTS: JSON.stringify(list) });

    expect(output).toMatch(/^general\s.*PASS$/m);
    expect(output).toMatch(/^broken\s+execute-task\s+https\s.*core: \d+ passed, [1-9]\d* failed.*FAIL$/m);
    expect(output).toMatch(/^1 of 3 agents FAIL$/m);
    expect(code).toBe(1);
  }, 60_000);

  it('zone start takes the same agents, and zone say --channel says a message where an agent answers: routing, locally', async () => {
    const stack = spawnZone(['start', '--verification-port', '0', '--execution-port', '0'], { EXECUTION_AGENTS: JSON.stringify(agents()) });
    try {
      const [, ingress] = await stack.waitFor(/Slack ingress\s+POST (\S+)/);
      const routed = await runZone(['say', 'is this clause fine?', '--url', ingress!, '--channel', 'C0LEGAL', '--wait', '15']);
      expect(routed.output).toMatch(/^a2a echo: is this clause fine\?$/m);
      expect(routed.code).toBe(0);
      const elsewhere = await runZone(['say', 'hello', '--url', ingress!, '--wait', '15']);
      expect(elsewhere.output).toMatch(/^echo: hello$/m);
      expect(elsewhere.code).toBe(0);
      const refused = await runZone(['say', 'hello', '--url', ingress!, '--channel', '#legal']);
      expect(refused.code).toBe(1);
      expect(refused.output).toMatch(/--channel takes a Slack channel id/);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  }, 60_000);
});
