import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { A2aProtocol } from '../../src/protocols/a2a';
import type { A2aVersion } from '../../src/protocols/a2a-dialects';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { AgentOutcome as Outcome, AgentStreamStep as StreamStep, PendingHandle } from '../../src/protocols/outcome';
import type { CallContext } from '../../src/protocols/protocol';
import { HttpsTransport } from '../../src/transport/https';
import { eventually } from '../support/http';
import { startHandWrittenA2aAgent, startSdkA2aAgent, streamedAnswer, streamedLines, type A2aTestAgent } from '../support/a2a-agents';

/**
 * A2A agents read as streams (docs/contract.md, "Streaming"): a real @a2a-js/sdk agent whose card
 * says it streams answers `SendStreamingMessage` (1.0) and `message/stream` (0.3) with
 * Server-Sent Events of its task's updates; the protocol turns the artifacts' text into text
 * steps and the task's end into the outcome, over the https transport.
 */

async function read(stream: AsyncIterable<StreamStep>): Promise<StreamStep[]> {
  const out: StreamStep[] = [];
  for await (const step of stream) out.push(step);
  return out;
}

const textOf = (steps: StreamStep[]) =>
  steps
    .filter((step): step is Extract<StreamStep, { kind: 'text' }> => step.kind === 'text')
    .map((step) => step.text)
    .join('');

const hold = { holdMs: 10_000 };

