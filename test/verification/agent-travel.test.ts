import { loadExecutionConfig } from '../../src/execution/config';
import type { Executor } from '../../src/execution/executors/executor';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { createLogger } from '../../src/observability/logger';
import type { AgentPersona } from '../../src/protocols/agent-config';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { InProcessTransport } from '../../src/transport/in-process';
import { createAgentInvoker } from '../../src/verification/invoke/agent-invoker';
import { createAsyncResult } from '../../src/verification/poll/async-result';
import { MemoryRecords } from '../../src/verification/stores/memory-records';
import { createThreadWork } from '../../src/verification/stores/thread-work';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { delivery, endScriptedTasks, followUpParts, pollMessage, scriptedExecutor, taskMessage, THREAD, type FollowUpParts } from '../support/follow-up';
import { eventually } from '../support/http';

/**
 * The agent travels with the task (docs/architecture.md §4.3, "Routing"): agent-invoker sends a
 * task to the agent its message names, its polls carry that agent on and async-result polls it
 * there, a message naming no agent (an older version's) goes to the default, and one naming an
 * agent that is gone ends with a message to the user. Two runtimes in this process: the default
 * one (echo) and "legal", whose answers say who wrote them.
 */

afterEach(endScriptedTasks);

const LEGAL_PERSONA: AgentPersona = { username: 'Legal Eagle', iconEmoji: ':scales:' };

function withLegal(parts: FollowUpParts, executor: Executor) {
  const runtime = createExecutionRuntime({ config: loadExecutionConfig({ SYNC_BUDGET_MS: '100' }), executor, log: createLogger('test') });
  const legal = new ExecutionAgent('legal', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch));
  const byName = new Map([
    ['default', parts.agent],
    ['legal', legal],
  ]);
  parts.options.agents = { get: (name) => byName.get(name), persona: (name) => (name === 'legal' ? LEGAL_PERSONA : undefined) };
  return { legal, runtime };
}

const signedByLegal: Executor = { name: 'legal', execute: async (params) => ({ response_text: `legal says: ${params.text}` }) };

