import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { newRequestId } from '../contract';
import { executionAgentsFromEnv } from '../protocols/agents-from-env';
import type { Outcome } from '../protocols/outcome';
import type { Command } from './command';

export const callCommand: Command = {
  name: 'call',
  summary: 'send one task through the configured execution agent, poll while pending, print the outcome',
  usage: `zone call --text "hello" [--transport https|agentcore] [--protocol execute-task|a2a|simple-a2a]
          [--url <EXECUTION_URL>] [--arn <AGENTCORE_RUNTIME_ARN>] [--agent <name>] [--poll-ms 1000] [--timeout 120]

Uses the same configuration as the verification zone (TRANSPORT, EXECUTION_PROTOCOL,
EXECUTION_URL, EXECUTION_AUTH, AGENTCORE_RUNTIME_ARN, A2A_VERSION, EXECUTION_AGENTS, …);
flags override the environment. Prints each hop with its time, then the reply.`,
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
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (values.transport) env.TRANSPORT = values.transport;
    if (values.protocol) env.EXECUTION_PROTOCOL = values.protocol;
    if (values.url) {
      env.EXECUTION_URL = values.url;
      env.TRANSPORT ??= 'https';
    }
    if (values.arn) env.AGENTCORE_RUNTIME_ARN = values.arn;
    if (!env.TRANSPORT) env.TRANSPORT = env.AGENTCORE_RUNTIME_ARN ? 'agentcore' : 'https';
    if (env.TRANSPORT === 'https' && !env.EXECUTION_URL) env.EXECUTION_URL = 'http://127.0.0.1:8080/invocations';

    const agents = executionAgentsFromEnv(env);
    const agent = values.agent ? agents.get(values.agent) : agents.default;
    if (!agent) throw new Error(`no agent named ${values.agent}; configured: ${agents.names.join(', ')}`);
    const requestId = newRequestId();
    const started = Date.now();
    const hop = (what: string) => process.stdout.write(`  +${String(Date.now() - started).padStart(6)} ms  ${what}\n`);
    process.stdout.write(`agent ${agent.name}: protocol ${agent.protocol} over ${agent.transport} · request id ${requestId}\n`);

    hop('start sent');
    let outcome: Outcome = await agent.start({ text: values.text, correlation_id: requestId }, { requestId, correlationId: requestId });
    const deadline = started + Number(values.timeout ?? 120) * 1000;
    let polls = 0;
    while (outcome.kind === 'pending') {
      hop(`pending: task ${outcome.handle.taskId}${outcome.state ? ` (${outcome.state})` : ''}`);
      if (Date.now() > deadline) {
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
    hop(`failure: ${outcome.code} (${outcome.retryable ? 'retryable' : 'permanent'})`);
    process.stdout.write(`\n${outcome.message}\n`);
    return 1;
  },
};