describe.each<A2aVersion>(['1.0', '0.3'])('A2A %s, an @a2a-js/sdk agent that streams', (version) => {
  let agent: A2aTestAgent;
  let transport: HttpsTransport;
  /** The gates of `#gated` tasks, by question: such a task works on after its first line only once the test lets it. */
  const gates = new Map<string, Promise<void>>();
  /**
   * The hold of a read that must end pending: long enough for the stream to open on a busy machine
   * (the read fails when no task event came within it), and the #gated task does not end within it.
   */
  const shortHold = 2_000;
  const gateFor = (question: string): (() => void) => {
    let release!: () => void;
    gates.set(question, new Promise<void>((resolve) => (release = resolve)));
    return release;
  };
  beforeAll(async () => {
    agent = await startSdkA2aAgent({ legacyCompat: true, streaming: true, gate: (question) => gates.get(question) ?? Promise.resolve() });
    transport = httpsTransport({ url: agent.url, maxAttempts: 1 });
  });
  afterAll(() => agent.close());

  const call: () => CallContext = () => ({ transport, sessionKey: 'session-1' });
  const protocol = () => new A2aProtocol({ version });
  const ask = (text: string, options: { holdMs?: number; protocol?: A2aProtocol } = {}) =>
    read((options.protocol ?? protocol()).stream({ requestId: randomUUID(), params: { text, stream: true } }, call(), { holdMs: options.holdMs ?? hold.holdMs }));
  const streamMethod = version === '1.0' ? 'SendStreamingMessage' : 'message/stream';

  it(`sends ${version === '1.0' ? 'SendStreamingMessage' : 'message/stream'}; each artifact update is a text step, the completed task the whole answer`, async () => {
    const text = 'why is the sky blue? #stream #delay=20';

    const steps = await ask(text);

    expect(agent.requests.at(-1)!.body).toMatchObject({ method: streamMethod });
    // The task is named first, before its text (a caller holding a quiet task may let go and poll), then one step per update.
    expect(steps[0]).toMatchObject({ kind: 'text', text: '', handle: { taskId: expect.any(String), a2aVersion: version, contextId: expect.any(String), shown: '0' } });
    expect(steps.filter((step) => step.kind === 'text' && step.text)).toHaveLength(streamedLines(text).length);
    // One step without text names the task; the others without text carry its status messages as steps.
    expect(steps.filter((step) => step.kind === 'text' && !step.text && !step.steps)).toHaveLength(1);
    expect(textOf(steps)).toBe(streamedAnswer(text));
    expect(steps.at(-1)).toMatchObject({ kind: 'success', text: streamedAnswer(text), extra: { state: 'completed' } });
    expect(steps.find((step) => step.kind === 'text' && step.text)).toMatchObject({ kind: 'text', handle: { taskId: expect.any(String), a2aVersion: version, contextId: expect.any(String), shown: String(streamedLines(text)[0]!.length) } });
  });

  it('status messages of the working task are its steps: each in progress, complete once the next comes, all complete with the answer', async () => {
    const text = 'plan it #stream #steps=3 #delay=20';
    const steps = await ask(text);
    const views = steps.flatMap((step) => (step.kind === 'text' && step.steps ? [step.steps.steps] : []));
    expect(views[0]).toEqual([{ id: 'status-1', title: 'Step 1', status: 'in_progress' }]);
    expect(views.some((view) => view.length === 2 && view[0]!.status === 'complete' && view[1]!.status === 'in_progress')).toBe(true);
    const last = steps.at(-1)!;
    expect(last).toMatchObject({ kind: 'success', text: `a2a steps: ${text}` });
    expect(last.kind === 'success' && last.steps?.steps).toEqual([1, 2, 3].map((n) => ({ id: `status-${n}`, title: `Step ${n}`, status: 'complete' })));
  });

  it('an agent replacing its artifact with the whole text each time gives the same text steps', async () => {
    const text = 'replace #stream #replace #delay=20';
    const steps = await ask(text);

    expect(textOf(steps)).toBe(streamedAnswer(text));
    expect(steps.at(-1)).toMatchObject({ kind: 'success', text: streamedAnswer(text) });
  });

  it('a task that starts with text already (#early) streams it first', async () => {
    const text = 'early #stream #early #delay=20';
    const steps = await ask(text);

    expect(steps[0]).toMatchObject({ kind: 'text', text: streamedLines(text)[0] });
    expect(textOf(steps)).toBe(streamedAnswer(text));
  });

  it('text the agent rewrites is not streamed further; the outcome is the rewritten answer', async () => {
    const text = 'rewrite #stream #rewrite #delay=20';
    const steps = await ask(text);

    expect(textOf(steps)).toBe(streamedLines(text).slice(0, 2).join('\n'));
    expect(steps.at(-1)).toMatchObject({ kind: 'success', text: `a2a rewritten: ${text}` });
  });

  it('a hold shorter than the task ends the read pending; polls bring the rest, and only the rest', async () => {
    // The task works on only once let go: it is still working when the hold ends, however late that is.
    const text = 'long #stream #gated #delay=20';
    const letGo = gateFor(text);
    const p = protocol();

    const steps = await ask(text, { holdMs: shortHold, protocol: p });
    const last = steps.at(-1) as Extract<Outcome, { kind: 'pending' }>;
    expect(last).toMatchObject({ kind: 'pending', handle: { taskId: expect.any(String), a2aVersion: version, shown: expect.any(String) } });
    letGo();

    let shown = textOf(steps);
    let outcome: Outcome = last;
    for (let polls = 0; outcome.kind === 'pending' && polls < 400; polls++) {
      await sleep(25);
      outcome = await p.poll(outcome.handle as PendingHandle, call());
      if (outcome.kind === 'pending' && outcome.partial) shown += outcome.partial;
    }
    // The agent kept working after the read ended: its task store has the task.
    expect(outcome).toMatchObject({ kind: 'success', text: streamedAnswer(text) });
    expect(streamedAnswer(text).startsWith(shown)).toBe(true);
  });

  it(`a streamed poll resubscribes (${version === '1.0' ? 'SubscribeToTask' : 'tasks/resubscribe'}) and brings only the text beyond what was shown, then the answer`, async () => {
    const text = 'resubscribed #stream #gated #delay=20';
    const letGo = gateFor(text);
    const p = protocol();
    const first = await ask(text, { holdMs: shortHold, protocol: p });
    const cut = first.at(-1) as Extract<Outcome, { kind: 'pending' }>;
    expect(cut).toMatchObject({ kind: 'pending' });

    // The task goes on once the resubscription is with the agent: the rest of its text comes through it.
    const resubscribe = version === '1.0' ? 'SubscribeToTask' : 'tasks/resubscribe';
    const reading = read(p.streamPoll(cut.handle, call(), hold));
    await eventually(() => agent.requests.some((request) => request.body.method === resubscribe) || undefined, 10_000);
    letGo();
    const rest = await reading;

    expect(agent.requests.at(-1)!.body).toMatchObject({ method: resubscribe, params: { id: cut.handle.taskId } });
    expect(rest.at(-1)).toMatchObject({ kind: 'success', text: streamedAnswer(text) });
    // Every character once, in order, across the cut: the first read's text, then the resubscription's.
    expect(textOf(first) + textOf(rest)).toBe(streamedAnswer(text));
    expect(rest.filter((step) => step.kind === 'text' && step.text).length).toBeGreaterThan(0);
  });

  it('a streamed poll of a task already over is a plain look: the agent refuses the resubscription', async () => {
    const text = 'over already #stream #gated #delay=20';
    const letGo = gateFor(text);
    const p = protocol();
    const first = await ask(text, { holdMs: shortHold, protocol: p });
    const cut = first.at(-1) as Extract<Outcome, { kind: 'pending' }>;
    expect(cut).toMatchObject({ kind: 'pending' });
    // Let the task finish, and wait until the agent says it is over.
    letGo();
    await eventually(async () => ((await p.poll(cut.handle, call())).kind === 'success' ? true : undefined), 10_000);

    const rest = await read(p.streamPoll(cut.handle, call(), hold));

    expect(rest).toEqual([expect.objectContaining({ kind: 'success', text: streamedAnswer(text) })]);
    expect(agent.requests.at(-1)!.body).toMatchObject({ method: version === '1.0' ? 'GetTask' : 'tasks/get' });
  });

  it('a message answer, a failed task: the outcome at once', async () => {
    expect(await ask('hello')).toEqual([expect.objectContaining({ kind: 'success', text: 'a2a echo: hello' })]);
    expect(await ask('#fail')).toEqual([expect.objectContaining({ kind: 'failure', category: 'failed', code: 'a2a:failed' })]);
  });

  it('reads the agent card once per transport, with the agent’s auth', async () => {
    const p = protocol();
    const before = agent.cardRequests.length;
    await ask('one', { protocol: p });
    await ask('two', { protocol: p });

    expect(agent.cardRequests.length - before).toBe(1);
  });

  it('ExecutionAgent.startStreaming over https: the same steps, never throwing', async () => {
    const text = 'agent #stream #delay=20';
    const executionAgent = new ExecutionAgent('a2a', createProtocol('a2a', { a2aVersion: version }), transport);

    expect(executionAgent.streams).toBe(true);
    const steps = await read(executionAgent.startStreaming({ text, stream: true }, { requestId: randomUUID(), holdMs: 10_000 }));
    expect(textOf(steps)).toBe(streamedAnswer(text));
    expect(steps.at(-1)).toMatchObject({ kind: 'success' });
  });
});

