import type { AgentsSettings } from './agent-config';
import type { TransportConfig } from '../transport/config';

/** One execution agent as `zone agents` shows it: where it answers, who it posts as, how it is reached. */
export type AgentDescription = {
  name: string;
  default: boolean;
  protocol: string;
  transport: string;
  where: string;
  channels: readonly string[];
  prefix?: string;
  username?: string;
  icon?: string;
};

function whereOf(transport: TransportConfig): string {
  switch (transport.kind) {
    case 'https':
      return `${transport.url}${transport.auth ? ` (auth ${transport.auth})` : ''}`;
    case 'agentcore':
      return `${transport.runtimeArn}${transport.qualifier ? ` @${transport.qualifier}` : ''}`;
    case 'in-process':
      return 'this process';
  }
}

/**
 * The agents of a configuration, as plain data: what the CLI prints from the shell's environment,
 * and what the local stack serves about the agents it really calls (`GET /api/agents`).
 */
export function describeAgents(settings: AgentsSettings): AgentDescription[] {
  return settings.agents.map((agent) => ({
    name: agent.name,
    default: agent.name === settings.defaultAgent,
    protocol: agent.protocol + (agent.a2aVersion ? ` ${agent.a2aVersion}` : ''),
    transport: agent.transport.kind,
    where: whereOf(agent.transport),
    channels: agent.channels,
    ...(agent.prefix ? { prefix: agent.prefix } : {}),
    ...(agent.persona?.username ? { username: agent.persona.username } : {}),
    ...(agent.persona?.iconEmoji ? { icon: agent.persona.iconEmoji } : {}),
  }));
}
