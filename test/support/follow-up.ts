import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../src/contract';
import { loadExecutionConfig } from '../../src/execution/config';
import type { Executor, ExecutorContext } from '../../src/execution/executors/executor';
import { EchoExecutor } from '../../src/execution/executors/echo-executor';
import { RpcError } from '../../src/execution/rpc-error';
import { createExecutionRuntime, type ExecutionRuntime } from '../../src/execution/runtime';
import { ConsoleSlackReplies } from '../../src/local/console-slack-replies';
import { createLogger } from '../../src/observability/logger';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import type { PendingHandle } from '../../src/protocols/outcome';
import type { ExecutionProtocol } from '../../src/protocols/protocol';
import { MemoryQueue } from '../../src/queue/memory-queue';
import type { Delivery, DeliveryHandler } from '../../src/queue/queue';
import { InProcessTransport } from '../../src/transport/in-process';
import type { Transport } from '../../src/transport/transport';
import type { FollowUpOptions } from '../../src/verification/follow-up-options';
import { createLiveReply } from '../../src/verification/live/live-reply';
import { DEFAULT_POLL_SCHEDULE, type PollSchedule } from '../../src/verification/poll-schedule';
import type { PollMessage } from '../../src/verification/queues/polls-queue';
import type { ReplyMessage } from '../../src/verification/queues/replies-queue';
import type { TaskMessage } from '../../src/verification/queues/tasks-queue';
import { MemoryLiveReplies } from '../../src/verification/stores/memory-live-replies';
import type { TraceEvent } from '../../src/verification/trace';
import { DEFAULT_USER_MESSAGES } from '../../src/verification/messages/user-messages';
import { manualClock, type ManualClock } from './manual-clock';

/**
 * What agent-invoker and async-result are given, from real parts: an execution runtime in this
 * process (the echo executor unless a test gives its own) behind the in-process transport and the
 * execute-task protocol; polls and replies on in-memory queues nobody consumes, so a test reads
 * what was sent and with which delay; the local workspace as Slack (statuses, live messages,
 * reactions); and a clock moved by hand. The runtime keeps real time: only the verification
 * functions read the hand-moved clock.
 */
export type FollowUpParts = {
  options: FollowUpOptions;
  runtime: ExecutionRuntime;
  agent: ExecutionAgent;
  clock: ManualClock;
  slack: ConsoleSlackReplies;
  /** The poll messages sent, oldest first, each with the delay it was sent with. */
  sentPolls(): Array<{ message: PollMessage; delaySeconds: number }>;
  /** The reply messages sent, oldest first. */
  sentReplies(): ReplyMessage[];
  hops: TraceEvent[];
};

export const MAX_RECEIVE_COUNT = 3;
/** A schedule whose steps tell apart: 2 s, 6 s, 18 s, 30 s …; ten minutes in all. */
export const SCHEDULE: PollSchedule = { ...DEFAULT_POLL_SCHEDULE, firstDelaySeconds: 2, factor: 3, maxDelaySeconds: 30, deadlineSeconds: 600 };
export const STREAM_POLL_DELAY_S = 1;

export function followUpParts(setup: { executor?: Executor; transport?: (runtime: ExecutionRuntime) => Transport; live?: boolean; runtimeEnv?: Record<string, string>; /** The agent's hold of streamed reads (STREAM_HOLD_S), ms; the default's otherwise. */ streamHoldMs?: number; /** The agent's protocol; execute-task otherwise. */ protocol?: ExecutionProtocol } = {}): FollowUpParts {
  const clock = manualClock();
  const log = createLogger('test');
  const runtime = createExecutionRuntime({
    // A task that takes longer than 100 ms is `accepted` and polled; a streaming one is answered with its first text at once.
    config: loadExecutionConfig({ SYNC_BUDGET_MS: '100', STREAM_FIRST_TEXT_MS: '0', ...setup.runtimeEnv }),
    executor: setup.executor ?? new EchoExecutor(),
    log,
  });
  const transport = setup.transport?.(runtime) ?? new InProcessTransport(runtime.dispatch);
  const agent = new ExecutionAgent('default', setup.protocol ?? createProtocol('execute-task'), transport, setup.streamHoldMs === undefined ? {} : { streamHoldMs: setup.streamHoldMs });
  const polls = new MemoryQueue<PollMessage>({ name: 'polls', clock });
  const replies = new MemoryQueue<ReplyMessage>({ name: 'replies', clock });
  const delays: number[] = [];
  polls.subscribe((event) => {
    if (event.type === 'sent') delays.push(event.delaySeconds ?? 0);
  });
  const slack = new ConsoleSlackReplies(() => undefined, clock);
  const hops: TraceEvent[] = [];
  const live = setup.live
    ? { reply: createLiveReply({ slack, store: new MemoryLiveReplies(clock), workingText: DEFAULT_USER_MESSAGES.working, placeholderText: DEFAULT_USER_MESSAGES.workingPlaceholder, log }), pollDelaySeconds: STREAM_POLL_DELAY_S }
    : undefined;
  const options: FollowUpOptions = {
    agent,
    polls,
    replies,
    messages: DEFAULT_USER_MESSAGES,
    schedule: SCHEDULE,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    log,
    trace: (event) => hops.push(event),
    clock,
    ...(live ? { live } : {}),
  };
  return {
    options,
    runtime,
    agent,
    clock,
    slack,
    hops,
    sentPolls: () => polls.peek().map((body, index) => ({ message: JSON.parse(body) as PollMessage, delaySeconds: delays[index]! })),
    sentReplies: () => replies.peek().map((body) => JSON.parse(body) as ReplyMessage),
  };
}

