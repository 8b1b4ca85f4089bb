import { z } from 'zod';
import { ConfigError, parseEnv } from '../config/env';
import type { Transport, TransportKind } from '../transport/transport';
import { agentCardUrlFor, agentCardVersionResolver } from './a2a';
import { ExecutionAgent } from './execution-agent';
import { PROTOCOL_NAMES, createProtocol, type ProtocolOptions } from './factory';

/**
 * Which execution agents the verification zone talks to (ARCHITECTURE §4): a name + a protocol +
 * a transport + its address and auth. Either one agent from plain variables
 *   EXECUTION_PROTOCOL = execute-task | a2a | simple-a2a   (default execute-task)
 *   A2A_VERSION        = 1.0 | 0.3                          (default 1.0; a2a only)
 *   TRANSPORT          = agentcore | https | in-process     (default agentcore)
 * whose address the transport factory reads from its own variables, or several from
 *   EXECUTION_AGENTS   = JSON array of AgentConfig, exactly one of them the default.
 * When EXECUTION_AGENTS is set it replaces EXECUTION_PROTOCOL and TRANSPORT; A2A_VERSION stays
 * the dialect of a2a entries that name none.
 */

export const TRANSPORT_KINDS = ['agentcore', 'https', 'in-process'] as const satisfies readonly TransportKind[];
export const AUTH_MODES = ['sigv4', 'bearer', 'none'] as const;
export const A2A_VERSION_SETTINGS = ['1.0', '0.3', 'auto'] as const;

export const AgentConfigSchema = z
  .object({
    name: z.string().trim().min(1, 'name must not be empty'),
    protocol: z.enum(PROTOCOL_NAMES),
    transport: z.enum(TRANSPORT_KINDS),
    /** https: the endpoint (a Lambda function URL, API Gateway, any A2A agent). */
    url: z.url().optional(),
    /** https: how to sign requests; the transport picks a default from the URL when unset. */
    auth: z.enum(AUTH_MODES).optional(),
    /** agentcore: the runtime to invoke. */
    runtimeArn: z.string().startsWith('arn:', 'runtimeArn must be an ARN').optional(),
    /** agentcore: endpoint qualifier (default DEFAULT). */
    qualifier: z.string().min(1).optional(),
    /** a2a: the dialect; `auto` reads it from the agent card at the url's origin. */
    a2aVersion: z.enum(A2A_VERSION_SETTINGS).optional(),
    default: z.boolean().optional(),
  })
  // Unknown keys are refused: a misspelt `runtimeARN` must not silently fall back to a default.
  .strict()
  .superRefine((agent, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (agent.transport === 'https' && !agent.url) problem('url', 'transport https needs a url');
    if (agent.transport === 'agentcore' && !agent.runtimeArn) problem('runtimeArn', 'transport agentcore needs a runtimeArn');
    if (agent.transport !== 'https' && agent.auth) problem('auth', 'auth applies to transport https only');
    if (agent.transport !== 'agentcore' && (agent.runtimeArn || agent.qualifier)) problem('runtimeArn', 'runtimeArn and qualifier apply to transport agentcore only');
    if (agent.protocol !== 'a2a' && agent.a2aVersion) problem('a2aVersion', 'a2aVersion applies to protocol a2a only');
    if (agent.a2aVersion === 'auto' && (agent.transport !== 'https' || !agent.url)) problem('a2aVersion', 'a2aVersion auto reads the agent card, so it needs transport https and a url');
  });
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

export const ExecutionAgentsSchema = z
  .array(AgentConfigSchema)
  .min(1, 'list at least one agent')
  .superRefine((agents, ctx) => {
    const seen = new Set<string>();
    agents.forEach((agent, index) => {
      if (seen.has(agent.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `agent name ${JSON.stringify(agent.name)} is used twice` });
      seen.add(agent.name);
    });
    const defaults = agents.filter((agent) => agent.default === true).length;
    // A list of one needs no flag; otherwise the pipeline must not have to guess.
    const lone = agents.length === 1 && agents[0]?.default !== false;
    if (defaults !== 1 && !lone) ctx.addIssue({ code: 'custom', path: [], message: `exactly one agent must have "default": true (found ${defaults})` });
  });

