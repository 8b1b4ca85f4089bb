import { z } from 'zod';
import { ConfigError, envBool, parseEnv } from '../config/env';
import { transportConfigFrom, type TransportConfig, type TransportValues } from '../transport/config';
import { createTransport, type TransportDeps } from '../transport/factory';
import { TRANSPORT_KINDS, type Transport } from '../transport/transport';
import { agentCardVersionResolver } from './a2a';
import { ExecutionAgent } from './execution-agent';
import { PROTOCOL_NAMES, createProtocol, type ProtocolOptions } from './factory';
import type { ProtocolName } from './protocol';
import { SINGLE_AGENT_NAME, routesOfEntries, routingProblems, type AgentRoutes } from './agent-routes';

export type { AgentRoutes } from './agent-routes';

/**
 * Which execution agents the verification zone talks to (docs/architecture.md §4.3): a name +
 * a protocol + a transport. Parsed once, here, into typed `AgentsSettings`; each agent's transport
 * part is parsed by src/transport/config.ts, which alone knows the transport options.
 *
 * Either one agent from plain variables
 *   EXECUTION_PROTOCOL = execute-task | a2a | simple-a2a   (default execute-task)
 *   A2A_VERSION        = 1.0 | 0.3                          (default 1.0; a2a only)
 *   TRANSPORT, EXECUTION_URL, AGENTCORE_RUNTIME_ARN, …      (src/transport/config.ts)
 * or several from
 *   EXECUTION_AGENTS   = JSON array of entries: name, protocol, a2aVersion?, default?, stream?,
 *                        channels?, prefix?, displayName?, icon? (where it answers and who it
 *                        posts as: src/verification/routing/agent-routing.ts),
 *                        transport (the kind) and that transport's options (url, auth, runtimeArn,
 *                        …, timeoutMs, maxAttempts, streamHoldS, …). Options an entry leaves out
 *                        come from the environment as for a single agent; A2A_VERSION is the
 *                        dialect of a2a entries that name none.
 * Streamed reads (docs/contract.md, "Streaming") hold for the transport's `streamHoldS`
 * (STREAM_HOLD_S, default 30; 0 = none); an entry's `"stream": false` turns them off for that agent.
 *
 * The workspace bot token goes in `bot_token` only to an agent that asks for it: an entry's
 * `"sendBotToken": true` (execute-task agents only: no other protocol has the field), or
 * EXECUTION_SEND_BOT_TOKEN for the one agent there is — refused while several are configured, so a
 * secret never reaches another party's agent because of a flag set for one's own
 * (docs/operations.md, "Several execution agents").
 */

export const A2A_VERSION_SETTINGS = ['1.0', '0.3', 'auto'] as const;
export type A2aVersionSetting = (typeof A2A_VERSION_SETTINGS)[number];

export type AgentSettings = {
  readonly name: string;
  readonly protocol: ProtocolName;
  /** a2a only (always filled in for a2a): the dialect, or `auto` to read it from the agent card. */
  readonly a2aVersion?: A2aVersionSetting;
  /** False: never read with streams, whatever the hold (`"stream": false` in an EXECUTION_AGENTS entry). */
  readonly stream: boolean;
  readonly transport: TransportConfig;
  /** Slack channel ids whose messages go to this agent (no other agent claims them). */
  readonly channels: readonly string[];
  /** A message that starts with `<prefix>:` goes to this agent, the prefix removed (stored lower-case). */
  readonly prefix?: string;
  /** Who its answers are posted as (`username`, `icon_emoji`; needs chat:write.customize). */
  readonly persona?: AgentPersona;
  /** Its tasks carry the workspace bot token in `bot_token`. */
  readonly sendBotToken: boolean;
  /** Slack user ids who may answer its questions besides the one who asked (docs/architecture.md, "Questions"). */
  readonly approvers?: readonly string[];
};

export type AgentPersona = { readonly username?: string; readonly iconEmoji?: string };

export type AgentsSettings = {
  readonly agents: readonly AgentSettings[];
  /** The name of the agent the pipeline uses. */
  readonly defaultAgent: string;
};

export type AgentSources = {
  env?: NodeJS.ProcessEnv;
  /** Fills transport options the configuration leaves out (the local stack's loopback runtime). */
  transportDefaults?: TransportValues;
  /** Typed values that win over the environment (command-line flags); one agent only. */
  overrides?: { protocol?: ProtocolName; transport?: TransportValues };
};

export const DEFAULT_AGENT_NAME = SINGLE_AGENT_NAME;

const AgentEnvSchema = z.object({
  EXECUTION_PROTOCOL: z.enum(PROTOCOL_NAMES).default('execute-task'),
  A2A_VERSION: z.enum(['1.0', '0.3']).default('1.0'),
  EXECUTION_AGENTS: z.string().optional(),
  EXECUTION_SEND_BOT_TOKEN: envBool(false),
});

