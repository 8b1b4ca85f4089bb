import { httpsTransport, agentCoreTransport } from '../support/transports';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import type { ExecuteTaskParams } from '../../src/contract';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import type { Executor } from '../../src/execution/executors/executor';
import { readBody } from '../../src/execution/hosts/http-host';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/local/agentcore-emulator';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { AgentOutcome, AgentStreamStep, PendingHandle } from '../../src/protocols/outcome';
import { InProcessTransport } from '../../src/transport/in-process';
import type { Transport } from '../../src/transport/transport';
import { startExecutionRuntime, type RunningRuntime } from '../support/execution-runtime';
import { closeServer, listenOnLoopback } from '../support/http';

/**
 * The agent at work in the open (docs/contract.md, "Steps", "Questions", "Who is asking"), through
 * the real execution runtime on every transport: in-process, https to a loopback host (through a
 * proxy that records the headers it got), and agentcore through the SDK and the local emulator.
 */

/** The echo, counting its runs: a task resumed twice must run once more, not twice. */
class CountingEcho implements Executor {
  readonly name = 'echo';
  readonly runs: string[] = [];
  private readonly echo = new EchoExecutor();
  execute(params: ExecuteTaskParams, context: Parameters<Executor['execute']>[1]) {
    this.runs.push(context.taskId);
    return this.echo.execute(params, context);
  }
}

const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/atwork-0123456789';
const ASKER = { id: 'slack:T0TEAM:U0ASKER', enterprise_id: 'E0ORG' };

let executor: CountingEcho;
let runtime: RunningRuntime;
let proxy: Server;
let proxyUrl: string;
const proxiedHeaders: IncomingHttpHeaders[] = [];
let emulator: AgentCoreEmulator;
let client: BedrockAgentCoreClient;

