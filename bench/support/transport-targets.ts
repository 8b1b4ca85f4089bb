import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import type { ExecutionRuntime } from '../../src/execution/runtime';
import { startAgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { createLogger } from '../../src/observability/logger';
import { executionAgentsFrom } from '../../src/protocols/agent-config';
import type { ExecutionAgent } from '../../src/protocols/execution-agent';
import { RUNTIME_ARN, close, listen } from './net';

export const TRANSPORTS = ['in-process', 'https', 'agentcore'] as const;
export type TransportName = (typeof TRANSPORTS)[number];

export type TransportTargets = {
  /**
   * The execution agent that reaches the runtime over `name`, configured from the environment as a
   * deployment is; `env` adds variables (e.g. STREAM_HOLD_S).
   */
  agentFor(name: TransportName, env?: Record<string, string>): ExecutionAgent;
  close(): Promise<void>;
};

/**
 * One execution runtime behind every transport, on loopback: in-process (its dispatch), https
 * (its HTTP host) and agentcore (the real SDK client → the AgentCore emulator → the HTTP host). The
 * SDK reads its endpoint override from the process environment, as in a deployment.
 */
export async function serveBehindEveryTransport(runtime: ExecutionRuntime): Promise<TransportTargets> {
  const server = createExecutionHttpServer(runtime);
  const runtimeUrl = await listen(server);
  const emulator = await startAgentCoreEmulator({ runtimes: { [RUNTIME_ARN]: runtimeUrl } });
  process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE = emulator.endpoint;
  const transportEnv: Record<TransportName, Record<string, string>> = {
    'in-process': { TRANSPORT: 'in-process' },
    https: { TRANSPORT: 'https', EXECUTION_URL: `${runtimeUrl}/invocations` },
    agentcore: { TRANSPORT: 'agentcore', AGENTCORE_RUNTIME_ARN: RUNTIME_ARN },
  };
  return {
    agentFor(name, env = {}) {
      const agent = executionAgentsFrom({ env: { ...process.env, ...transportEnv[name], ...env } }, { inProcess: (body) => runtime.dispatch(body), inProcessStream: (body) => runtime.dispatchStream(body), log: createLogger('transport') }).default;
      if (agent.transport !== name) throw new Error(`configured ${name}, got ${agent.transport}`);
      return agent;
    },
    close: async () => {
      await emulator.close();
      await close(server);
    },
  };
}
