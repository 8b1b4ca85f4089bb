import type { AgentPersona } from '../../protocols/agent-config';
import type { ExecutionAgent } from '../../protocols/execution-agent';

/**
 * Which execution agent a message goes to, and who it posts as (docs/architecture.md §4.3,
 * "Routing"): the lookups agent-invoker, async-result, a Stop and a session stop share. Its own
 * file, on plain types, so the functions that use it import nothing of each other.
 */

/** Every configured execution agent by name (ExecutionAgents), and who each posts as. */
export type AgentDirectory = {
  /** Every agent's name (ExecutionAgents has them; a test's directory may not). */
  readonly names?: readonly string[];
  get(name: string): ExecutionAgent | undefined;
  persona(name: string): AgentPersona | undefined;
  /** Who may answer the agent's questions besides the asker (EXECUTION_AGENTS `approvers`). */
  approvers?(name: string): readonly string[] | undefined;
};

/** The default agent and, with several, all of them: what a lookup needs of a function's options. */
export type AgentChoice = { agent: ExecutionAgent; agents?: AgentDirectory };

/**
 * The agent a task or poll message names; the default agent when it names none (a message of a
 * version before routing). Undefined when the named agent is no longer configured.
 */
export function agentNamed(options: AgentChoice, name: string | undefined): ExecutionAgent | undefined {
  if (name === undefined || name === options.agent.name) return options.agent;
  return options.agents?.get(name);
}

/** The live message of a task goes out under its agent's name and icon, as its answer does. */
export function personaFor(options: Pick<AgentChoice, 'agents'>, agent: ExecutionAgent): { persona?: { username?: string; iconEmoji?: string } } {
  const persona = options.agents?.persona(agent.name);
  return persona && (persona.username || persona.iconEmoji) ? { persona: { ...persona } } : {};
}

/** Whether any configured agent gets the bot token (`"sendBotToken": true`): then the function needs it. */
export function anyAgentSendsBotToken(options: AgentChoice): boolean {
  return options.agent.sendsBotToken || (options.agents?.names ?? []).some((name) => options.agents?.get(name)?.sendsBotToken === true);
}

/** True when one agent is configured: the global EXECUTION_SEND_BOT_TOKEN may stand for it (never for several). */
export function onlyOneAgent(options: AgentChoice): boolean {
  return (options.agents?.names?.length ?? 1) <= 1;
}