export const THREAD = { team_id: 'T1', channel: 'C1', ts: '1700000000.000100', thread_ts: '1700000000.000001' } as const;

/** A task message as slack-events queues it. */
export function taskMessage(text: string, extra: Partial<TaskMessage> = {}): TaskMessage {
  return { ...THREAD, request_id: randomUUID(), event_id: `Ev${randomUUID().slice(0, 8)}`, user_id: 'U1', text, received_at: 1_700_000_000_000, ...extra };
}

/** A poll message for `handle`, as agent-invoker (attempt 0) or async-result queues it. */
export function pollMessage(handle: PendingHandle, extra: Partial<PollMessage> & { accepted_at: number }): PollMessage {
  return { ...THREAD, request_id: randomUUID(), event_id: 'Ev1', user_id: 'U1', handle, attempt: 0, received_at: 1_700_000_000_000, ...extra };
}

/** A message that names its thread but is no task or poll message: what a bug or a hand-made redrive could leave on a queue. */
export const UNREADABLE = { ...THREAD, request_id: 'not-a-uuid' } as const;

/** Delivers `body` on its first receive and on its last; resolves with what each threw (undefined if it did not). */
export async function firstAndLastReceive(handler: DeliveryHandler, body: unknown): Promise<{ first: unknown; last: unknown }> {
  const thrown = (receiveCount: number) => handler(delivery(body, receiveCount), {}).then(() => undefined, (error: unknown) => error ?? new Error('thrown'));
  return { first: await thrown(1), last: await thrown(MAX_RECEIVE_COUNT) };
}

/** The `receiveCount`-th delivery of a message (1 = the first receive). */
export function delivery(message: unknown, receiveCount = 1): Delivery {
  return { messageId: randomUUID(), body: typeof message === 'string' ? message : JSON.stringify(message), receiveCount, attributes: {} };
}

/** An executor whose model is throttled (-32010, retryable) the first `times` calls, then answers as echo does. */
export function throttledExecutor(times: number): Executor & { readonly calls: number } {
  const echo = new EchoExecutor();
  let calls = 0;
  return {
    name: 'throttled',
    get calls() {
      return calls;
    },
    async execute(params, context) {
      calls += 1;
      if (calls <= times) throw new RpcError(ErrorCode.ModelThrottled, 'The model is busy; try again shortly', { retryable: true });
      return echo.execute(params, context);
    },
  };
}

/** The scripted tasks not ended yet; `endScriptedTasks` (afterEach) ends them. */
const unfinished = new Set<() => void>();

/** Ends every scripted task a test left running. */
export function endScriptedTasks(): void {
  for (const finish of unfinished) finish();
}

/**
 * An executor that produces its answer when the test says: `firstWords` as soon as it starts, then
 * `say(text)` hands a piece over (as a model's stream does), `finish()` ends the task with
 * everything said, `fail(error)` ends it with that error. Cancelling the task ends it too, and so
 * does `endScriptedTasks` after the test.
 */
export function scriptedExecutor(firstWords?: string): Executor & { say(text: string): void; finish(): void; fail(error: Error): void; readonly started: Promise<void> } {
  let onText: ExecutorContext['onText'];
  let said = '';
  let end!: (error?: Error) => void;
  let started!: () => void;
  const ended = new Promise<Error | undefined>((resolve) => (end = resolve));
  const endNow = () => end();
  unfinished.add(endNow);
  void ended.then(() => unfinished.delete(endNow));
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const executor = {
    name: 'scripted',
    started: startedPromise,
    say(text: string) {
      said += text;
      onText?.(text);
    },
    finish: () => end(),
    fail: (error: Error) => end(error),
    async execute(_params: unknown, context: ExecutorContext) {
      onText = context.onText;
      started();
      if (firstWords) executor.say(firstWords);
      const signal = context.signal;
      const error = await new Promise<Error | undefined>((resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        void ended.then(resolve);
      });
      if (error) throw error;
      return { response_text: said };
    },
  };
  return executor;
}
