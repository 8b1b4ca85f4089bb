import { httpsTransport } from '../support/transports';
import { ErrorCode } from '../../src/contract';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { RpcError } from '../../src/execution/rpc-error';
import { createLogger } from '../../src/observability/logger';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { Outcome, PendingHandle } from '../../src/protocols/outcome';
import { InProcessTransport } from '../../src/transport/in-process';
import { createAgentInvoker } from '../../src/verification/invoke/agent-invoker';
import { createAsyncResult } from '../../src/verification/poll/async-result';
import { liveTargetOf } from '../../src/verification/live/live-parts';
import { pollDelaySeconds } from '../../src/verification/poll-schedule';
import type { PollMessage } from '../../src/verification/queues/polls-queue';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { delivery, endScriptedTasks, firstAndLastReceive, followUpParts, pollMessage, SCHEDULE, scriptedExecutor, STREAM_POLL_DELAY_S, taskMessage, THREAD, UNREADABLE, type FollowUpParts } from '../support/follow-up';
import { closeServer, eventually, listenOnLoopback } from '../support/http';

/**
 * async-result (docs/architecture.md §2.3): one `get_task_result` per poll message. Given real
 * parts (test/support/follow-up.ts): an execution runtime in this process behind the in-process
 * transport, in-memory polls and replies queues, the local workspace as Slack, a hand-moved clock.
 */

/** A task the execution zone accepted and is still working on; its executor answers when the test says. */
async function acceptedTask(parts: FollowUpParts, text = 'a long task'): Promise<PendingHandle> {
  const outcome = await parts.agent.start({ text }, { requestId: crypto.randomUUID() });
  if (outcome.kind !== 'pending') throw new Error(`expected the task to be accepted, got ${outcome.kind}`);
  return outcome.handle;
}

/** Resolves once a poll of the task would see it ended (the executor's end reaches the runtime's record asynchronously). */
function ended(parts: FollowUpParts, handle: PendingHandle): Promise<Outcome> {
  return eventually(async () => {
    const outcome = await parts.agent.poll(handle, { requestId: 'look' });
    return outcome.kind === 'pending' ? undefined : outcome;
  });
}

afterEach(endScriptedTasks);