describe('A2A agents that do not stream are sent the message as before', () => {
  let sdk: A2aTestAgent;
  let handWritten: A2aTestAgent;
  beforeAll(async () => {
    [sdk, handWritten] = await Promise.all([startSdkA2aAgent({ legacyCompat: true }), startHandWrittenA2aAgent()]);
  });
  afterAll(() => Promise.all([sdk.close(), handWritten.close()]));

  it.each<[string, () => A2aTestAgent, A2aVersion, string]>([
    ['an @a2a-js/sdk agent whose card says streaming: false (1.0)', () => sdk, '1.0', 'SendMessage'],
    ['an @a2a-js/sdk agent whose card says streaming: false (0.3)', () => sdk, '0.3', 'message/send'],
    ['a hand-written agent whose card names no capabilities', () => handWritten, '0.3', 'message/send'],
  ])('%s', async (_label, agent, version, method) => {
    const transport = httpsTransport({ url: agent().url, maxAttempts: 1 });
    const steps = await read(new A2aProtocol({ version }).stream({ requestId: randomUUID(), params: { text: 'hello' } }, { transport, sessionKey: 's' }, hold));

    expect(agent().requests.at(-1)!.body).toMatchObject({ method });
    expect(steps).toEqual([expect.objectContaining({ kind: 'success' })]);
  });
});
