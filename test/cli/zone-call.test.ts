import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { runZone } from '../support/spawn';

const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/cli_test-AbCdEf1234';

describe('zone call', () => {
  let runtime: RunningRuntime;
  let emulator: AgentCoreEmulator;
  beforeAll(async () => {
    runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: '100' });
    emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: runtime.baseUrl } });
  });
  afterAll(async () => {
    await emulator.close();
    await runtime.close();
  });

  it('sends a task over https, polls the accepted task and prints the reply', async () => {
    const { code, output } = await runZone(['call', '--text', 'slow #sleep=600', '--url', runtime.invocationsUrl, '--poll-ms', '200']);
    expect(code).toBe(0);
    expect(output).toMatch(/protocol execute-task over https/);
    expect(output).toMatch(/pending: task task-/);
    expect(output).toMatch(/success after \d+ poll/);
    expect(output).toMatch(/echo: slow #sleep=600/);
  });

  it('swaps to AgentCore by configuration alone (the real SDK client, through the emulator)', async () => {
    const { code, output } = await runZone(['call', '--text', 'via agentcore'], {
      TRANSPORT: 'agentcore',
      AGENTCORE_RUNTIME_ARN: ARN,
      AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: emulator.endpoint,
      AWS_ACCESS_KEY_ID: 'AKIDLOCAL',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_REGION: 'us-east-1',
    });
    expect(code).toBe(0);
    expect(output).toMatch(/over agentcore/);
    expect(output).toMatch(/echo: via agentcore/);
    expect(emulator.invocations.some((i) => i.runtimeArn === ARN)).toBe(true);
  });

  it('runs the execution runtime in its own process with TRANSPORT=in-process, accepted tasks included', async () => {
    const { code, output } = await runZone(['call', '--text', 'inside #sleep=300', '--poll-ms', '100'], { TRANSPORT: 'in-process', SYNC_BUDGET_MS: '50' });
    expect(code).toBe(0);
    expect(output).toMatch(/protocol execute-task over in-process/);
    expect(output).toMatch(/pending: task task-/);
    expect(output).toMatch(/echo: inside #sleep=300/);
  });

  it('hosts the execution runtime itself for an in-process agent listed in EXECUTION_AGENTS', async () => {
    const agents = JSON.stringify([{ name: 'inside', protocol: 'execute-task', transport: 'in-process' }]);
    const { code, output } = await runZone(['call', '--text', 'listed'], { EXECUTION_AGENTS: agents });
    expect(code).toBe(0);
    expect(output).toMatch(/agent inside: protocol execute-task over in-process/);
    expect(output).toMatch(/echo: listed/);
  });

  it('refuses an unknown --transport or --protocol, naming the choices', async () => {
    const transport = await runZone(['call', '--text', 'x', '--transport', 'pigeon']);
    const protocol = await runZone(['call', '--text', 'x', '--protocol', 'soap']);
    expect(transport.code).toBe(1);
    expect(transport.output).toMatch(/--transport must be one of agentcore, https, in-process/);
    expect(protocol.output).toMatch(/--protocol must be one of execute-task, a2a, simple-a2a/);
  });

  it('exits 1 and prints the failure for a task that fails', async () => {
    const { code, output } = await runZone(['call', '--text', '#fail', '--url', runtime.invocationsUrl]);
    expect(code).toBe(1);
    expect(output).toMatch(/failure: failed, code -32000 \(permanent\)/);
  });
});