describe('createAsyncResult', () => {
  it('replies with the answer, the notes under it, once the task is done', async () => {
    // Prepare
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor });
    const handle = await acceptedTask(parts);
    executor.say('the answer');
    executor.finish();
    await ended(parts, handle);
    const message = pollMessage(handle, { accepted_at: parts.clock.now(), attempt: 2, notes: ['a note'] });

    // Act
    await createAsyncResult(parts.options)(delivery(message), {});

    // Assess
    expect(parts.sentReplies()).toEqual([{ ...THREAD, request_id: message.request_id, kind: 'answer', text: 'the answer\n\nℹ️ a note', received_at: message.received_at, agent: 'default' }]);
    expect(parts.sentPolls()).toEqual([]);
  });

  it('queues the next poll with the next backoff delay while the task is still running', async () => {
    // Prepare
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor });
    const message = pollMessage(await acceptedTask(parts), { accepted_at: parts.clock.now(), attempt: 1 });

    // Act
    await createAsyncResult(parts.options)(delivery(message), {});

    // Assess: the second poll made, the third after the schedule's third delay.
    expect(parts.sentPolls()).toEqual([{ message: { ...message, attempt: 2 }, delaySeconds: pollDelaySeconds(SCHEDULE, 2) }]);
    expect(pollDelaySeconds(SCHEDULE, 2)).toBe(18);
    expect(parts.sentReplies()).toEqual([]);
  });

  it('never waits past the deadline: the last poll lands on it', async () => {
    // Prepare: five seconds before the deadline.
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor });
    const message = pollMessage(await acceptedTask(parts), { accepted_at: parts.clock.now() - (SCHEDULE.deadlineSeconds - 5) * 1000, attempt: 1 });

    // Act
    await createAsyncResult(parts.options)(delivery(message), {});

    // Assess
    expect(parts.sentPolls().map((poll) => poll.delaySeconds)).toEqual([5]);
  });

  it('past the deadline cancels the task in the execution zone and replies that it took too long', async () => {
    // Prepare
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor });
    const handle = await acceptedTask(parts);
    const message = pollMessage(handle, { accepted_at: parts.clock.now() - SCHEDULE.deadlineSeconds * 1000, attempt: 9 });

    // Act
    await createAsyncResult(parts.options)(delivery(message), {});

    // Assess
    expect(parts.sentReplies().map(({ kind, text }) => ({ kind, text }))).toEqual([{ kind: 'error', text: DEFAULT_USER_MESSAGES.timedOut }]);
    expect(parts.sentPolls()).toEqual([]);
    expect(await parts.agent.poll(handle, { requestId: 'look' })).toMatchObject({ kind: 'failure', category: 'cancelled' });
  });

  it('replies with the safe text for the reason the task failed, never its code or message', async () => {
    // Prepare: the model became unavailable while the task ran.
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor });
    const handle = await acceptedTask(parts);
    executor.fail(new RpcError(ErrorCode.ModelUnavailable, 'bedrock says: model arn:aws:bedrock:… not ready'));
    await ended(parts, handle);

    // Act
    await createAsyncResult(parts.options)(delivery(pollMessage(handle, { accepted_at: parts.clock.now() })), {});

    // Assess
    expect(parts.sentReplies().map(({ kind, text }) => ({ kind, text }))).toEqual([{ kind: 'error', text: DEFAULT_USER_MESSAGES.unavailable }]);
    expect(parts.hops.map((hop) => hop.hop)).toEqual(['poll', 'failed', 'reply-queued']);
    expect(parts.sentPolls()).toEqual([]);
  });

  it('replies with the safe error when the execution zone no longer knows the task (expired, or its runtime replaced)', async () => {
    // Prepare
    const parts = followUpParts();

    // Act
    await createAsyncResult(parts.options)(delivery(pollMessage({ taskId: 'task-long-gone' }, { accepted_at: parts.clock.now(), attempt: 3 })), {});

    // Assess
    expect(parts.sentReplies().map(({ kind, text }) => ({ kind, text }))).toEqual([{ kind: 'error', text: DEFAULT_USER_MESSAGES.executionFailed }]);
    expect(parts.sentPolls()).toEqual([]);
  });

  it('polls on with the next delay when the execution zone cannot be reached for a poll', async () => {
    // Prepare: the runtime's HTTP host goes away after accepting the task.
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor });
    const handle = await acceptedTask(parts);
    const server = createExecutionHttpServer(parts.runtime);
    const url = `${await listenOnLoopback(server)}/invocations`;
    await closeServer(server);
    const unreachable = new ExecutionAgent('default', createProtocol('execute-task'), httpsTransport({ url, maxAttempts: 1, log: createLogger('test') }));
    const message = pollMessage(handle, { accepted_at: parts.clock.now(), attempt: 1 });

    // Act
    await createAsyncResult({ ...parts.options, agent: unreachable })(delivery(message), {});

    // Assess
    expect(parts.sentPolls()).toEqual([{ message: { ...message, attempt: 2 }, delaySeconds: pollDelaySeconds(SCHEDULE, 2) }]);
    expect(parts.sentReplies()).toEqual([]);
  });

  it('shows the text produced since the last poll in the live message, and looks again after the streaming delay', async () => {
    // Prepare: live answers on; agent-invoker started the task and showed its first words.
    const executor = scriptedExecutor('first ');
    const parts = followUpParts({ executor, live: true });
    await createAgentInvoker(parts.options)(delivery(taskMessage('stream it')), {});
    const [first] = parts.sentPolls();
    executor.say('second ');
    await eventually(async () => {
      const outcome = await parts.agent.poll(first!.message.handle, { requestId: 'look' });
      return outcome.kind === 'pending' && outcome.partial ? outcome : undefined;
    });

    // Act
    await createAsyncResult(parts.options)(delivery(first!.message), {});

    // Assess
    expect(parts.slack.posted.map(({ text, streaming }) => ({ text, streaming }))).toEqual([{ text: 'first second ', streaming: true }]);
    const [, next] = parts.sentPolls();
    expect(next!.delaySeconds).toBe(STREAM_POLL_DELAY_S);
    expect(next!.message).toMatchObject({ attempt: 1, streamed: 'first second '.length, since_text: 0, handle: { cursor: String('first second '.length) } });
  });

  it('looks again after the streaming delay when its poll showed text, though the hold after it had none (an agent with no streamed poll)', async () => {
    // Prepare: an agent that streams a start but not a poll (as an A2A agent): the hold after a
    // poll that brought text is a plain poll, answered at once without new text.
    const executeTask = createProtocol('execute-task');
    const noStreamedPoll = Object.assign(Object.create(executeTask) as typeof executeTask, { streamPoll: undefined });
    const executor = scriptedExecutor('first ');
    const parts = followUpParts({ executor, live: true, streamHoldMs: 30_000, protocol: noStreamedPoll, transport: (runtime) => new InProcessTransport(runtime.dispatch, runtime.dispatchStream) });
    const started = await parts.agent.start({ text: 'stream it', stream: true }, { requestId: crypto.randomUUID() });
    if (started.kind !== 'pending' || started.partial !== 'first ') throw new Error(`expected the first words, got ${JSON.stringify(started)}`);
    // The last look found no text: this poll is a plain one, which finds the next words.
    const quietLastTime = pollMessage(started.handle, { accepted_at: parts.clock.now(), attempt: 3, streamed: 6, since_text: 1 });
    await parts.options.live!.reply.show(liveTargetOf(quietLastTime), 0, 'first ');
    executor.say('second ');
    await eventually(async () => {
      const outcome = await parts.agent.poll(started.handle, { requestId: 'look' });
      return outcome.kind === 'pending' && outcome.partial ? outcome : undefined;
    });

    // Act
    await createAsyncResult(parts.options)(delivery(quietLastTime), { deadline: parts.clock.now() + 11_500 });

    // Assess: text came in this look, so the next look is soon, not the quiet backoff.
    const [next] = parts.sentPolls();
    expect(next!.message).toMatchObject({ attempt: 4, streamed: 'first second '.length, since_text: 0 });
    expect(next!.delaySeconds).toBe(STREAM_POLL_DELAY_S);
  });

  it('holds the stream from the cursor while text flows, queues the next poll only when the hold ends, and the poll after it settles the answer', async () => {
    // Prepare: live answers on, streamed answers read in this process; the task streamed its first
    // words, shown already (streamed: 6, text flowing). Each poll has 11.5 s left: a 1.5 s hold.
    const executor = scriptedExecutor('first ');
    const parts = followUpParts({ executor, live: true, streamHoldMs: 30_000, transport: (runtime) => new InProcessTransport(runtime.dispatch, runtime.dispatchStream) });
    const started = await parts.agent.start({ text: 'stream it', stream: true }, { requestId: crypto.randomUUID() });
    if (started.kind !== 'pending' || started.partial !== 'first ') throw new Error(`expected the first words, got ${JSON.stringify(started)}`);
    const flowing = pollMessage(started.handle, { accepted_at: parts.clock.now(), attempt: 0, streamed: 6, since_text: 0 });
    await parts.options.live!.reply.show(liveTargetOf(flowing), 0, 'first ');
    const poll = createAsyncResult(parts.options);
    const said = setTimeout(() => executor.say('second '), 300);

    // Act: the first poll holds; the task ends while the next one holds.
    await poll(delivery(flowing), { deadline: parts.clock.now() + 11_500 });
    clearTimeout(said);
    const [next, ...more] = parts.sentPolls();
    const finish = setTimeout(() => executor.finish(), 300);
    await poll(delivery(next!.message), { deadline: parts.clock.now() + 11_500 });
    clearTimeout(finish);

    // Assess: one poll message between the holds, at once, from where the first stopped; the text after the first words shown once; the answer settled.
    expect(more).toEqual([]);
    expect(next!.delaySeconds).toBe(0);
    expect(next!.message).toMatchObject({ attempt: 1, streamed: 'first second '.length, since_text: 0, handle: { cursor: String('first second '.length) } });
    expect(parts.sentPolls()).toHaveLength(1);
    expect(parts.slack.posted.map(({ text, streaming }) => ({ text, streaming }))).toEqual([{ text: 'first second ', streaming: true }]);
    expect(parts.sentReplies().map(({ kind, text }) => ({ kind, text }))).toEqual([{ kind: 'answer', text: 'first second ' }]);
    expect(parts.hops.filter((hop) => hop.hop === 'poll').map((hop) => [hop.detail?.outcome, typeof hop.detail?.held_ms])).toEqual([
      ['pending', 'number'],
      ['success', 'number'],
    ]);
  });

  it('backs off from the first delay again once a streaming task stops producing text', async () => {
    // Prepare: a task that streamed 13 characters, then fell quiet.
    const executor = scriptedExecutor();
    const parts = followUpParts({ executor, live: true });
    const handle = await acceptedTask(parts);
    const quiet: PollMessage = pollMessage(handle, { accepted_at: parts.clock.now(), attempt: 4, streamed: 13, since_text: 0 });

    // Act: two polls find no new text.
    const poll = createAsyncResult(parts.options);
    await poll(delivery(quiet), {});
    await poll(delivery(parts.sentPolls()[0]!.message), {});

    // Assess: the backoff counts the quiet polls, not the polls made.
    expect(parts.sentPolls().map(({ message, delaySeconds }) => ({ attempt: message.attempt, since_text: message.since_text, delaySeconds }))).toEqual([
      { attempt: 5, since_text: 1, delaySeconds: pollDelaySeconds(SCHEDULE, 0) },
      { attempt: 6, since_text: 2, delaySeconds: pollDelaySeconds(SCHEDULE, 1) },
    ]);
  });

  it('apologizes on the last receive of a poll message it cannot read, when the message names its thread', async () => {
    // Prepare
    const parts = followUpParts();

    // Act
    const thrown = await firstAndLastReceive(createAsyncResult(parts.options), UNREADABLE);

    // Assess: both receives fail the record; only the last one tells the user.
    expect(thrown).toEqual({ first: expect.any(Error), last: expect.any(Error) });
    expect(parts.sentReplies()).toEqual([{ ...UNREADABLE, kind: 'error', text: DEFAULT_USER_MESSAGES.internalError }]);
  });
});