/** The protocol half of an EXECUTION_AGENTS entry; every other key belongs to its transport. */
const AgentEntrySchema = z
  .object({
    name: z.string().trim().min(1, 'name must not be empty'),
    protocol: z.enum(PROTOCOL_NAMES),
    transport: z.enum(TRANSPORT_KINDS),
    a2aVersion: z.enum(A2A_VERSION_SETTINGS).optional(),
    default: z.boolean().optional(),
    stream: z.boolean().optional(),
    // Their form and uniqueness are routing's rules (agent-routes.ts), checked on the whole list below.
    channels: z.array(z.string()).optional(),
    prefix: z.string().optional(),
    displayName: z.string().trim().min(1, 'displayName must not be empty').max(80, 'displayName is at most 80 characters').optional(),
    icon: z.string().regex(/^:[a-z0-9_+'-]+:$/, 'icon is an emoji code such as :scales:').optional(),
    sendBotToken: z.boolean().optional(),
    approvers: z.array(z.string().regex(/^[UW][A-Z0-9]{2,}$/, 'approvers are Slack user ids such as U0123ABCD')).optional(),
  })
  .catchall(z.unknown())
  .superRefine((agent, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (agent.protocol !== 'a2a' && agent.a2aVersion) problem('a2aVersion', 'a2aVersion applies to protocol a2a only');
    // The card is read over HTTP from the agent's origin, with the transport's own auth.
    if (agent.a2aVersion === 'auto' && agent.transport !== 'https') problem('a2aVersion', 'a2aVersion auto reads the agent card, so it needs transport https');
    if (agent.sendBotToken && agent.protocol !== 'execute-task') problem('sendBotToken', 'the bot token travels in execute_task\'s bot_token, so it needs protocol execute-task');
  });

/** The shape of EXECUTION_AGENTS, for tooling; transport options are checked per entry by the transport. */
export const ExecutionAgentsSchema = z
  .array(AgentEntrySchema)
  .min(1, 'list at least one agent')
  .superRefine((agents, ctx) => {
    // Names, channels, prefixes and the default: the rules slack-events checks too when it routes.
    for (const problem of routingProblems(agents)) {
      ctx.addIssue({ code: 'custom', path: problem.index === undefined ? [] : [problem.index, ...(problem.field ? [problem.field] : [])], message: problem.message });
    }
  });

/** Parses the execution agents once; throws a ConfigError naming every bad value. */
export function agentSettingsFrom(sources: AgentSources = {}): AgentsSettings {
  const env = sources.env ?? {};
  const vars = parseEnv(AgentEnvSchema, env, 'execution agent');
  if (vars.EXECUTION_AGENTS === undefined) {
    const protocol = sources.overrides?.protocol ?? vars.EXECUTION_PROTOCOL;
    const agent: AgentSettings = {
      name: DEFAULT_AGENT_NAME,
      protocol,
      ...(protocol === 'a2a' ? { a2aVersion: vars.A2A_VERSION } : {}),
      stream: true,
      transport: transportConfigFrom({ env, defaults: sources.transportDefaults, overrides: sources.overrides?.transport }),
      channels: [],
      sendBotToken: vars.EXECUTION_SEND_BOT_TOKEN,
    };
    return { agents: [agent], defaultAgent: agent.name };
  }
  if (sources.overrides?.protocol || sources.overrides?.transport) {
    throw new ConfigError('EXECUTION_AGENTS lists the agents; protocol and transport overrides apply to a single agent only');
  }
  const settings = parseExecutionAgents(vars.EXECUTION_AGENTS, { env, defaultA2aVersion: vars.A2A_VERSION, transportDefaults: sources.transportDefaults });
  if (!vars.EXECUTION_SEND_BOT_TOKEN) return settings;
  // The global flag names no agent: it may stand for the one there is, never for several.
  if (settings.agents.length > 1) {
    throw new ConfigError('EXECUTION_SEND_BOT_TOKEN would send the bot token to every agent of EXECUTION_AGENTS; set "sendBotToken": true on the one agent that needs it instead');
  }
  const [only] = settings.agents;
  if (only!.protocol !== 'execute-task') throw new ConfigError(`EXECUTION_SEND_BOT_TOKEN: agent ${only!.name} speaks ${only!.protocol}, which has no bot_token field`);
  return { ...settings, agents: [{ ...only!, sendBotToken: true }] };
}

function parseExecutionAgents(json: string, options: { env: NodeJS.ProcessEnv; defaultA2aVersion: '1.0' | '0.3'; transportDefaults?: TransportValues }): AgentsSettings {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new ConfigError(`EXECUTION_AGENTS is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = ExecutionAgentsSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${labelOf(issue.path)}: ${issue.message}`);
    throw new ConfigError(`invalid execution agent configuration: ${issues.join('; ')}`);
  }
  const problems: string[] = [];
  const agents = parsed.data.map((entry, index): AgentSettings | undefined => {
    const { name, protocol, a2aVersion, default: _default, stream, transport: kind, channels, prefix, displayName, icon, sendBotToken, approvers, ...fields } = entry;
    try {
      const transport = transportConfigFrom({ env: options.env, entry: { kind, fields, label: labelOf([index]) }, defaults: options.transportDefaults });
      const persona = displayName || icon ? { ...(displayName ? { username: displayName } : {}), ...(icon ? { iconEmoji: icon } : {}) } : undefined;
      return {
        name,
        protocol,
        ...(protocol === 'a2a' ? { a2aVersion: a2aVersion ?? options.defaultA2aVersion } : {}),
        stream: stream ?? true,
        transport,
        channels: [...new Set(channels ?? [])],
        ...(prefix ? { prefix: prefix.toLowerCase() } : {}),
        ...(persona ? { persona } : {}),
        sendBotToken: sendBotToken ?? false,
        ...(approvers?.length ? { approvers: [...new Set(approvers)] } : {}),
      };
    } catch (error) {
      problems.push((error as Error).message.replace(/^invalid transport configuration: /, ''));
      return undefined;
    }
  });
  if (problems.length) throw new ConfigError(`invalid execution agent configuration: ${problems.join('; ')}`);
  const chosen = parsed.data.find((agent) => agent.default === true) ?? parsed.data[0]!;
  return { agents: agents as AgentSettings[], defaultAgent: chosen.name };
}

function labelOf(path: readonly PropertyKey[]): string {
  return `EXECUTION_AGENTS${path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}`;
}

export type ExecutionAgents = {
  readonly default: ExecutionAgent;
  readonly names: readonly string[];
  get(name: string): ExecutionAgent | undefined;
  /** Who the agent's answers are posted as, if it says. */
  persona(name: string): AgentPersona | undefined;
  /** Who may answer the agent's questions besides the asker (`approvers`). */
  approvers(name: string): readonly string[] | undefined;
  /** Where each agent answers (src/verification/routing/agent-routing.ts). */
  readonly routes: AgentRoutes;
};

/** Where each agent of the settings answers. */
export function routesOf(settings: AgentsSettings): AgentRoutes {
  return routesOfEntries(settings.agents.map((agent) => ({ ...agent, default: agent.name === settings.defaultAgent })));
}

/** Builds each agent: its protocol and its transport (the clients it needs come from `deps`). */
export function buildExecutionAgents(settings: AgentsSettings, deps: TransportDeps = {}): ExecutionAgents {
  const byName = new Map<string, ExecutionAgent>();
  for (const agent of settings.agents) {
    const transport = createTransport(agent.transport, deps);
    const streamHoldMs = agent.stream ? agent.transport.streamHoldS * 1000 : 0;
    byName.set(agent.name, new ExecutionAgent(agent.name, createProtocol(agent.protocol, protocolOptionsFor(agent, transport)), transport, { streamHoldMs, streamQuietMs: agent.transport.streamQuietS * 1000, sendsBotToken: agent.sendBotToken }));
  }
  const chosen = byName.get(settings.defaultAgent);
  if (!chosen) throw new ConfigError(`the default agent ${JSON.stringify(settings.defaultAgent)} is not configured`);
  const personas = new Map(settings.agents.flatMap((agent) => (agent.persona ? [[agent.name, agent.persona] as const] : [])));
  const approvers = new Map(settings.agents.flatMap((agent) => (agent.approvers ? [[agent.name, agent.approvers] as const] : [])));
  return { default: chosen, names: [...byName.keys()], get: (name) => byName.get(name), persona: (name) => personas.get(name), approvers: (name) => approvers.get(name), routes: routesOf(settings) };
}

/** Parses and builds in one step: what the verification functions, `zone call` and the local stack use. */
export function executionAgentsFrom(sources: AgentSources = {}, deps: TransportDeps = {}): ExecutionAgents {
  return buildExecutionAgents(agentSettingsFrom(sources), deps);
}

function protocolOptionsFor(agent: AgentSettings, transport: Transport): ProtocolOptions {
  if (agent.protocol !== 'a2a') return {};
  if (agent.a2aVersion === 'auto') {
    if (agent.transport.kind !== 'https') throw new ConfigError(`agent ${agent.name}: a2aVersion auto needs transport https`);
    return { a2aVersion: agentCardVersionResolver(transport) };
  }
  return { a2aVersion: agent.a2aVersion ?? '1.0' };
}
