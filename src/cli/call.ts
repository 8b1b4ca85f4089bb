import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { systemClock } from '../clock';
import { newRequestId } from '../contract';
import { runtimeFromEnv } from '../execution/runtime-from-env';
import { agentSettingsFrom, buildExecutionAgents, type ExecutionAgents } from '../protocols/agent-config';
import { PROTOCOL_NAMES } from '../protocols/factory';
import type { ProtocolName } from '../protocols/protocol';
import type { TransportValues } from '../transport/config';
import { TRANSPORT_KINDS } from '../transport/transport';
import type { Outcome } from '../protocols/outcome';
import { transportFlag, type Command } from './command';

export const callCommand: Command = {
  name: 'call',
  summary: 'send one task through the configured execution agent, poll while pending, print the outcome',
  usage: `zone call --text "hello" [--transport ${TRANSPORT_KINDS.join('|')}] [--protocol ${PROTOCOL_NAMES.join('|')}]
          [--url <EXECUTION_URL>] [--arn <AGENTCORE_RUNTIME_ARN>] [--agent <name>] [--poll-ms 1000] [--timeout 120]

Uses the same configuration as the verification zone (TRANSPORT, EXECUTION_PROTOCOL,
EXECUTION_URL, EXECUTION_AUTH, AGENTCORE_RUNTIME_ARN, A2A_VERSION, EXECUTION_AGENTS, …);
flags override the environment. Without TRANSPORT it calls the local runtime of \`zone serve\`
(https to http://127.0.0.1:8080/invocations); TRANSPORT=in-process runs the execution runtime
in this process (its EXECUTOR, SYNC_BUDGET_MS, … from the environment). Prints each hop with
its time, then the reply.`,
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        text: { type: 'string' },
        transport: { type: 'string' },
        protocol: { type: 'string' },
        url: { type: 'string' },
        arn: { type: 'string' },
        agent: { type: 'string' },
        'poll-ms': { type: 'string' },
        timeout: { type: 'string' },
      },
    });
    if (!values.text) throw new Error('--text is required');
    const agents = agentsFor(values);
    const agent = values.agent ? agents.get(values.agent) : agents.default;
    if (!agent) throw new Error(`no agent named ${values.agent}; configured: ${agents.names.join(', ')}`);
    const requestId = newRequestId();
    const started = systemClock.now();
    const hop = (what: string) => process.stdout.write(`  +${String(systemClock.now() - started).padStart(6)} ms  ${what}\n`);
    process.stdout.write(`agent ${agent.name}: protocol ${agent.protocol} over ${agent.transport} · request id ${requestId}\n`);

    hop('start sent');
    let outcome: Outcome = await agent.start({ text: values.text, correlation_id: requestId }, { requestId, correlationId: requestId });
    const deadline = started + Number(values.timeout ?? 120) * 1000;
    let polls = 0;
    while (outcome.kind === 'pending') {
      hop(`pending: task ${outcome.handle.taskId}${outcome.state ? ` (${outcome.state})` : ''}`);
      if (systemClock.now() > deadline) {
        hop('timed out: cancelling');
        await agent.cancel(outcome.handle, { requestId });
        return 1;
      }
      await sleep(Number(values['poll-ms'] ?? 1000));
      polls += 1;
      outcome = await agent.poll(outcome.handle, { requestId, correlationId: requestId });
    }
    if (outcome.kind === 'success') {
      hop(`success after ${polls} poll(s)`);
      process.stdout.write(`\n${outcome.text}\n`);
      return 0;
    }
    hop(`failure: ${outcome.category}, code ${outcome.code} (${outcome.retryable ? 'retryable' : 'permanent'})`);
    process.stdout.write(`\n${outcome.message}\n`);
    return 1;
  },
};

/** The local runtime `zone serve` and `zone start` listen on. */
export const LOCAL_RUNTIME_URL = 'http://127.0.0.1:8080/invocations';

type CallFlags = { transport?: string; protocol?: string; url?: string; arn?: string };

/** The agents the environment describes, with the flags as typed overrides. */
function agentsFor(flags: CallFlags): ExecutionAgents {
  const kind = transportFlag(flags.transport);
  if (flags.protocol !== undefined && !(PROTOCOL_NAMES as readonly string[]).includes(flags.protocol)) throw new Error(`--protocol must be one of ${PROTOCOL_NAMES.join(', ')}, not ${JSON.stringify(flags.protocol)}`);
  const transport: TransportValues = {
    ...(kind ? { kind } : flags.url ? { kind: 'https' as const } : flags.arn ? { kind: 'agentcore' as const } : {}),
    ...(flags.url ? { https: { url: flags.url } } : {}),
    ...(flags.arn ? { agentcore: { runtimeArn: flags.arn } } : {}),
  };
  const flagged = Object.keys(transport).length > 0 || flags.protocol !== undefined;
  // Which transport is the configuration's to say (src/transport/config.ts): parsed there, read here.
  const settings = agentSettingsFrom({
    env: process.env,
    transportDefaults: { kind: 'https', https: { url: LOCAL_RUNTIME_URL } },
    ...(flagged ? { overrides: { transport, ...(flags.protocol ? { protocol: flags.protocol as ProtocolName } : {}) } } : {}),
  });
  // In-process: this command hosts the execution runtime itself, as `zone start` does.
  const inProcess = settings.agents.some((agent) => agent.transport.kind === 'in-process');
  if (!inProcess) return buildExecutionAgents(settings, {});
  const runtime = runtimeFromEnv(process.env);
  return buildExecutionAgents(settings, { inProcess: runtime.dispatch, inProcessStream: runtime.dispatchStream });
}
