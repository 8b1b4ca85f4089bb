import { createTransport, parseTransportConfig, transportConfigFromEnv, type TransportConfigInput, type TransportDeps } from '../transport/factory';
import { buildExecutionAgents, loadAgentsConfig, type AgentConfig, type ExecutionAgents } from './agent-config';

/**
 * The execution agents the environment describes, each with its transport built: the one
 * function the pipeline's wiring calls, so swapping TRANSPORT or EXECUTION_PROTOCOL changes
 * configuration only. With EXECUTION_AGENTS unset, the single agent's transport is read from the
 * TRANSPORT, AGENTCORE_… and EXECUTION_… variables; with it set, from each agent's entry (bearer
 * credentials and region still come from the environment).
 */
export function executionAgentsFromEnv(env: NodeJS.ProcessEnv = process.env, deps: TransportDeps = {}): ExecutionAgents {
  const config = loadAgentsConfig(env);
  const listed = Boolean(env.EXECUTION_AGENTS?.trim());
  return buildExecutionAgents(config, {
    makeTransport: (agent) => createTransport(listed ? parseTransportConfig(transportInputOf(agent, env)) : transportConfigFromEnv(env), deps),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
}

function transportInputOf(agent: AgentConfig, env: NodeJS.ProcessEnv): TransportConfigInput {
  switch (agent.transport) {
    case 'agentcore':
      return { kind: 'agentcore', runtimeArn: agent.runtimeArn ?? '', qualifier: agent.qualifier, region: env.AWS_REGION };
    case 'https':
      return {
        kind: 'https',
        url: agent.url ?? '',
        auth: agent.auth,
        bearerToken: env.EXECUTION_BEARER_TOKEN || undefined,
        bearerSecretArn: env.EXECUTION_BEARER_SECRET_ARN || undefined,
        region: env.AWS_REGION,
      };
    case 'in-process':
      return { kind: 'in-process' };
  }
}
