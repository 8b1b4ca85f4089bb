import { createAgentInvoker } from '../../src/verification/invoke/agent-invoker';
import { RetryableTaskError } from '../../src/verification/invoke/invoker-parts';
import { InProcessTransport } from '../../src/transport/in-process';
import { acknowledgeReceipt, REACTIONS } from '../../src/verification/post/reactions';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { delivery, endScriptedTasks, firstAndLastReceive, followUpParts, MAX_RECEIVE_COUNT, SCHEDULE, scriptedExecutor, STREAM_POLL_DELAY_S, taskMessage, THREAD, throttledExecutor, UNREADABLE } from '../support/follow-up';

/**
 * agent-invoker (docs/architecture.md §2.2): one task message → one `execute_task` through the
 * default agent. Given real parts (test/support/follow-up.ts): an execution runtime in this
 * process behind the in-process transport, in-memory polls and replies queues, the local
 * workspace as Slack, a hand-moved clock.
 */
afterEach(endScriptedTasks);

describe('createAgentInvoker', () => {
  it('replies in the user\'s thread with the answer when the agent answers at once', async () => {
    // Prepare
    const parts = followUpParts();
    const task = taskMessage('hello');

    // Act
    await createAgentInvoker(parts.options)(delivery(task), {});

    // Assess
    expect(parts.sentReplies()).toEqual([{ ...THREAD, request_id: task.request_id, kind: 'answer', text: 'echo: hello', received_at: task.received_at, agent: 'default' }]);
    expect(parts.sentPolls()).toEqual([]);
  });

  it('tells the agent who is asking, with the Enterprise Grid organisation Slack gave (docs/contract.md, "Who is asking")', async () => {
    const parts = followUpParts();
    const task = taskMessage('who #asker', { enterprise_id: 'E0ORG' });
    await createAgentInvoker(parts.options)(delivery(task), {});
    expect(parts.sentReplies()).toEqual([expect.objectContaining({ kind: 'answer', text: `echo: who #asker\nasker: slack:${THREAD.team_id}:${task.user_id} (E0ORG)` })]);
  });

  it('puts the notes about what the task went without under the answer', async () => {
    // Prepare
    const parts = followUpParts();
    const invoke = createAgentInvoker({ ...parts.options, readInputs: async () => ({ notes: ["I couldn't read report.pdf."] }) });

    // Act
    await invoke(delivery(taskMessage('hello')), {});

    // Assess
    expect(parts.sentReplies().map((reply) => reply.text)).toEqual(["echo: hello\n\nℹ️ I couldn't read report.pdf."]);
  });

  it('replies with the safe apology, not an empty message, when the agent answers nothing visible', async () => {
    // Prepare
    const parts = followUpParts({ executor: { name: 'blank', execute: async () => ({ response_text: ' \n\u200B ' }) } });

    // Act
    await createAgentInvoker(parts.options)(delivery(taskMessage('say nothing')), {});

    // Assess
    expect(parts.sentReplies().map(({ kind, text }) => ({ kind, text }))).toEqual([{ kind: 'error', text: DEFAULT_USER_MESSAGES.executionFailed }]);
  });

  it('queues the first poll with the schedule\'s first delay when the task is accepted, carrying the notes for the answer', async () => {
    // Prepare: the task takes longer than the runtime waits before it answers `accepted`.
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor });
    const invoke = createAgentInvoker({ ...parts.options, readInputs: async () => ({ notes: ['a note'] }) });
    const task = taskMessage('a long one');

    // Act
    await invoke(delivery(task), {});

    // Assess
    const [poll, ...more] = parts.sentPolls();
    expect(more).toEqual([]);
    expect(poll!.delaySeconds).toBe(SCHEDULE.firstDelaySeconds);
    expect(poll!.message).toEqual({
      ...THREAD,
      request_id: task.request_id,
      event_id: task.event_id,
      user_id: task.user_id,
      handle: { taskId: expect.stringMatching(/^task-/) },
      attempt: 0,
      accepted_at: parts.clock.now(),
      received_at: task.received_at,
      // The agent that accepted it: every poll goes there.
      agent: 'default',
      notes: ['a note'],
      // What the agent was sent, for the charge's estimate should it report no usage.
      input_chars: task.text.length,
    });
    expect(parts.sentReplies()).toEqual([]);
  });

  it('shows the text a streaming task produced at once, and has the first poll look again after the streaming delay', async () => {
    // Prepare: live answers on; the task says its first words, then keeps working.
    const executor = scriptedExecutor('first words ');
    const parts = followUpParts({ executor, live: true });

    // Act
    await createAgentInvoker(parts.options)(delivery(taskMessage('stream it')), {});

    // Assess
    expect(parts.slack.posted.map(({ threadTs, text, streaming }) => ({ threadTs, text, streaming }))).toEqual([{ threadTs: THREAD.thread_ts, text: 'first words ', streaming: true }]);
    const [poll] = parts.sentPolls();
    expect(poll!.delaySeconds).toBe(STREAM_POLL_DELAY_S);
    expect(poll!.message).toMatchObject({ streamed: 'first words '.length, since_text: 0, handle: { cursor: String('first words '.length) } });
  });

  it('holds the stream of an agent that streams: shows the text as it comes, and at the hold’s end queues the first poll at once, from where the stream stopped', async () => {
    // Prepare: live answers on, the runtime's streamed answers read in this process; the function
    // has 11.5 s left, so it holds for 1.5 s (its time less the 10 s margin).
    const executor = scriptedExecutor('first words ');
    const parts = followUpParts({ executor, live: true, streamHoldMs: 30_000, transport: (runtime) => new InProcessTransport(runtime.dispatch, runtime.dispatchStream) });
    const said = setTimeout(() => executor.say('and more words '), 400);

    // Act
    await createAgentInvoker(parts.options)(delivery(taskMessage('stream it')), { deadline: parts.clock.now() + 11_500 });
    clearTimeout(said);

    // Assess: both pieces shown, in one live message, each once; the poll goes on from the cursor at once.
    expect(parts.slack.posted.map(({ text, streaming }) => ({ text, streaming }))).toEqual([{ text: 'first words and more words ', streaming: true }]);
    const [poll, ...more] = parts.sentPolls();
    expect(more).toEqual([]);
    expect(poll!.delaySeconds).toBe(0);
    const received = 'first words and more words '.length;
    expect(poll!.message).toMatchObject({ streamed: received, since_text: 0, handle: { cursor: String(received) } });
    expect(parts.hops.filter((hop) => hop.hop === 'accepted')).toHaveLength(1);
  });

  it('replies with the safe text for a permanent failure, and does not fail the record', async () => {
    // Prepare
    const parts = followUpParts();

    // Act
    await createAgentInvoker(parts.options)(delivery(taskMessage('please #fail')), {});

    // Assess
    expect(parts.sentReplies().map(({ kind, text }) => ({ kind, text }))).toEqual([{ kind: 'error', text: DEFAULT_USER_MESSAGES.executionFailed }]);
    expect(parts.hops.map((hop) => hop.hop)).toEqual(['execute-sent', 'failed', 'reply-queued']);
    expect(parts.sentPolls()).toEqual([]);
  });

  it('throws on a transient failure, so SQS delivers the task again, and tells the user nothing yet', async () => {
    // Prepare: the model is throttled.
    const parts = followUpParts({ executor: throttledExecutor(1) });

    // Act
    const invoked = createAgentInvoker(parts.options)(delivery(taskMessage('busy model'), 1), {});

    // Assess
    await expect(invoked).rejects.toBeInstanceOf(RetryableTaskError);
    expect(parts.sentReplies()).toEqual([]);
    expect(parts.sentPolls()).toEqual([]);
  });

  it('runs the same task again when SQS delivers it again after a transient failure, and answers', async () => {
    // Prepare: the first receive met a throttled model.
    const executor = throttledExecutor(1);
    const parts = followUpParts({ executor });
    const invoke = createAgentInvoker(parts.options);
    const task = taskMessage('second time lucky');
    await expect(invoke(delivery(task, 1), {})).rejects.toBeInstanceOf(RetryableTaskError);

    // Act
    await invoke(delivery(task, 2), {});

    // Assess
    expect(executor.calls).toBe(2);
    expect(parts.sentReplies().map(({ request_id, text }) => ({ request_id, text }))).toEqual([{ request_id: task.request_id, text: 'echo: second time lucky' }]);
  });

  it('on the last receive replies with the specific reason for a transient failure, and still fails the record for the DLQ', async () => {
    // Prepare: the model stays throttled.
    const parts = followUpParts({ executor: throttledExecutor(Infinity) });

    // Act
    const invoked = createAgentInvoker(parts.options)(delivery(taskMessage('busy to the end'), MAX_RECEIVE_COUNT), {});

    // Assess: one reply, the reason — not the generic apology on top.
    await expect(invoked).rejects.toMatchObject({ name: 'RetryableTaskError', userNotified: true });
    expect(parts.sentReplies().map(({ kind, text }) => ({ kind, text }))).toEqual([{ kind: 'error', text: DEFAULT_USER_MESSAGES.modelBusy }]);
  });

  it('apologizes on the last receive of a task message it cannot read, when the message names its thread', async () => {
    // Prepare
    const parts = followUpParts();

    // Act
    const thrown = await firstAndLastReceive(createAgentInvoker(parts.options), UNREADABLE);

    // Assess: both receives fail the record; only the last one tells the user.
    expect(thrown).toEqual({ first: expect.any(Error), last: expect.any(Error) });
    expect(parts.sentReplies()).toEqual([{ ...UNREADABLE, kind: 'error', text: DEFAULT_USER_MESSAGES.internalError }]);
  });

  it('marks the user\'s message 👀 when the task starts, on the first receive only', async () => {
    // Prepare: reactions on (SLACK_REACTIONS), as wiring.ts does it.
    const parts = followUpParts({ executor: throttledExecutor(1) });
    const invoke = createAgentInvoker({ ...parts.options, onTaskStarted: (thread) => acknowledgeReceipt(parts.slack, thread) });
    const task = taskMessage('react to me');

    // Act: the first receive fails (throttled), the second answers.
    await expect(invoke(delivery(task, 1), {})).rejects.toBeInstanceOf(RetryableTaskError);
    await invoke(delivery(task, 2), {});

    // Assess
    expect(parts.slack.reactions).toEqual([{ op: 'add', name: REACTIONS.received, timestamp: THREAD.ts }]);
  });

  it('shows a sign of life in the thread before the task is sent, on the first receive only', async () => {
    // Prepare: live answers on.
    const parts = followUpParts({ executor: throttledExecutor(1), live: true });
    const invoke = createAgentInvoker(parts.options);
    const task = taskMessage('are you there');

    // Act
    await expect(invoke(delivery(task, 1), {})).rejects.toBeInstanceOf(RetryableTaskError);
    await invoke(delivery(task, 2), {});

    // Assess
    expect(parts.slack.statuses.map(({ threadTs, status }) => ({ threadTs, status }))).toEqual([{ threadTs: THREAD.thread_ts, status: DEFAULT_USER_MESSAGES.working }]);
    const hops = parts.hops.map((hop) => hop.hop);
    expect(hops.indexOf('sign-of-life')).toBe(0);
    expect(hops.filter((hop) => hop === 'sign-of-life')).toHaveLength(1);
  });
});
