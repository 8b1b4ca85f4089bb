import { parseArgs } from 'node:util';
import { localStackBase } from '../local/local-ports';
import { AGENT_CARD_PATH } from '../contract/http-paths';
import { newRequestId } from '../contract/request-id';
import { CASES } from '../conformance/cases';
import { createProbe } from '../conformance/probe';
import { DEFAULT_SLOW_MS, levelPlanFor, runConformance } from '../conformance/runner';
import { runtimeFromEnv } from '../execution/runtime-from-env';
import { agentSettingsFrom, buildExecutionAgents, type AgentSettings, type AgentsSettings } from '../protocols/agent-config';
import { describeAgents, type AgentDescription } from '../protocols/agent-description';
import type { TransportConfig } from '../transport/config';
import { createTransport, type TransportDeps } from '../transport/factory';
import type { Command } from './command';
import { LOCAL_RUNTIME_URL } from './call';

export const agentsCommand: Command = {
  name: 'agents',
  summary: 'list the configured execution agents (routes, protocol, transport); `agents check` checks each one',
  usage: `zone agents [--verification-port 3000] [--url http://127.0.0.1:3000] [--env] [--json]
       zone agents check [--slow-ms <ms>] [--timeout-ms <ms>]

Lists each execution agent: where it answers (channels, prefix, default), who it posts as, its
protocol and its transport. While \`zone start\` runs (on VERIFICATION_PORT, default 3000), the
agents that stack really calls, as it reports them; otherwise — or with --env — the configuration
of this shell, read as the verification zone and \`zone call\` read it (EXECUTION_AGENTS, or
TRANSPORT / EXECUTION_PROTOCOL / EXECUTION_URL / … for one agent; without either, the local
runtime of \`zone serve\`). The first line says which of the two it is. A routing mistake (a
channel of two agents, two defaults, an empty or repeated prefix) is refused here as it is at
deploy time, naming its place.

check: reads each agent's card over its own transport and auth, then
  - an execute-task agent: runs the zone contract's core cases against it (zone conformance);
  - an a2a or simple-a2a agent (whose protocol the zone contract does not cover): one task round
    trip through the agent as the pipeline calls it, which must be answered or accepted.
Prints one row per agent; exit code 0 only if every agent passes.

  --slow-ms <ms>     the core's slow task (default ${DEFAULT_SLOW_MS}); longer than the agents' sync budget
  --timeout-ms <ms>  per request (default the agent's own timeout)
  --json             print the list as JSON`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: 'boolean', default: false }, env: { type: 'boolean', default: false }, 'verification-port': { type: 'string' }, url: { type: 'string' }, 'slow-ms': { type: 'string' }, 'timeout-ms': { type: 'string' } },
    });
    if (positionals.length === 0) {
      const base = localStackBase(values, process.env);
      const running = values.env ? undefined : await runningStackAgents(base);
      const described = running ?? describeAgents(environmentSettings());
      const source = running ? `the local stack at ${base} (zone start)` : `this shell's environment${values.env ? '' : ` (no local stack answers at ${base})`}`;
      process.stdout.write(values.json ? `${JSON.stringify(described, null, 2)}\n` : `${source}:\n${formatAgents(described)}\n`);
      return 0;
    }
    const settings = environmentSettings();
    if (positionals[0] !== 'check' || positionals.length > 1) {
      process.stderr.write(`zone agents: unknown argument ${JSON.stringify(positionals.join(' '))}; run \`zone agents --help\`\n`);
      return 2;
    }
    const slowMs = values['slow-ms'] === undefined ? undefined : Number(values['slow-ms']);
    if (slowMs !== undefined && (!Number.isInteger(slowMs) || slowMs < 1)) throw new Error(`--slow-ms must be a whole number of milliseconds ≥ 1, not ${JSON.stringify(values['slow-ms'])}`);
    const timeoutMs = values['timeout-ms'] === undefined ? undefined : Number(values['timeout-ms']);
    if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1)) throw new Error(`--timeout-ms must be a whole number of milliseconds ≥ 1, not ${JSON.stringify(values['timeout-ms'])}`);
    const rows = await checkAgents(settings, { ...(slowMs !== undefined ? { slowMs } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
    process.stdout.write(`${formatChecks(rows)}\n`);
    return rows.every((row) => row.pass) ? 0 : 1;
  },
};

/** The agents this shell's environment configures, as the verification zone and `zone call` read it. */
function environmentSettings(): AgentsSettings {
  return agentSettingsFrom({ env: process.env, transportDefaults: { kind: 'https', https: { url: LOCAL_RUNTIME_URL } } });
}

/**
 * The agents the local stack at `base` calls, as it reports them (`GET /api/agents`); undefined
 * when none answers there. A stack started with `TRANSPORT=agentcore` calls its local AgentCore
 * emulator, whatever this shell's variables say.
 */
async function runningStackAgents(base: string): Promise<AgentDescription[] | undefined> {
  try {
    const response = await fetch(new URL('/api/agents', base), { signal: AbortSignal.timeout(3_000) });
    if (!response.ok) return undefined;
    const answer = (await response.json()) as { agents?: AgentDescription[] };
    return Array.isArray(answer.agents) ? answer.agents : undefined;
  } catch {
    return undefined;
  }
}

/** A table in plain columns, every cell on one line. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function formatAgents(described: readonly AgentDescription[]): string {
  const rows = described.map((agent) => {
    const answers = [agent.default ? 'default' : '', agent.channels.length ? `channels ${agent.channels.join(',')}` : '', agent.prefix ? `prefix "${agent.prefix}:"` : ''].filter(Boolean).join('; ') || '(only in threads it holds)';
    const postsAs = [agent.username, agent.icon].filter(Boolean).join(' ') || '(the app)';
    return [agent.name, answers, postsAs, agent.protocol, agent.transport, agent.where];
  });
  const count = described.length === 1 ? '1 execution agent' : `${described.length} execution agents`;
  return `${count}\n${table(['agent', 'answers', 'posts as', 'protocol', 'transport', 'where'], rows)}`;
}

type CheckRow = { agent: string; protocol: string; transport: string; card: string; check: string; pass: boolean };

/** Each agent in turn: its card, then the conformance core (execute-task) or one round trip (a2a, simple-a2a). */
async function checkAgents(settings: AgentsSettings, options: { slowMs?: number; timeoutMs?: number }): Promise<CheckRow[]> {
  // An in-process agent is this process's own runtime, as `zone call` hosts it.
  const inProcess = settings.agents.some((agent) => agent.transport.kind === 'in-process');
  const deps: TransportDeps = inProcess ? (({ dispatch, dispatchStream }) => ({ inProcess: dispatch, inProcessStream: dispatchStream }))(runtimeFromEnv(process.env)) : {};
  const built = buildExecutionAgents(settings, deps);
  const rows: CheckRow[] = [];
  for (const agent of settings.agents) {
    const row = { agent: agent.name, protocol: agent.protocol, transport: agent.transport.kind };
    try {
      rows.push({ ...row, ...(agent.protocol === 'execute-task' ? await checkContract(agent, deps, options) : await checkRoundTrip(agent, built.get(agent.name)!, deps, options)) });
    } catch (error) {
      rows.push({ ...row, card: '?', check: `error: ${(error as Error).message}`, pass: false });
    }
  }
  return rows;
}

async function checkContract(agent: AgentSettings, deps: TransportDeps, options: { slowMs?: number; timeoutMs?: number }): Promise<Omit<CheckRow, 'agent' | 'protocol' | 'transport'>> {
  const transport = createTransport(withTimeout(agent.transport, options.timeoutMs), deps);
  const probe = createProbe({ kind: 'transport', transport, target: agent.name });
  try {
    const plan = await levelPlanFor(probe);
    const declared = plan.levels.filter((entry) => entry.declaredBy === 'agent card').map((entry) => entry.level);
    const card = probe.readAgentCard ? (declared.length ? `declares ${declared.join(', ')}` : 'read (core only)') : 'not readable here';
    const report = await runConformance(probe, { plan, cases: CASES.filter((entry) => entry.level === 'core'), ...(options.slowMs !== undefined ? { slowMs: options.slowMs } : {}) });
    const counts = { pass: 0, fail: 0, warn: 0, skip: 0 };
    for (const result of report.results) counts[result.status] += 1;
    const failing = report.results.filter((result) => result.status === 'fail').map((result) => result.id);
    const summary = `core: ${counts.pass} passed, ${counts.fail} failed, ${counts.warn} warned, ${counts.skip} skipped${failing.length ? ` (${failing.join(', ')})` : ''}${report.stopped ? `; stopped: ${report.stopped}` : ''}`;
    return { card, check: summary, pass: report.conforms };
  } finally {
    probe.close();
  }
}

async function checkRoundTrip(agent: AgentSettings, built: NonNullable<ReturnType<ReturnType<typeof buildExecutionAgents>['get']>>, deps: TransportDeps, options: { timeoutMs?: number }): Promise<Omit<CheckRow, 'agent' | 'protocol' | 'transport'>> {
  const transport = createTransport(withTimeout(agent.transport, options.timeoutMs), deps);
  let card = 'not readable here';
  if (transport.getDocument) {
    try {
      const answer = await transport.getDocument(AGENT_CARD_PATH, { signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
      const name = (JSON.parse(answer ?? '{}') as { name?: unknown }).name;
      card = `read${typeof name === 'string' ? ` (${name})` : ''}`;
    } catch (error) {
      return { card: `unreadable: ${(error as Error).message}`, check: 'not run', pass: false };
    }
  }
  const requestId = newRequestId();
  const outcome = await built.start({ text: 'zone agents check: please answer briefly' }, { requestId, correlationId: requestId, signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) });
  if (outcome.kind === 'pending') await built.cancel(outcome.handle, { requestId });
  const check = outcome.kind === 'failure' ? `round trip failed: ${outcome.category} (${outcome.code})` : `round trip: ${outcome.kind === 'success' ? 'answered' : 'accepted'}`;
  return { card, check, pass: outcome.kind !== 'failure' };
}

function withTimeout(transport: TransportConfig, timeoutMs: number | undefined): TransportConfig {
  return timeoutMs === undefined || transport.kind === 'in-process' ? transport : { ...transport, timeoutMs };
}

function formatChecks(rows: CheckRow[]): string {
  const passed = rows.filter((row) => row.pass).length;
  const verdict = passed === rows.length ? `all ${rows.length} agents pass` : `${rows.length - passed} of ${rows.length} agents FAIL`;
  return `${table(['agent', 'protocol', 'transport', 'card', 'check', 'result'], rows.map((row) => [row.agent, row.protocol, row.transport, row.card, row.check, row.pass ? 'PASS' : 'FAIL']))}\n${verdict}`;
}
