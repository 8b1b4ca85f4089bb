import { httpsTransport } from '../support/transports';
import { randomUUID } from 'node:crypto';
import type { Log, LogExtra } from '../../src/observability/logger';
import { A2aProtocol } from '../../src/protocols/a2a';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { FAILURE_CATEGORIES, type FailureCategory } from '../../src/protocols/outcome';
import type { Queue } from '../../src/queue/queue';
import { RetryableTaskError } from '../../src/verification/invoke/invoker-parts';
import { createAgentInvoker } from '../../src/verification/invoke/agent-invoker';
import { createAsyncResult } from '../../src/verification/poll/async-result';
import { FAILURE_MESSAGES, userMessageForFailure } from '../../src/verification/messages/failure-messages';
import type { PollMessage } from '../../src/verification/queues/polls-queue';
import type { ReplyMessage } from '../../src/verification/queues/replies-queue';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { DEFAULT_USER_MESSAGES, userMessages, type UserMessageKey } from '../../src/verification/messages/user-messages';
import { startSdkA2aAgent, type A2aTestAgent } from '../support/a2a-agents';

describe('userMessageForFailure', () => {
  it('has a message for every failure category, and only for those', () => {
    expect(Object.keys(FAILURE_MESSAGES).sort()).toEqual([...FAILURE_CATEGORIES].sort());
  });

  it.each<[FailureCategory, UserMessageKey, string]>([
    ['busy', 'modelBusy', "I'm getting a lot of requests right now. Please try again in a few minutes."],
    ['unavailable', 'unavailable', "Sorry, I can't reach my assistant service right now. Please try again in a few minutes."],
    ['timed-out', 'timedOut', 'Sorry, that took too long and I stopped working on it. Please try a smaller request.'],
    ['cancelled', 'cancelled', 'That request was cancelled before it finished.'],
    ['rejected', 'requestRejected', "Sorry, I can't take that request as it is. Could you rephrase it, or make it shorter?"],
    ['failed', 'executionFailed', "Sorry, I couldn't complete that request. Please try again, or rephrase it."],
  ])('a %s failure → %s: %j', (category, key, text) => {
    expect(userMessageForFailure(category)).toBe(key);
    expect(DEFAULT_USER_MESSAGES[key]).toBe(text);
  });

  it('gives every category its own text', () => {
    const texts = FAILURE_CATEGORIES.map((category) => DEFAULT_USER_MESSAGES[userMessageForFailure(category)]);
    expect(new Set(texts).size).toBe(FAILURE_CATEGORIES.length);
  });

  it('lets operators reword the message of a category (USER_MESSAGES_JSON)', () => {
    expect(userMessages('{"requestRejected":"I cannot do that one."}')[userMessageForFailure('rejected')]).toBe('I cannot do that one.');
  });
});

/** A queue that keeps what is sent to it. */
function recordingQueue<T>(name: string): Queue<T> & { sent: T[] } {
  const sent: T[] = [];
  return {
    name,
    sent,
    send: async (message) => void sent.push(message),
    sendBatch: async (messages) => void sent.push(...messages.map((entry) => entry.message)),
  };
}

function recordingLog(): Log & { warnings: LogExtra[] } {
  const warnings: LogExtra[] = [];
  const ignore = () => undefined;
  return { warnings, debug: ignore, info: ignore, error: ignore, warn: (_message, ...extra) => void warnings.push(Object.assign({}, ...extra)) };
}

describe('an A2A agent’s failures, through the real pipeline functions to the user', () => {
  const MAX_RECEIVES = 3;
  let sdk: A2aTestAgent;
  let agent: ExecutionAgent;

  beforeAll(async () => {
    sdk = await startSdkA2aAgent();
    agent = new ExecutionAgent('a2a', new A2aProtocol({ version: '1.0' }), httpsTransport({ url: sdk.url, maxAttempts: 1 }));
  });
  afterAll(() => sdk.close());

  const setup = () => {
    const replies = recordingQueue<ReplyMessage>('replies');
    const polls = recordingQueue<PollMessage>('polls');
    const log = recordingLog();
    const options = { agent, replies, polls, log, messages: userMessages(), maxReceiveCount: MAX_RECEIVES, schedule: { firstDelaySeconds: 1, factor: 2, maxDelaySeconds: 4, deadlineSeconds: 60 } };
    return { replies, polls, log, invoker: createAgentInvoker(options), poller: createAsyncResult(options) };
  };
  const taskMessage = (text: string): TaskMessage => ({ team_id: 'T1', channel: 'C1', ts: '1700000000.000100', request_id: randomUUID(), event_id: 'Ev1', user_id: 'U1', text, received_at: Date.now() });
  const delivery = (body: unknown, receiveCount = 1) => ({ messageId: randomUUID(), body: JSON.stringify(body), receiveCount, attributes: {} });

  it('the agent’s own rate limit (a JSON-RPC error with an ErrorInfo reason) is answered at once with the busy message', async () => {
    const { invoker, replies, log } = setup();

    await invoker(delivery(taskMessage('#rate-limited')), {});

    expect(replies.sent.map((reply) => [reply.kind, reply.text])).toEqual([['error', DEFAULT_USER_MESSAGES.modelBusy]]);
    // The raw code and the agent's words stay in the log, next to the category.
    expect(log.warnings).toContainEqual(expect.objectContaining({ category: 'busy', code: 'a2a:-32603', error_message: expect.stringContaining('too many requests') }));
  });

  it('an HTTP 429 in front of the agent is retried by the queue, and the last receive tells the user it is busy', async () => {
    const { invoker, replies } = setup();
    const task = taskMessage('#throttle');

    await expect(invoker(delivery(task, 1), {})).rejects.toBeInstanceOf(RetryableTaskError);
    expect(replies.sent).toEqual([]);
    await expect(invoker(delivery(task, MAX_RECEIVES), {})).rejects.toMatchObject({ userNotified: true });

    expect(replies.sent.map((reply) => reply.text)).toEqual([DEFAULT_USER_MESSAGES.modelBusy]);
  });

  it('a task the agent rejects earns the rejected message, not a generic one', async () => {
    const { invoker, replies } = setup();

    await invoker(delivery(taskMessage('#reject')), {});

    expect(replies.sent.map((reply) => reply.text)).toEqual([DEFAULT_USER_MESSAGES.requestRejected]);
  });

  it('a polled task that ends canceled earns the cancelled message (async-result reads the category too)', async () => {
    const { invoker, poller, polls, replies } = setup();
    await invoker(delivery(taskMessage('#slow')), {});
    const poll = polls.sent[0]!;
    await agent.cancel(poll.handle, { requestId: poll.request_id });

    await poller(delivery(poll), {});

    expect(replies.sent.map((reply) => reply.text)).toEqual([DEFAULT_USER_MESSAGES.cancelled]);
  });
});