const AgentEnvSchema = z.object({
  EXECUTION_PROTOCOL: z.enum(PROTOCOL_NAMES).default('execute-task'),
  A2A_VERSION: z.enum(['1.0', '0.3']).default('1.0'),
  TRANSPORT: z.enum(TRANSPORT_KINDS).default('agentcore'),
  EXECUTION_AGENTS: z.string().optional(),
});

export type AgentsConfig = {
  /** Every agent; an a2a agent always has its `a2aVersion` filled in. */
  agents: readonly AgentConfig[];
  /** The name of the agent the pipeline uses. */
  defaultAgent: string;
};

export const DEFAULT_AGENT_NAME = 'default';

export function loadAgentsConfig(env: NodeJS.ProcessEnv = process.env): AgentsConfig {
  const vars = parseEnv(AgentEnvSchema, env, 'execution agent');
  if (vars.EXECUTION_AGENTS === undefined) {
    const agent: AgentConfig = {
      name: DEFAULT_AGENT_NAME,
      protocol: vars.EXECUTION_PROTOCOL,
      transport: vars.TRANSPORT,
      default: true,
      ...(vars.EXECUTION_PROTOCOL === 'a2a' ? { a2aVersion: vars.A2A_VERSION } : {}),
    };
    return { agents: [agent], defaultAgent: agent.name };
  }
  return parseExecutionAgents(vars.EXECUTION_AGENTS, vars.A2A_VERSION);
}

/** Parses EXECUTION_AGENTS; `a2aVersion` defaults to A2A_VERSION for a2a agents that name none. */
export function parseExecutionAgents(json: string, defaultA2aVersion: '1.0' | '0.3' = '1.0'): AgentsConfig {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new ConfigError(`EXECUTION_AGENTS is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = ExecutionAgentsSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `EXECUTION_AGENTS${issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}: ${issue.message}`);
    throw new ConfigError(`invalid execution agent configuration: ${issues.join('; ')}`);
  }
  const agents = parsed.data.map((agent) => (agent.protocol === 'a2a' && !agent.a2aVersion ? { ...agent, a2aVersion: defaultA2aVersion } : agent));
  const chosen = agents.find((agent) => agent.default === true) ?? agents[0]!;
  return { agents, defaultAgent: chosen.name };
}

export type AgentWiring = {
  /** Builds the transport of one agent (`createTransport` from src/transport/factory.ts). */
  makeTransport: (agent: AgentConfig) => Transport;
  /** Reads agent cards for `a2aVersion: auto`. Default: global fetch. */
  fetch?: typeof fetch;
};

export type ExecutionAgents = {
  readonly default: ExecutionAgent;
  readonly names: readonly string[];
  get(name: string): ExecutionAgent | undefined;
};

export function buildExecutionAgents(config: AgentsConfig, wiring: AgentWiring): ExecutionAgents {
  const byName = new Map<string, ExecutionAgent>();
  for (const agent of config.agents) {
    byName.set(agent.name, new ExecutionAgent(agent.name, createProtocol(agent.protocol, protocolOptionsFor(agent, wiring)), wiring.makeTransport(agent)));
  }
  const chosen = byName.get(config.defaultAgent);
  if (!chosen) throw new ConfigError(`the default agent ${JSON.stringify(config.defaultAgent)} is not configured`);
  return { default: chosen, names: [...byName.keys()], get: (name) => byName.get(name) };
}

function protocolOptionsFor(agent: AgentConfig, wiring: AgentWiring): ProtocolOptions {
  if (agent.protocol !== 'a2a') return {};
  if (agent.a2aVersion === 'auto') {
    if (!agent.url) throw new ConfigError(`agent ${agent.name}: a2aVersion auto needs a url`);
    return { a2aVersion: agentCardVersionResolver(agentCardUrlFor(agent.url), wiring.fetch ? { fetch: wiring.fetch } : {}) };
  }
  return { a2aVersion: agent.a2aVersion ?? '1.0' };
}