describe('the agent travels with the task', () => {
  it('sends a task to the agent it names, and its reply carries that agent with its display name and icon', async () => {
    const parts = followUpParts();
    withLegal(parts, signedByLegal);

    await createAgentInvoker(parts.options)(delivery(taskMessage('may we?', { agent: 'legal' })), {});

    expect(parts.sentReplies()).toEqual([expect.objectContaining({ kind: 'answer', text: 'legal says: may we?', agent: 'legal', persona: { username: 'Legal Eagle', icon_emoji: ':scales:' } })]);
  });

  it("every log line of the task names its agent: the one the message names, else the default's", async () => {
    const parts = followUpParts();
    withLegal(parts, signedByLegal);
    const lines: Array<{ message: string; agent: unknown }> = [];
    const record = (message: string, ...extra: Array<Record<string, unknown>>) => lines.push({ message, agent: Object.assign({}, ...extra).agent });
    parts.options.log = { debug: record, info: record, warn: record, error: record };

    await createAgentInvoker(parts.options)(delivery(taskMessage('to legal', { agent: 'legal' })), {});
    await createAgentInvoker(parts.options)(delivery(taskMessage('to whoever')), {});

    expect(lines.filter((line) => line.message === 'task answered').map((line) => line.agent)).toEqual(['legal', 'default']);
  });

  it('a task that names no agent (queued by an older version) goes to the default agent, posted as the app', async () => {
    const parts = followUpParts();
    withLegal(parts, signedByLegal);

    await createAgentInvoker(parts.options)(delivery(taskMessage('hello')), {});

    const [reply] = parts.sentReplies();
    expect(reply).toMatchObject({ kind: 'answer', text: 'echo: hello', agent: 'default' });
    expect(reply!.persona).toBeUndefined();
  });

  it('polls an accepted task at the agent that accepted it, and its answer comes from there', async () => {
    const parts = followUpParts();
    const slow = scriptedExecutor();
    withLegal(parts, slow);

    await createAgentInvoker(parts.options)(delivery(taskMessage('a long one', { agent: 'legal' })), {});
    const [poll] = parts.sentPolls();
    expect(poll!.message.agent).toBe('legal');

    slow.say('the legal answer');
    slow.finish();
    const poller = createAsyncResult(parts.options);
    // The task ends on the legal runtime asynchronously: poll until the reply comes (the default runtime knows no such task).
    await eventually(async () => {
      await poller(delivery(poll!.message), {});
      return parts.sentReplies().length > 0 || undefined;
    });
    expect(parts.sentReplies()).toEqual([expect.objectContaining({ kind: 'answer', text: 'the legal answer', agent: 'legal' })]);
  });

  it('a poll that names no agent (queued by an older version) polls the default agent', async () => {
    const parts = followUpParts({ executor: scriptedExecutor() });
    withLegal(parts, signedByLegal);
    const accepted = await parts.agent.start({ text: 'old' }, { requestId: crypto.randomUUID() });
    if (accepted.kind !== 'pending') throw new Error('expected the task to be accepted');

    await createAsyncResult(parts.options)(delivery(pollMessage(accepted.handle, { accepted_at: parts.clock.now() })), {});

    // Still working at the default agent: polled there, so the next poll is queued (the legal agent would have said "no such task").
    const [next] = parts.sentPolls();
    expect(next!.message).toMatchObject({ attempt: 1, handle: { taskId: accepted.handle.taskId } });
    expect(next!.message.agent).toBeUndefined();
    expect(parts.sentReplies()).toEqual([]);
  });

  it('a task or a poll whose agent was removed from the configuration ends with a clear message, and calls no agent', async () => {
    const parts = followUpParts();
    withLegal(parts, signedByLegal);

    await createAgentInvoker(parts.options)(delivery(taskMessage('anyone?', { agent: 'retired' })), {});
    await createAsyncResult(parts.options)(delivery(pollMessage({ taskId: 'task-1' }, { accepted_at: parts.clock.now(), agent: 'retired' })), {});

    expect(parts.sentReplies()).toEqual([
      expect.objectContaining({ kind: 'error', text: DEFAULT_USER_MESSAGES.agentRemoved, agent: 'retired' }),
      expect.objectContaining({ kind: 'error', text: DEFAULT_USER_MESSAGES.agentRemoved, agent: 'retired' }),
    ]);
    expect(parts.sentPolls()).toEqual([]);
    expect(parts.hops.filter((hop) => hop.hop === 'execute-sent')).toEqual([]);
  });

  it("a Stop cancels the thread's task through the agent it went to, and that agent is the thread's agent from then on", async () => {
    const parts = followUpParts();
    const slow = scriptedExecutor();
    const { runtime } = withLegal(parts, slow);
    const work = createThreadWork(new MemoryRecords(parts.clock), parts.clock);
    parts.options.work = work;
    const invoke = createAgentInvoker(parts.options);

    await invoke(delivery(taskMessage('a long one', { agent: 'legal' })), {});
    const [poll] = parts.sentPolls();
    expect(await work.agentOf(THREAD)).toBe('legal');

    await invoke(delivery({ ...THREAD, kind: 'stop', event_id: 'EvStop', user_id: 'U1', stopped_at: parts.clock.now() }), {});

    // Cancelled where it runs: the legal runtime says so (the default runtime never had the task).
    const cancelled = await eventually(async () => {
      const outcome = await new ExecutionAgent('look', createProtocol('execute-task'), new InProcessTransport(runtime.dispatch)).poll(poll!.message.handle, { requestId: 'look' });
      return outcome.kind === 'failure' ? outcome : undefined;
    });
    expect(cancelled.category).toBe('cancelled');
    expect(parts.sentReplies()).toEqual([expect.objectContaining({ kind: 'stopped', agent: 'legal' })]);
  });
});
