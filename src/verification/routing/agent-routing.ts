import type { AgentRoutes } from '../../protocols/agent-routes';

/**
 * Which execution agent a message goes to (docs/architecture.md §4.3, "Routing"). slack-events
 * decides once, when it accepts the message, and the name travels with the task, its polls and
 * its reply; nothing after it chooses again. In order:
 * 1. a prefix: a message that starts with `legal:` goes to the agent whose prefix is `legal`,
 *    wherever it is, with the prefix removed. The prefix is matched without regard to case, after
 *    any leading whitespace, and may have spaces before its colon (`Legal :`); the whitespace
 *    after the colon goes with it. A word with a colon that no agent claims is left as it is;
 * 2. the thread's agent: a message in a thread stays with the agent the thread's last task went
 *    to (recorded with the thread's work, src/verification/stores/thread-work.ts), while that agent is
 *    still configured;
 * 3. the channel: an agent that lists the message's channel in `channels`;
 * 4. the default agent.
 */
export type RouteReason = 'prefix' | 'thread' | 'channel' | 'default';

export type RoutedMessage = {
  /** The agent's name. */
  agent: string;
  /** The message's text as the agent gets it (without the prefix that chose it). */
  text: string;
  by: RouteReason;
};

const PREFIX = /^\s*([A-Za-z0-9][A-Za-z0-9_-]*)\s*:\s*/;

/** The agent a prefix at the start of `text` names, and the text without it; undefined when none does. */
export function matchPrefix(routes: AgentRoutes, text: string): { agent: string; text: string } | undefined {
  const found = PREFIX.exec(text);
  if (!found) return undefined;
  const word = found[1]!.toLowerCase();
  const agent = routes.agents.find((candidate) => candidate.prefix === word);
  return agent ? { agent: agent.name, text: text.slice(found[0].length) } : undefined;
}

export function routeMessage(routes: AgentRoutes, message: { channel: string; text: string; threadAgent?: string }): RoutedMessage {
  const prefixed = matchPrefix(routes, message.text);
  if (prefixed) return { ...prefixed, by: 'prefix' };
  // An agent removed from the configuration no longer holds its threads.
  if (message.threadAgent !== undefined && routes.agents.some((agent) => agent.name === message.threadAgent)) {
    return { agent: message.threadAgent, text: message.text, by: 'thread' };
  }
  const owner = routes.agents.find((agent) => agent.channels.includes(message.channel));
  if (owner) return { agent: owner.name, text: message.text, by: 'channel' };
  return { agent: routes.defaultAgent, text: message.text, by: 'default' };
}
