/**
 * The routing half of EXECUTION_AGENTS (docs/architecture.md §4.3, "Routing"): which agent answers
 * in which channels (`channels`), which one a message names with `<prefix>:` (`prefix`), and which
 * one answers everything else (`default`). Kept apart from agent-config.ts, and free of zod, so
 * slack-events — which routes, and must start fast — reads it without loading the protocols and
 * transports. agent-config.ts checks every entry with the same rules, so a configuration either
 * function refuses is refused by all.
 */

/** Where each agent answers. `prefix` is stored lower-case. */
export type AgentRoutes = {
  readonly defaultAgent: string;
  readonly agents: ReadonlyArray<{ readonly name: string; readonly channels: readonly string[]; readonly prefix?: string }>;
};

/** The fields of one EXECUTION_AGENTS entry routing reads (the rest are the protocol's and the transport's). */
export type RoutingEntry = { name?: unknown; default?: unknown; channels?: unknown; prefix?: unknown };

/** A problem with an entry (`index`, `field`) or with the list as a whole. */
export type RoutingProblem = { index?: number; field?: string; message: string };

const CHANNEL_ID = /^[CDG][A-Z0-9]+$/;
// A word, so that a sentence that merely holds a colon ("Note: …") is never taken for a prefix.
const PREFIX_WORD = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** The agent of a configuration without EXECUTION_AGENTS (plain variables): one, answering everything. */
export const SINGLE_AGENT_NAME = 'default';

/**
 * Every routing problem of the entries: a channel that is not a channel id or is claimed by two
 * agents, a prefix that is empty or not one word or used twice (case does not count), a name used
 * twice, and not exactly one `"default": true` (a list of one needs none).
 */
export function routingProblems(entries: readonly RoutingEntry[]): RoutingProblem[] {
  const problems: RoutingProblem[] = [];
  const nameOf = (entry: RoutingEntry) => JSON.stringify(entry.name);
  const channelOwner = new Map<string, RoutingEntry>();
  const prefixOwner = new Map<string, RoutingEntry>();
  const names = new Set<unknown>();
  entries.forEach((entry, index) => {
    if (names.has(entry.name)) problems.push({ index, field: 'name', message: `agent name ${nameOf(entry)} is used twice` });
    names.add(entry.name);
    if (entry.channels !== undefined) {
      if (!Array.isArray(entry.channels)) problems.push({ index, field: 'channels', message: 'channels is a list of Slack channel ids' });
      else {
        for (const channel of new Set(entry.channels as unknown[])) {
          if (typeof channel !== 'string' || !CHANNEL_ID.test(channel)) {
            problems.push({ index, field: 'channels', message: `${JSON.stringify(channel)} is not a Slack channel id (C…, G… or D…)` });
            continue;
          }
          const owner = channelOwner.get(channel);
          if (owner) problems.push({ index, field: 'channels', message: `channel ${channel} is claimed by agents ${nameOf(owner)} and ${nameOf(entry)}` });
          else channelOwner.set(channel, entry);
        }
      }
    }
    if (entry.prefix !== undefined) {
      if (typeof entry.prefix !== 'string' || !PREFIX_WORD.test(entry.prefix)) {
        problems.push({ index, field: 'prefix', message: `prefix must be one word of letters, digits, - or _, without the colon (got ${JSON.stringify(entry.prefix)})` });
        return;
      }
      const prefix = entry.prefix.toLowerCase();
      const owner = prefixOwner.get(prefix);
      if (owner) problems.push({ index, field: 'prefix', message: `prefix "${prefix}:" is used by agents ${nameOf(owner)} and ${nameOf(entry)}` });
      else prefixOwner.set(prefix, entry);
    }
  });
  const defaults = entries.filter((entry) => entry.default === true);
  // A list of one needs no flag; otherwise routing must never have to guess.
  const lone = entries.length === 1 && entries[0]?.default !== false;
  if (defaults.length !== 1 && !lone) {
    const which = defaults.length ? `found ${defaults.length}: ${defaults.map(nameOf).join(', ')}` : 'found none';
    problems.push({ message: `exactly one agent must have "default": true (${which})` });
  }
  return problems;
}

/** The routes of entries that passed `routingProblems`. */
export function routesOfEntries(entries: ReadonlyArray<{ name: string; default?: boolean; channels?: readonly string[]; prefix?: string }>): AgentRoutes {
  const chosen = entries.find((entry) => entry.default === true) ?? entries[0]!;
  return {
    defaultAgent: chosen.name,
    agents: entries.map((entry) => ({ name: entry.name, channels: [...new Set(entry.channels ?? [])], ...(entry.prefix ? { prefix: entry.prefix.toLowerCase() } : {}) })),
  };
}

/** Where a problem is, as the configuration names it: `EXECUTION_AGENTS[1].channels`. */
export function placeOf(problem: RoutingProblem): string {
  return `EXECUTION_AGENTS${problem.index !== undefined ? `[${problem.index}]` : ''}${problem.field ? `.${problem.field}` : ''}`;
}

/**
 * The routes from the environment, reading only what routing needs (slack-events): without
 * EXECUTION_AGENTS, the one agent of the plain variables. Throws naming every problem and its place;
 * the functions that call the agents check the rest of each entry.
 */
export function agentRoutesFromEnv(env: NodeJS.ProcessEnv): AgentRoutes {
  const json = env.EXECUTION_AGENTS;
  if (json === undefined) return { defaultAgent: SINGLE_AGENT_NAME, agents: [{ name: SINGLE_AGENT_NAME, channels: [] }] };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new Error(`EXECUTION_AGENTS is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(value) || value.length === 0) throw new Error('invalid execution agent configuration: EXECUTION_AGENTS: list at least one agent');
  const problems = (value as unknown[]).flatMap((entry, index): RoutingProblem[] =>
    typeof entry === 'object' && entry !== null && typeof (entry as RoutingEntry).name === 'string' && ((entry as RoutingEntry).name as string).trim() ? [] : [{ index, field: 'name', message: 'each agent needs a name' }],
  );
  // Names are trimmed, as agent-config.ts trims them: both must name an agent alike.
  const entries = problems.length ? [] : (value as RoutingEntry[]).map((entry) => ({ ...entry, name: (entry.name as string).trim() }));
  problems.push(...(problems.length ? [] : routingProblems(entries)));
  if (problems.length) throw new Error(`invalid execution agent configuration: ${problems.map((problem) => `${placeOf(problem)}: ${problem.message}`).join('; ')}`);
  return routesOfEntries(entries as Array<{ name: string; default?: boolean; channels?: string[]; prefix?: string }>);
}