beforeAll(async () => {
  executor = new CountingEcho();
  runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: '3000' }, { executor });
  // What the https transport sends, seen on the way: its headers, then the runtime's answer.
  proxy = createServer(async (req, res) => {
    proxiedHeaders.push(req.headers);
    const body = await readBody(req, 1_000_000);
    const answer = await fetch(runtime.invocationsUrl, { method: 'POST', body: new Uint8Array(body as Buffer), headers: { 'content-type': 'application/json', accept: String(req.headers.accept ?? 'application/json') } });
    // Read whole: an SSE answer arrives at once, which a streamed read takes as well.
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  proxyUrl = await listenOnLoopback(proxy);
  emulator = await startAgentCoreEmulator({ runtimes: { [ARN]: runtime.baseUrl } });
  client = new BedrockAgentCoreClient({ endpoint: emulator.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' }, maxAttempts: 1 });
});
afterAll(async () => {
  client.destroy();
  await Promise.all([runtime.close(), closeServer(proxy), emulator.close()]);
});

const transports: Record<string, () => Transport> = {
  'in-process': () => new InProcessTransport(runtime.runtime.dispatch, runtime.runtime.dispatchStream),
  https: () => httpsTransport({ url: `${proxyUrl}/invocations`, maxAttempts: 1 }),
  agentcore: () => agentCoreTransport({ client, runtimeArn: ARN }),
};

async function readAll(stream: AsyncIterable<AgentStreamStep>): Promise<AgentStreamStep[]> {
  const steps: AgentStreamStep[] = [];
  for await (const step of stream) steps.push(step);
  return steps;
}

function expectQuestion(outcome: AgentOutcome): PendingHandle {
  if (outcome.kind !== 'input-required') throw new Error(`expected a question, got ${JSON.stringify(outcome)}`);
  return outcome.handle;
}

describe.each(Object.keys(transports))('the agent at work over %s', (transportName) => {
  const agent = () => new ExecutionAgent('atwork', createProtocol('execute-task'), transports[transportName]!(), { streamHoldMs: 10_000 });
  const ids = () => ({ requestId: globalThis.crypto.randomUUID() });

  it('#steps=3: the stream shows three steps that end complete, before the answer', async () => {
    const steps = await readAll(agent().startStreaming({ text: 'plan it #steps=3', asker: ASKER }, ids()));
    const last = steps.at(-1)!;
    expect(last).toMatchObject({ kind: 'success', text: 'echo: plan it #steps=3' });
    const shown = steps.flatMap((step) => (step.kind === 'text' && step.steps ? [step.steps] : []));
    // Some step was seen in progress on the way; the answer carries all three complete.
    expect(shown.some((view) => view.steps.some((step) => step.status === 'in_progress'))).toBe(true);
    expect(shown[0]!.planTitle).toBe('Echo plan');
    expect(last.kind === 'success' && last.extra.steps).toEqual([1, 2, 3].map((n) => ({ id: `step-${n}`, title: `Step ${n}`, status: 'complete', details: `step ${n} of 3 done` })));
  });

  it('#ask: the task pauses on a question with Approve / Reject; the answer resumes the same task, once', async () => {
    const call = { ...ids(), questions: true as const };
    const asked = await agent().start({ text: 'deploy #ask=Deploy to production?', asker: ASKER }, call);
    expect(asked).toMatchObject({
      kind: 'input-required',
      question: { id: 'echo-ask', text: 'Deploy to production?', options: [{ value: 'approve', label: 'Approve' }, { value: 'reject', label: 'Reject' }] },
    });
    const handle = expectQuestion(asked);
    const runsBefore = executor.runs.filter((id) => id === handle.taskId).length;
    const answer = { question_id: 'echo-ask', value: 'approve', answered_by: ASKER };
    // A double click: two resumes at once, one run.
    const [first, second] = await Promise.all([agent().resume(handle, answer, call), agent().resume(handle, answer, call)]);
    const expected = { kind: 'success', text: 'echo: deploy #ask=Deploy to production?\nanswer: Approve (by slack:T0TEAM:U0ASKER)' };
    // Each click learns where the one task stands: answered, or still running the answer.
    for (const outcome of [first, second]) {
      if (outcome.kind === 'pending') expect(outcome.handle.taskId).toBe(handle.taskId);
      else expect(outcome).toMatchObject(expected);
    }
    expect([first, second].some((outcome) => outcome.kind === 'success')).toBe(true);
    expect(executor.runs.filter((id) => id === handle.taskId).length).toBe(runsBefore + 1);
    // The same task: polled by its id, it is the answered one.
    expect(await agent().poll(handle, call)).toMatchObject(expected);
  });

  it('a caller that takes no questions gets the failure it always got', async () => {
    expect(await agent().start({ text: 'deploy #ask=Sure?' }, ids())).toMatchObject({ kind: 'failure', code: 'agent:input-required', retryable: false });
  });

  it('an answer that is not an option is refused, and the question still waits', async () => {
    const call = { ...ids(), questions: true as const };
    const handle = expectQuestion(await agent().start({ text: 'go #ask=Go?' }, call));
    expect(await agent().resume(handle, { question_id: 'echo-ask', value: 'maybe' }, call)).toMatchObject({ kind: 'failure', category: 'rejected' });
    expect(await agent().poll(handle, call)).toMatchObject({ kind: 'input-required', question: { id: 'echo-ask' } });
    expect(await agent().resume(handle, { question_id: 'echo-ask', value: 'reject' }, call)).toMatchObject({ kind: 'success', text: 'echo: go #ask=Go?\nanswer: Reject' });
  });

  it('cancelling while the question waits cancels the task; a late answer finds it cancelled', async () => {
    const call = { ...ids(), questions: true as const };
    const handle = expectQuestion(await agent().start({ text: 'stop me #ask=Proceed?' }, call));
    expect((await agent().cancel(handle, call)).failure).toBeUndefined();
    expect(await agent().resume(handle, { question_id: 'echo-ask', value: 'approve' }, call)).toMatchObject({ kind: 'failure', category: 'cancelled' });
  });

  it('a question asked in a streamed read ends the read with it', async () => {
    const steps = await readAll(agent().startStreaming({ text: 'stream #steps=1 #ask=Fine?' }, { ...ids(), questions: true }));
    expect(steps.at(-1)).toMatchObject({ kind: 'input-required', question: { id: 'echo-ask', text: 'Fine?' } });
  });

  it('the asker reaches the agent', async () => {
    const sent = proxiedHeaders.length;
    const invoked = emulator.invocations.length;
    expect(await agent().start({ text: 'who #asker', asker: ASKER }, ids())).toMatchObject({ kind: 'success', text: 'echo: who #asker\nasker: slack:T0TEAM:U0ASKER (E0ORG)' });
    if (transportName === 'https') expect(proxiedHeaders.slice(sent).map((headers) => headers['x-zone-asker'])).toEqual(['slack:T0TEAM:U0ASKER']);
    if (transportName === 'agentcore') expect(emulator.invocations.slice(invoked).map((seen) => seen.userId)).toEqual(['slack:T0TEAM:U0ASKER']);
  });
});
