import { httpsTransport } from '../support/transports';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { handoffMessageBody, runHandoffMessage } from '../../src/execution/handoff-message';
import { createExecutionRuntime } from '../../src/execution/runtime';
import { createLocalPipeline, type LocalPipeline } from '../../src/local/local-pipeline';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { redactingReplacer, type Log, type LogExtra } from '../../src/observability/logger';
import { ExecutionAgent } from '../../src/protocols/execution-agent';
import { createProtocol } from '../../src/protocols/factory';
import { MemoryQueue } from '../../src/queue/memory-queue';
import type { DeliveryHandler, EnqueueOptions } from '../../src/queue/queue';
import { SqsQueue, sqsClient } from '../../src/queue/sqs-queue';
import { createSlackWebClient, WebApiSlackReplies, type SlackReplies } from '../../src/slack/slack-replies';
import { SLACK_CHUNK_LIMIT, splitForSlack } from '../../src/slack/split-message';
import { REPLY_CHUNK_LEASE_SECONDS, visibilityTimeoutSeconds } from '../../src/verification/pipeline-settings';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
import type { TraceEvent } from '../../src/verification/trace';
import { DEFAULT_USER_MESSAGES, type UserMessageKey } from '../../src/verification/messages/user-messages';
import { startFakeSlackApi, type FakeSlackApi, type FakeSlackFailure } from '../support/fake-slack-api';
import { startFakeSqs, type FakeSqsMessage } from '../support/fake-sqs';
import { closeServer, listenOnLoopback } from '../support/http';

/**
 * `npm run soak` (issue 11): a few hundred signed Slack events through the local pipeline
 * (`createLocalPipeline`: the four verification functions wired by src/verification/wiring.ts over
 * in-memory queues with delays, visibility timeouts, redelivery and DLQs), the execution zone as
 * the `https` transport's function URL deploys it — a front (the runtime's HTTP host on loopback)
 * that hands a task outliving its sync budget to the worker queue, and a worker that runs it from
 * the queue (runHandoffMessage, sharing the front's task store) — and replies posted by the real
 * @slack/web-api client to the fake Slack Web API. Every send to a queue (tasks, polls, replies,
 * the worker's hand-offs) goes through the project's SQS client (SqsQueue) to the fake SQS on
 * loopback, which hands what it took to the in-memory queue. With a seeded mix of faults:
 *
 *   Slack retries      the same event (same event_id) delivered again with x-slack-retry-num, at
 *                      once (racing the first delivery) or later; a non-2xx ack is retried as Slack
 *                      does (at most 3 retries, at ~0 s, 1 min and 5 min of scaled time)
 *   Slack API faults   429 + Retry-After; a 5xx before the post took effect, once or on several
 *                      receives in a row, or after it landed (a proxy's 500 after forwarding it,
 *                      Slack's internal_error after writing it) — either way the outcome is unknown:
 *                      never posted again blindly, the chunk's lease decides and the redelivery
 *                      looks for it by its metadata; slow answers
 *   execution zone     its HTTP server stopped for a few seconds, then started again on the same port
 *   tasks              slow (`#sleep=<ms>`: accepted, then polled), failing (`#fail`), crashing
 *                      (`#crash`), long (a two-chunk answer)
 *   SQS redelivery     a copy of a task, poll or reply message (same request id) sent again
 *   SQS answer lost    SQS takes a SendMessage / SendMessageBatch (task, poll, reply or hand-off)
 *                      and then resets the connection or answers 500/503: the client sends it
 *                      again, so the queue holds two copies
 *   hand-off twice     the worker queue delivers a hand-off message twice (racing, or later)
 *   killed consumers   a delivery that fails without being acknowledged, so the visibility timeout
 *                      brings it back: before the handler ran, after it ran (work done, no ack), or
 *                      mid-call (its abort signal fires, as before a Lambda timeout)
 *
 * Every event has its own thread. Once the Slack sender is done, the queues are idle and the
 * DLQs have been read, each thread is judged: exactly one reply (the answer, all its chunks once,
 * or one safe error message) is ok; more than one is duplicated; none (or part of an answer) is
 * lost. A thread that still shows the assistant working — its agent session `processing` (Slack's
 * Stop button), a stream not stopped, the thread's status, a "Working on it…" message — is
 * counted as left working. Exit code 0 only with 0 lost, 0 duplicated and 0 left working.
 *
 *   npm run soak -- [--events 300] [--seed 42] [--quick] [--time-scale 0.1]
 *                   [--with poster-timeout,slack-timeout] [--log <file>] [--all-events]
 *
 * --quick: 50 events, without the Slack 5xx on several receives in a row (each receive waits out
 * a visibility timeout: the longest wait of the mix). --with adds faults that hit a
 * window the design accepts or a known limit: slack-poster killed mid-call, and a Slack answer
 * later than the client's timeout. --log writes every log line (JSON) to a file; without it
 * they go to a file in the temp folder when the run fails.
 */

export type QueueName = 'tasks' | 'polls' | 'replies';
/** The pipeline's queues and the execution zone's worker queue (hand-offs). */
export type SentQueue = QueueName | 'worker';
export type TaskKind = 'quick' | 'slow' | 'long' | 'fail' | 'crash';
export type KillMode = 'before' | 'after' | 'timeout';

export type PostFault = { label: string; failure: FakeSlackFailure };

export type PlannedEvent = {
  index: number;
  eventId: string;
  /** The user's message; its thread is where the reply must land (one thread per event). */
  ts: string;
  user: string;
  text: string;
  kind: TaskKind;
  /** Offset from the start of the send phase. */
  atMs: number;
  slackRetries?: { count: number; concurrent: boolean };
  postFault?: PostFault;
  redeliver?: { queue: QueueName; afterMs: number };
  kill?: { queue: QueueName; mode: KillMode; abortAfterMs: number };
  /** SQS takes the event's first send to this queue, and its answer is lost: a reset connection, or a 5xx. */
  sqsAnswerLost?: { queue: SentQueue; answer: 'reset' | 500 | 503 };
  /** The worker queue delivers the event's hand-off twice: a copy sent this long after the first (0: racing it). */
  handoffTwice?: { afterMs: number };
};

export type Outage = { atMs: number; durationMs: number };

export type SoakPlan = { seed: number; events: PlannedEvent[]; outages: Outage[]; sendWindowMs: number };

/** Probabilities (per event, independent) and weights of the mix. */
export type FaultMix = {
  kinds: Record<TaskKind, number>;
  slackRetry: number;
  post429: number;
  /** A 5xx (or internal_error) before the post took effect: its outcome unknown, the redelivery looks for it, then posts. */
  post5xx: number;
  /** A 5xx (or internal_error) after the post landed: the redelivery finds it by its metadata, never posts it again. */
  post5xxLanded: number;
  /** A 5xx on the post of several receives in a row (4–5: up to the last receive, which sends the fallback). */
  post5xxOutlast: number;
  postStall: number;
  /** A stall past the client's 10 s timeout (opt-in: `--with slack-timeout`). */
  postTimeout: number;
  redeliver: number;
  kill: number;
  /** SQS applies a send and its answer is lost (the client resends: two copies queued). */
  sqsAnswerLost: number;
  /** Of the tasks handed off to the worker (slow ones): the worker queue delivers the hand-off twice. */
  handoffTwice: number;
  /** Kills of slack-poster mid-call too (opt-in: `--with poster-timeout`). */
  posterTimeout: boolean;
  /** Execution-zone outages per minute of the send phase (at least one when > 0). */
  outagesPerMinute: number;
};

export const DEFAULT_MIX: FaultMix = {
  kinds: { quick: 0.5, slow: 0.25, long: 0.07, fail: 0.12, crash: 0.06 },
  slackRetry: 0.15,
  post429: 0.07,
  post5xx: 0.04,
  post5xxLanded: 0.05,
  post5xxOutlast: 0.03,
  postStall: 0.05,
  postTimeout: 0,
  redeliver: 0.1,
  kill: 0.1,
  sqsAnswerLost: 0.08,
  handoffTwice: 0.3,
  posterTimeout: false,
  outagesPerMinute: 4,
};

/** No injected fault at all: quick tasks only (used to check the counting itself). */
export const NO_FAULTS: FaultMix = {
  kinds: { quick: 1, slow: 0, long: 0, fail: 0, crash: 0 },
  // Every probability at 0.
  slackRetry: 0, post429: 0, post5xx: 0, post5xxLanded: 0, post5xxOutlast: 0, postStall: 0, postTimeout: 0, redeliver: 0, kill: 0, sqsAnswerLost: 0, handoffTwice: 0,
  posterTimeout: false,
  outagesPerMinute: 0,
};

/** The stall of `--with slack-timeout`: past @slack/web-api's per-attempt timeout (10 s here). */
const PAST_CLIENT_TIMEOUT_MS = 11_000;

// ---------------------------------------------------------------------------------------------
// Seeded randomness and the plan

export type Random = { next(): number; int(lo: number, hi: number): number; chance(p: number): boolean; pick<T>(items: readonly T[]): T };

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

/** A text of ~3,990 characters: its `echo: …` answer is longer than one Slack chunk (3,900). */
function longText(index: number, random: Random): string {
  const sentences: string[] = [];
  let length = 0;
  while (length < 3_900) {
    const sentence = `Sentence ${sentences.length + 1} of soak event ${index} says ${random.pick(WORDS)} and ${random.pick(WORDS)}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  return sentences.join(' ').slice(0, 3_990).trimEnd();
}

/** A server error as Slack answers one: an HTTP 5xx, or HTTP 200 with `internal_error`. */
function serverError(random: Random): FakeSlackFailure {
  const status = random.pick([500, 502, 503, 200]);
  return status === 200 ? { error: 'internal_error' } : { status };
}

export function planSoak(options: { seed: number; events: number; mix?: FaultMix; spacingMs?: number }): SoakPlan {
  const mix = options.mix ?? DEFAULT_MIX;
  const random = seededRandom(options.seed);
  const spacingMs = options.spacingMs ?? 150;
  const sendWindowMs = Math.max(1, options.events * spacingMs);
  const baseSeconds = Math.floor(Date.now() / 1000) - 60;
  const kinds = Object.entries(mix.kinds) as Array<[TaskKind, number]>;
  const totalWeight = kinds.reduce((sum, [, weight]) => sum + weight, 0);
  const pickKind = (): TaskKind => {
    let roll = random.next() * totalWeight;
    for (const [kind, weight] of kinds) if ((roll -= weight) < 0) return kind;
    return 'quick';
  };

  const offsets = Array.from({ length: options.events }, () => Math.floor(random.next() * sendWindowMs)).sort((a, b) => a - b);
  const events: PlannedEvent[] = offsets.map((atMs, index) => {
    const kind = pickKind();
    const word = random.pick(WORDS);
    const text =
      kind === 'slow'
        ? `soak ${index} ${word} #sleep=${random.int(600, 4_000)}`
        : kind === 'fail'
          ? `soak ${index} ${word} #fail`
          : kind === 'crash'
            ? `soak ${index} ${word} #crash`
            : kind === 'long'
              ? longText(index, random)
              : `soak ${index} ${word}`;
    const event: PlannedEvent = {
      index,
      eventId: `EvSOAK${options.seed}X${index}`,
      ts: `${baseSeconds}.${String(index).padStart(6, '0')}`,
      user: `USOAK${index % 25}`,
      text,
      kind,
      atMs,
    };
    if (random.chance(mix.slackRetry)) event.slackRetries = { count: random.int(1, 3), concurrent: random.chance(0.4) };

    // At most one Slack API fault per thread, so each row of the table names one cause.
    const roll = random.next();
    let edge = 0;
    const within = (p: number) => roll < (edge += p);
    if (within(mix.post429)) {
      const times = random.int(1, 4);
      event.postFault = { label: times <= 2 ? 'Slack 429 (waited out in the call)' : 'Slack 429 (outlasts the call: redelivered)', failure: { retryAfterSeconds: 1, times } };
    } else if (within(mix.post5xx)) {
      event.postFault = { label: 'Slack 5xx before the post took effect (looked for, then posted)', failure: serverError(random) };
    } else if (within(mix.post5xxLanded)) {
      event.postFault = { label: 'Slack 5xx after the post landed (found by its metadata)', failure: { ...serverError(random), afterEffect: true } };
    } else if (within(mix.post5xxOutlast)) {
      event.postFault = { label: 'Slack 5xx on several receives in a row', failure: { status: random.pick([500, 503]), times: random.int(4, 5) } };
    } else if (within(mix.postStall)) {
      event.postFault = { label: 'Slack slow (0.3–3 s stall)', failure: { stallMs: random.int(300, 3_000) } };
    } else if (within(mix.postTimeout)) {
      event.postFault = { label: 'Slack stall past the client timeout', failure: { stallMs: PAST_CLIENT_TIMEOUT_MS } };
    }

    const queues: QueueName[] = kind === 'slow' ? ['tasks', 'polls', 'replies'] : ['tasks', 'replies'];
    if (random.chance(mix.redeliver)) event.redeliver = { queue: random.pick(queues), afterMs: random.int(0, 1_500) };
    if (random.chance(mix.kill)) {
      const queue = random.pick(queues);
      const modes: KillMode[] = queue === 'replies' && !mix.posterTimeout ? ['before', 'after'] : ['before', 'after', 'timeout'];
      event.kill = { queue, mode: random.pick(modes), abortAfterMs: random.int(0, 400) };
    }
    // A slow task outlives the front's sync budget: it is the one handed off to the worker.
    if (random.chance(mix.sqsAnswerLost)) {
      const sent: SentQueue[] = kind === 'slow' ? [...queues, 'worker'] : queues;
      event.sqsAnswerLost = { queue: random.pick(sent), answer: random.pick(['reset', 500, 503] as const) };
    }
    if (kind === 'slow' && random.chance(mix.handoffTwice)) event.handoffTwice = { afterMs: random.chance(0.4) ? 0 : random.int(50, 1_500) };
    return event;
  });

  const outages: Outage[] = [];
  if (mix.outagesPerMinute > 0) {
    const count = Math.max(1, Math.round((sendWindowMs / 60_000) * mix.outagesPerMinute));
    const slot = sendWindowMs / count;
    for (let i = 0; i < count; i += 1) outages.push({ atMs: Math.floor(slot * i + random.next() * slot * 0.6), durationMs: random.int(2_000, 5_000) });
  }
  return { seed: options.seed, events, outages, sendWindowMs };
}

// ---------------------------------------------------------------------------------------------
// Judging a thread

export type Verdict = 'ok' | 'duplicated' | 'lost';

export type ThreadJudgement = {
  verdict: Verdict;
  /** Reply messages the user sees in the thread (an answer in several chunks is one). */
  replies: number;
  /** `answer`, the key of a safe message (`executionFailed`, …), `partial answer`, `foreign`, or `none`. */
  reply: string;
  detail: string;
};

const SAFE_MESSAGES = Object.entries(DEFAULT_USER_MESSAGES).map(([key, text]) => ({
  key: key as UserMessageKey,
  pattern: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\{\w+\\\}/g, '.+')}$`),
}));

function safeMessageKey(text: string): UserMessageKey | undefined {
  return SAFE_MESSAGES.find(({ pattern }) => pattern.test(text))?.key;
}

/**
 * Judges one thread: the posts in it, against the answer its event should get. A chunk of the
 * answer counts towards the answer (its copies are the most repeated chunk); a safe message is one
 * reply each; any other text is someone else's reply.
 */
export function judgeThread(expectedAnswer: string, posts: readonly string[], chunkLimit = SLACK_CHUNK_LIMIT): ThreadJudgement {
  const chunks = splitForSlack(expectedAnswer, chunkLimit);
  const seen = chunks.map(() => 0);
  const safe: string[] = [];
  const foreign: string[] = [];
  for (const text of posts) {
    const chunk = chunks.indexOf(text);
    if (chunk >= 0) seen[chunk]! += 1;
    else {
      const key = safeMessageKey(text);
      if (key) safe.push(key);
      else foreign.push(text);
    }
  }
  const answerCopies = Math.max(0, ...seen);
  const answerComplete = answerCopies > 0 && Math.min(...seen) >= 1;
  const own = answerCopies + safe.length;
  const replies = own + foreign.length;
  const reply = answerCopies > 0 ? (answerComplete ? 'answer' : 'partial answer') : safe[0] ?? (foreign.length ? 'foreign' : 'none');
  const describe = () =>
    [
      answerCopies ? `answer ×${answerCopies}${chunks.length > 1 ? ` (chunks seen ${seen.join('/')})` : ''}` : '',
      ...safe.map((key) => `safe message "${key}"`),
      ...foreign.map((text) => `foreign text "${text.slice(0, 50)}"`),
    ]
      .filter(Boolean)
      .join(' + ') || 'no post';
  if (replies === 0) return { verdict: 'lost', replies, reply, detail: 'no reply in its thread' };
  if (replies > 1 && own >= 1) return { verdict: 'duplicated', replies, reply, detail: describe() };
  if (own === 0) return { verdict: 'lost', replies, reply, detail: `only someone else's reply: ${describe()}` };
  if (answerCopies === 1 && !answerComplete) return { verdict: 'lost', replies, reply, detail: `part of the answer is missing: ${describe()}` };
  return { verdict: 'ok', replies, reply, detail: describe() };
}

/** What the echo executor answers (the ingress strips the mention and collapses blanks). */
export function expectedAnswer(text: string): string {
  return `echo: ${text.replace(/[ \t]+/g, ' ').trim()}`;
}

// ---------------------------------------------------------------------------------------------
// Logs: every line of every component, kept in memory (JSON, redacted like the real logger)

class RecordingLog implements Log {
  constructor(
    private readonly service: string,
    private readonly lines: string[],
  ) {}
  debug(message: string, ...extra: LogExtra[]): void {
    this.write('DEBUG', message, extra);
  }
  info(message: string, ...extra: LogExtra[]): void {
    this.write('INFO', message, extra);
  }
  warn(message: string, ...extra: LogExtra[]): void {
    this.write('WARN', message, extra);
  }
  error(message: string, ...extra: LogExtra[]): void {
    this.write('ERROR', message, extra);
  }
  private write(level: string, message: string, extra: LogExtra[]): void {
    const item: Record<string, unknown> = { timestamp: new Date().toISOString(), level, service: this.service, message };
    for (const part of extra) {
      if (part instanceof Error) item.error = part;
      else if (part && typeof part === 'object') Object.assign(item, part);
    }
    try {
      this.lines.push(JSON.stringify(item, redactingReplacer));
    } catch {
      this.lines.push(JSON.stringify({ timestamp: item.timestamp, level, service: this.service, message }));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The run

export type SoakOptions = {
  events: number;
  seed: number;
  mix?: FaultMix;
  /** Queue delays and visibility timeouts, and Slack's retry schedule, run this much faster. */
  timeScale?: number;
  spacingMs?: number;
  /** Give up waiting for the pipeline to settle after this long past the send phase. */
  maxSettleMs?: number;
  /** Progress lines (none when absent). */
  progress?: (line: string) => void;
  /**
   * Wraps the Slack replies the pipeline posts with. Only for checking the soak itself: a wrapper
   * that posts twice or not at all must turn into a duplicated or lost event.
   */
  tamper?: (replies: SlackReplies, plan: SoakPlan) => SlackReplies;
};

export type EventOutcome = {
  event: PlannedEvent;
  faults: string[];
  judgement: ThreadJudgement;
  requestIds: string[];
  ingressStatuses: number[];
  deadLettered: SentQueue[];
  /** Queues still holding a message of this event when the run ended (a stall). */
  stillQueued: SentQueue[];
  /** What still shows the assistant working in its thread at the end (none when it is done). */
  working: string[];
  hops: string[];
};

export type FaultRow = { fault: string; events: number; ok: number; answers: number; safeErrors: number; duplicated: number; lost: number; working: number };

export type SoakResult = {
  seed: number;
  timeScale: number;
  durationMs: number;
  sent: number;
  replied: number;
  duplicated: number;
  lost: number;
  /** Posts in a thread no event owns. */
  strays: number;
  /** Threads that still show the assistant working (a `processing` session, a stream, a status, a placeholder). */
  leftWorking: number;
  outcomes: EventOutcome[];
  rows: FaultRow[];
  injected: Record<string, number>;
  outages: Array<Outage & { actualMs: number }>;
  deadLetters: Record<SentQueue, number>;
  settled: boolean;
  notes: string[];
  logLines: string[];
  exitCode: number;
};

const SIGNING_SECRET = 'soak-signing-secret-0123456789abcdef';
/** Slack retries a failed delivery about at once, after 1 minute and after 5 minutes. */
const SLACK_RETRY_DELAYS_MS = [100, 60_000, 300_000];

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const started = Date.now();
  const timeScale = options.timeScale ?? 0.1;
  const mix = options.mix ?? DEFAULT_MIX;
  const plan = planSoak({ seed: options.seed, events: options.events, mix, spacingMs: options.spacingMs });
  const progress = options.progress ?? (() => undefined);
  const notes: string[] = [];
  const logLines: string[] = [];
  const injected: Record<string, number> = {};
  const count = (key: string, by = 1) => (injected[key] = (injected[key] ?? 0) + by);
  const byTs = new Map(plan.events.map((event) => [event.ts, event]));
  const eventOfBody = (body: string): PlannedEvent | undefined => {
    try {
      const ts = (JSON.parse(body) as { ts?: unknown }).ts;
      return typeof ts === 'string' ? byTs.get(ts) : undefined;
    } catch {
      return undefined;
    }
  };

  // A reply whose post outcome is unknown keeps its chunk's lease; the redelivery that may take it
  // over comes a visibility timeout later. Both run on the pipeline's scaled clock (the claims'
  // leases as the queues' timeouts), so at any scale the redelivery finds the lease over — unless
  // the settings themselves say otherwise.
  if (visibilityTimeoutSeconds('replies') <= REPLY_CHUNK_LEASE_SECONDS) {
    notes.push(`the replies queue's visibility timeout (${visibilityTimeoutSeconds('replies')} s) is not longer than a chunk's lease (${REPLY_CHUNK_LEASE_SECONDS} s): a post with an unknown outcome waits a receive more`);
  }

  /** The event a hand-off message (`{ task_id, params }`) is for, by its thread. */
  const eventOfHandoff = (body: string): PlannedEvent | undefined => {
    try {
      const params = (JSON.parse(body) as { params?: { thread_ts?: unknown } }).params;
      return typeof params?.thread_ts === 'string' ? byTs.get(params.thread_ts) : undefined;
    } catch {
      return undefined;
    }
  };
  const eventOfSent = (queue: SentQueue, body: string) => (queue === 'worker' ? eventOfHandoff(body) : eventOfBody(body));

  // SQS on loopback: every send goes through the project's SQS client (retries and all) to the
  // fake, which hands each message it takes to the in-memory queue of that name.
  const forwardTo = new Map<string, (message: FakeSqsMessage) => void>();
  const sqs = await startFakeSqs({ onMessage: (message, queue) => forwardTo.get(queue)?.(message) });
  const sqsLog = new RecordingLog('sqs', logLines);
  const client = sqsClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDSOAK', secretAccessKey: 'soak-secret' }, env: {} });
  const forward = (queue: SentQueue, target: MemoryQueue<unknown>) => {
    // The queue's own send (not the SQS one put in its place below).
    const send = MemoryQueue.prototype.send.bind(target);
    forwardTo.set(queue, (message) => {
      const options: EnqueueOptions = { ...(message.delaySeconds !== undefined ? { delaySeconds: message.delaySeconds } : {}), ...(message.attributes ? { attributes: message.attributes } : {}) };
      send(JSON.parse(message.body), options).catch((error: Error) => sqsLog.error('fake SQS could not hand a message to its queue', { queue, error }));
    });
    return send;
  };

  // The execution zone as the function URL deploys it: a front whose accepted tasks go to the
  // worker queue, and a worker that runs them from it, on one task store.
  const slack = await startFakeSlackApi();
  const runtimeLog = new RecordingLog('execution', logLines);
  const executionConfig = loadExecutionConfig({ SYNC_BUDGET_MS: '300' });
  const workerSqs = new SqsQueue<never>({ client, queueUrl: sqs.queueUrl('worker'), name: 'worker' });
  const runtime = createExecutionRuntime({
    config: executionConfig,
    log: runtimeLog,
    handoff: async (task) => workerSqs.sendBody(await handoffMessageBody(runtime, task)),
  });
  const workerRuntime = createExecutionRuntime({ config: executionConfig, store: runtime.store, log: new RecordingLog('execution-worker', logLines) });
  // As CDK sets it (cdk/constructs/function-url-execution-host.ts): the worker's timeout (task timeout + 1 min, at most 15) + 2 min; 3 receives.
  const workerVisibilitySeconds = Math.min(900, Math.ceil(executionConfig.TASK_TIMEOUT_MS / 1000) + 60) + 120;
  const workerDlq = new MemoryQueue<unknown>({ name: 'worker-dlq', timeScale });
  const workerQueue = new MemoryQueue<unknown>({ name: 'worker', visibilityTimeoutSeconds: workerVisibilitySeconds, maxReceiveCount: 3, deadLetterQueue: workerDlq, timeScale });
  const workerSend = forward('worker', workerQueue);
  workerQueue.consume(async (delivery) => runHandoffMessage(workerRuntime, delivery.body), { concurrency: 16 });
  const server: Server = createExecutionHttpServer(runtime);
  const runtimeUrl = await listenOnLoopback(server);
  const port = Number(new URL(runtimeUrl).port);
  let zoneUp = true;

  const transport = httpsTransport({ url: `${runtimeUrl}/invocations`, baseDelayMs: 50, maxDelayMs: 400, timeoutMs: 10_000, log: new RecordingLog('transport', logLines) });
  const agent = new ExecutionAgent('default', createProtocol('execute-task'), transport);
  const slackLog = new RecordingLog('slack', logLines);
  const realReplies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl, log: slackLog }), { log: slackLog });
  const replies = options.tamper ? options.tamper(realReplies, plan) : realReplies;

  const hops: TraceEvent[] = [];
  const requestTs = new Map<string, string>();
  const trace = (event: TraceEvent) => {
    // Stamped with real time: the follow-up functions stamp theirs on the pipeline's scaled clock.
    hops.push({ ...event, at: Date.now() });
    const ts = event.detail?.ts;
    if (event.hop === 'ingress' && typeof ts === 'string') requestTs.set(event.requestId, ts);
  };

  // Killed consumers: each queue's consumer, as createLocalPipeline subscribes it, is wrapped so
  // that the planned delivery fails without an ack (the visibility timeout brings it back).
  const killed = new Set<number>();
  const killer = (queue: QueueName, handler: DeliveryHandler): DeliveryHandler => {
    return async (delivery, context) => {
      const event = eventOfBody(delivery.body);
      const kill = event?.kill;
      if (!event || !kill || kill.queue !== queue || killed.has(event.index)) return handler(delivery, context);
      killed.add(event.index);
      count(`${consumerOf(queue)} killed (${kill.mode})`);
      const fail = (when: string) => new Error(`soak: ${queue} consumer killed ${when} (receive ${delivery.receiveCount})`);
      if (kill.mode === 'before') throw fail('before its handler ran');
      if (kill.mode === 'after') {
        await handler(delivery, context);
        throw fail('after its handler ran, before the ack');
      }
      const controller = new AbortController();
      const signal = context.signal ? AbortSignal.any([context.signal, controller.signal]) : controller.signal;
      const timer = setTimeout(() => controller.abort(new Error('soak: the function is about to time out')), kill.abortAfterMs);
      try {
        await handler(delivery, { ...context, signal });
      } catch {
        // Whatever it did, the delivery is not acknowledged.
      } finally {
        clearTimeout(timer);
      }
      throw fail(`mid-delivery (abort signal after ${kill.abortAfterMs} ms)`);
    };
  };

  let pipeline: LocalPipeline;
  const originalConsume = MemoryQueue.prototype.consume;
  MemoryQueue.prototype.consume = function consume(this: MemoryQueue<unknown>, handler: DeliveryHandler, consumeOptions?: { concurrency?: number }) {
    return originalConsume.call(this, killer(this.name as QueueName, handler), consumeOptions);
  };
  try {
    pipeline = createLocalPipeline({
      agent,
      slack: replies,
      signingSecret: SIGNING_SECRET,
      timeScale,
      // Unlimited rate: a refusal later in the same minute is silent by design, which would look lost.
      env: { RATE_LIMIT_PER_MINUTE: '0' },
      log: new RecordingLog('verification', logLines),
      trace,
    });
  } finally {
    MemoryQueue.prototype.consume = originalConsume;
  }

  // The pipeline's sends go through SQS (the SqsQueue client against the fake); what SQS takes
  // reaches the in-memory queue through `forward`.
  const memorySend = {} as Record<QueueName, (message: unknown, options?: EnqueueOptions) => Promise<void>>;
  for (const queue of ['tasks', 'polls', 'replies'] as const) {
    const target = pipeline.queues[queue] as MemoryQueue<unknown>;
    const viaSqs = new SqsQueue<unknown>({ client, queueUrl: sqs.queueUrl(queue), name: queue });
    memorySend[queue] = forward(queue, target);
    target.send = (message, sendOptions) => viaSqs.send(message, sendOptions);
    target.sendBatch = (messages) => viaSqs.sendBatch(messages);
  }

  // SQS takes a send and its answer is lost: the event's first send to the planned queue.
  const answerLost = new Set<number>();
  for (const event of plan.events) {
    const fault = event.sqsAnswerLost;
    if (!fault) continue;
    sqs.failNext({
      queue: fault.queue,
      taken: true,
      ...(fault.answer === 'reset' ? { reset: true } : { status: fault.answer }),
      match: (body) => {
        if (eventOfSent(fault.queue, body)?.index !== event.index) return false;
        answerLost.add(event.index);
        count(`SQS took a ${MESSAGE_OF[fault.queue]} send and its answer was lost (${fault.answer === 'reset' ? 'connection reset' : fault.answer})`);
        return true;
      },
    });
  }

  // Pending work of the soak itself (Slack deliveries, copies to send, outages): all of it must
  // be over before the pipeline is judged idle.
  const pending = new Set<Promise<unknown>>();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise);
    void promise.finally(() => pending.delete(promise)).catch(() => undefined);
    return promise;
  };

  // When anything last happened on any queue (a stall is a long silence while messages wait).
  let lastActivity = Date.now();
  for (const queue of [...Object.values(pipeline.queues), workerQueue, workerDlq] as Array<MemoryQueue<unknown>>) queue.subscribe(() => (lastActivity = Date.now()));

  // SQS redelivery: the first message of the planned queue for the event is sent once more.
  const copied = new Set<number>();
  for (const queue of ['tasks', 'polls', 'replies'] as const) {
    const target = pipeline.queues[queue] as MemoryQueue<unknown>;
    target.subscribe((queueEvent) => {
      if (queueEvent.type !== 'sent') return;
      const event = eventOfBody(queueEvent.body);
      if (!event?.redeliver || event.redeliver.queue !== queue || copied.has(event.index)) return;
      copied.add(event.index);
      const body = queueEvent.body;
      const attributes = queueEvent.attributes;
      track(
        sleep(event.redeliver.afterMs).then(async () => {
          count(`SQS copies of a ${MESSAGE_OF[queue]} message`);
          await memorySend[queue](JSON.parse(body), { attributes });
        }),
      );
    });
  }

  // A hand-off delivered twice: the worker queue holds a second copy of the event's first hand-off.
  const handedOffTwice = new Set<number>();
  workerQueue.subscribe((queueEvent) => {
    if (queueEvent.type !== 'sent') return;
    const event = eventOfHandoff(queueEvent.body);
    if (!event?.handoffTwice || handedOffTwice.has(event.index)) return;
    handedOffTwice.add(event.index);
    const body = queueEvent.body;
    track(
      sleep(event.handoffTwice.afterMs).then(async () => {
        count(`hand-offs delivered twice (${event.handoffTwice!.afterMs === 0 ? 'racing the first' : 'later'})`);
        await workerSend(JSON.parse(body));
      }),
    );
  });

  // Slack API faults, per thread.
  for (const event of plan.events) {
    if (event.postFault) slack.failWhen('chat.postMessage', (body) => body.thread_ts === event.ts, event.postFault.failure);
  }

  // The Slack sender.
  const ingressStatuses = new Map<number, number[]>();
  const deliver = async (event: PlannedEvent): Promise<void> => {
    const { body } = appMentionEnvelope({ text: event.text, ts: event.ts, eventId: event.eventId, userId: event.user });
    const statuses: number[] = [];
    ingressStatuses.set(event.index, statuses);
    const attempt = async (retryNum: number, reason: string): Promise<boolean> => {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...slackSignatureHeaders(SIGNING_SECRET, body) };
      if (retryNum > 0) {
        headers['x-slack-retry-num'] = String(retryNum);
        headers['x-slack-retry-reason'] = reason;
        count(`Slack retries sent (${reason})`);
      }
      let status: number;
      try {
        status = (await pipeline.ingress({ headers, body })).statusCode;
      } catch {
        status = 599;
      }
      statuses.push(status);
      count(`ingress answered ${status} to a ${retryNum > 0 ? 'retry' : 'first delivery'}`);
      return status >= 200 && status < 300;
    };
    // A forced retry is Slack deciding that an attempt it sent timed out (its answer came after
    // 3 s): it sends the next retry whatever that attempt answered. A non-2xx is retried too.
    let forced = event.slackRetries?.count ?? 0;
    let retryNum = 0;
    let lastOk: boolean;
    let acked: boolean;
    if (event.slackRetries?.concurrent) {
      // Slack timed out on the first delivery while it was still being handled: the retry races it.
      const [first, retry] = await Promise.all([attempt(0, ''), attempt(1, 'http_timeout')]);
      acked = first || retry;
      lastOk = retry;
      retryNum = 1;
      forced -= 1;
    } else {
      acked = lastOk = await attempt(0, '');
    }
    while (retryNum < 3 && (forced > 0 || !lastOk)) {
      const reason = lastOk ? 'http_timeout' : 'http_error';
      if (lastOk) forced -= 1;
      await sleep(SLACK_RETRY_DELAYS_MS[retryNum]! * timeScale);
      retryNum += 1;
      lastOk = await attempt(retryNum, reason);
      acked ||= lastOk;
    }
    if (!acked) count('event never acknowledged by the ingress');
  };

  // The execution zone goes down (its HTTP server closes every connection) and comes back.
  const outageLog: Array<Outage & { actualMs: number; from: number; to: number }> = [];
  const startRuntime = () => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const runOutage = async (outage: Outage, sendStart: number) => {
    await sleep(Math.max(0, sendStart + outage.atMs - Date.now()));
    const from = Date.now();
    zoneUp = false;
    await closeServer(server);
    await sleep(outage.durationMs);
    for (let tries = 0; ; tries += 1) {
      try {
        await startRuntime();
        break;
      } catch (error) {
        if (tries >= 50) throw error;
        await sleep(100);
      }
    }
    zoneUp = true;
    const to = Date.now();
    outageLog.push({ ...outage, actualMs: to - from, from, to });
  };

  const replied = () => new Set(slack.posts.map((post) => post.thread_ts)).size;
  const queueSizes = () => `tasks ${pipeline.queues.tasks.size}, polls ${pipeline.queues.polls.size}, replies ${pipeline.queues.replies.size}, worker ${workerQueue.size}; DLQs ${pipeline.queues.tasksDlq.size}/${pipeline.queues.pollsDlq.size}/${pipeline.queues.repliesDlq.size}/${workerDlq.size}`;
  let sentSoFar = 0;
  const ticker = setInterval(() => {
    progress(`  ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s  sent ${sentSoFar}/${plan.events.length}, threads with a reply ${replied()}, in queues: ${queueSizes()}${zoneUp ? '' : ', execution zone DOWN'}`);
  }, 10_000);

  let settled = true;
  try {
    const sendStart = Date.now();
    for (const outage of plan.outages) track(runOutage(outage, sendStart));
    for (const event of plan.events) {
      await sleep(Math.max(0, sendStart + event.atMs - Date.now()));
      sentSoFar += 1;
      track(deliver(event));
    }
    progress(`  send phase over after ${((Date.now() - sendStart) / 1000).toFixed(1)} s; waiting for the pipeline to settle`);

    // Settle: nothing of ours pending, every queue idle at once, twice in a row with a grace gap
    // (late posts of stalled or abandoned calls land in it).
    const graceMs = mix.postTimeout > 0 || mix.posterTimeout ? PAST_CLIENT_TIMEOUT_MS + 1_000 : 1_000;
    const deadline = Date.now() + (options.maxSettleMs ?? 600_000);
    // A queue that holds messages while nothing moves anywhere for this long has stalled: every
    // legitimate wait (a visibility timeout, a poll delay, a slow handler) is shorter.
    const stallMs = Math.max(30_000, 2 * Math.max(workerVisibilitySeconds, ...(['tasks', 'polls', 'replies'] as const).map(visibilityTimeoutSeconds)) * 1000 * timeScale + 45_000);
    const watched = [pipeline.queues.tasks, pipeline.queues.polls, pipeline.queues.replies, workerQueue] as Array<MemoryQueue<unknown>>;
    const queueStates = () => Promise.all(watched.map((queue) => queue.whenIdle({ timeoutMs: 0 }).then(() => `${queue.name} idle`, (error: Error) => error.message)));
    // A consumed queue hands a visible message out at once while a slot is free: visible
    // messages with nothing in flight, seen on two checks a few seconds apart, are parked.
    const parked = (states: string[]) => states.filter((state) => /: [1-9]\d* visible, \d+ delayed or invisible, 0 in flight$/.test(state));
    let parkedSince: number | undefined;
    for (;;) {
      while (pending.size) await Promise.all([...pending]).catch(() => undefined);
      try {
        const idleWithin = { timeoutMs: Math.min(3_000, Math.max(1, deadline - Date.now())) };
        await Promise.all([pipeline.whenIdle(idleWithin), workerQueue.whenIdle(idleWithin), workerDlq.whenIdle(idleWithin)]);
        parkedSince = undefined;
      } catch {
        const states = await queueStates();
        parkedSince = parked(states).length ? (parkedSince ?? Date.now()) : undefined;
        const quiet = Date.now() - lastActivity;
        const stalled = (parkedSince !== undefined && Date.now() - parkedSince >= 5_000) || quiet >= stallMs;
        if (Date.now() < deadline && !stalled) continue;
        settled = false;
        notes.push(
          stalled
            ? `the pipeline STALLED (nothing moved for ${(quiet / 1000).toFixed(0)} s): ${states.join('; ')}`
            : `the pipeline did not settle within ${((options.maxSettleMs ?? 600_000) / 1000).toFixed(0)} s of the send phase: ${states.join('; ')}`,
        );
        break;
      }
      await sleep(graceMs);
      if (pending.size === 0 && watched.every((queue) => queue.isIdle)) break;
    }
  } finally {
    clearInterval(ticker);
  }

  // Judge.
  const deadLetters: Record<SentQueue, number> = { tasks: 0, polls: 0, replies: 0, worker: 0 };
  const deadLettered = new Map<number, SentQueue[]>();
  const queuesOf = (queue: SentQueue) =>
    queue === 'worker' ? { live: workerQueue, dlq: workerDlq } : { live: pipeline.queues[queue] as MemoryQueue<unknown>, dlq: pipeline.queues[`${queue}Dlq` as const] };
  for (const queue of ['tasks', 'polls', 'replies', 'worker'] as const) {
    for (const body of queuesOf(queue).dlq.peek()) {
      deadLetters[queue] += 1;
      const event = eventOfSent(queue, body);
      if (event) deadLettered.set(event.index, [...(deadLettered.get(event.index) ?? []), queue]);
    }
  }
  const stillQueued = new Map<number, SentQueue[]>();
  for (const queue of ['tasks', 'polls', 'replies', 'worker'] as const) {
    for (const body of queuesOf(queue).live.peek()) {
      const event = eventOfSent(queue, body);
      if (event) stillQueued.set(event.index, [...(stillQueued.get(event.index) ?? []), queue]);
    }
  }
  // What the user sees in each thread: the bot's messages — posts and streams — as they show now
  // (a message edited since, a stream as it grew).
  const botMessages = [...slack.posts, ...slack.streams];
  const postsByThread = new Map<string, string[]>();
  for (const message of botMessages) {
    const thread = message.thread_ts ?? '';
    postsByThread.set(thread, [...(postsByThread.get(thread) ?? []), slack.messageText(message.ts) ?? '']);
  }
  const strays = botMessages.filter((message) => !byTs.has(message.thread_ts ?? '')).length;
  /** What still says "working" in a thread once everything settled: each should have ended with the reply. */
  const stillWorking = (threadTs: string): string[] => {
    const reasons: string[] = [];
    for (const session of slack.sessions) if (session.thread_ts === threadTs && session.status === 'processing') reasons.push('its agent session is still processing (Stop button shown)');
    for (const stream of slack.streams) if (stream.thread_ts === threadTs && stream.state === 'streaming') reasons.push(`a stream is still streaming (${stream.ts})`);
    const statusChannels = new Set(slack.statuses.filter((status) => status.thread_ts === threadTs).map((status) => status.channel));
    for (const channel of statusChannels) if (slack.statusOf(channel, threadTs)) reasons.push(`the thread's status still says "${slack.statusOf(channel, threadTs)}"`);
    for (const message of botMessages) {
      const text = slack.messageText(message.ts) ?? '';
      if (message.thread_ts === threadTs && (text === DEFAULT_USER_MESSAGES.workingPlaceholder || text.endsWith(' …'))) reasons.push(`a message still shows "${text.slice(-40)}"`);
    }
    return reasons;
  };
  const requestIdsByTs = new Map<string, string[]>();
  for (const [requestId, ts] of requestTs) requestIdsByTs.set(ts, [...(requestIdsByTs.get(ts) ?? []), requestId]);

  const outcomes: EventOutcome[] = plan.events.map((event) => {
    const requestIds = requestIdsByTs.get(event.ts) ?? [];
    const eventHops = hops.filter((hop) => requestIds.includes(hop.requestId));
    const faults: string[] = [];
    if (event.kind === 'slow') faults.push('slow task (#sleep: accepted, polled)');
    if (event.kind === 'fail') faults.push('failing task (#fail)');
    if (event.kind === 'crash') faults.push('crashing task (#crash)');
    if (event.kind === 'long') faults.push('long answer (2 chunks)');
    if (event.slackRetries) faults.push(`Slack retry of the event (${event.slackRetries.concurrent ? 'racing the first delivery' : 'after the ack'})`);
    if (event.postFault) faults.push(event.postFault.label);
    if (event.redeliver) faults.push(`SQS redelivers its ${MESSAGE_OF[event.redeliver.queue]} message`);
    if (event.sqsAnswerLost && answerLost.has(event.index)) {
      faults.push(`SQS took its ${MESSAGE_OF[event.sqsAnswerLost.queue]} send, the answer was lost (sent again: two copies)`);
    }
    if (event.handoffTwice && handedOffTwice.has(event.index)) faults.push('its hand-off delivered twice by the worker queue');
    if (event.kill) faults.push(`${consumerOf(event.kill.queue)} killed ${event.kill.mode === 'before' ? 'before work' : event.kill.mode === 'after' ? 'after work, before ack' : 'mid-call (timeout)'}`);
    const duringOutage = eventHops.some((hop) => (hop.hop === 'execute-sent' || hop.hop === 'poll' || hop.hop === 'retry') && outageLog.some((o) => hop.at >= o.from && hop.at <= o.to + 250));
    if (duringOutage) faults.push('execution zone down during its task');
    if (faults.length === 0) faults.push('none');
    const judgement = judgeThread(expectedAnswer(event.text), postsByThread.get(event.ts) ?? []);
    return {
      event,
      faults,
      judgement,
      requestIds,
      ingressStatuses: ingressStatuses.get(event.index) ?? [],
      deadLettered: deadLettered.get(event.index) ?? [],
      stillQueued: stillQueued.get(event.index) ?? [],
      working: stillWorking(event.ts),
      hops: eventHops.map((hop) => `${new Date(hop.at).toISOString().slice(11, 23)} ${hop.hop}${hop.detail ? ` ${JSON.stringify(hop.detail)}` : ''}`),
    };
  });

  // A planned fault that found no send to hit (say, a hand-off of a task that finished within the sync budget).
  const unmet = plan.events.filter((event) => (event.sqsAnswerLost && !answerLost.has(event.index)) || (event.handoffTwice && !handedOffTwice.has(event.index)));
  if (unmet.length) notes.push(`${unmet.length} planned SQS fault(s) found no message to hit (not counted in the table): ${unmet.map((event) => `#${event.index}`).join(', ')}`);

  const rows = new Map<string, FaultRow>();
  for (const outcome of outcomes) {
    for (const fault of outcome.faults) {
      const row = rows.get(fault) ?? { fault, events: 0, ok: 0, answers: 0, safeErrors: 0, duplicated: 0, lost: 0, working: 0 };
      row.events += 1;
      if (outcome.judgement.verdict === 'ok') row.ok += 1;
      if (outcome.judgement.verdict === 'duplicated') row.duplicated += 1;
      if (outcome.judgement.verdict === 'lost') row.lost += 1;
      if (outcome.judgement.verdict === 'ok' && outcome.judgement.reply === 'answer') row.answers += 1;
      if (outcome.judgement.verdict === 'ok' && outcome.judgement.reply !== 'answer') row.safeErrors += 1;
      if (outcome.working.length) row.working += 1;
      rows.set(fault, row);
    }
  }
  for (const [kind, served] of Object.entries(slack.injected)) count(`Slack API calls answered ${kind === 'stall' ? 'late (stall)' : kind}`, served);

  await pipeline.stop();
  await Promise.all([workerQueue.stop(), workerDlq.stop()]);
  await closeServer(server).catch(() => undefined);
  await slack.close();
  await sqs.close();

  const duplicated = outcomes.filter((o) => o.judgement.verdict === 'duplicated').length;
  const lost = outcomes.filter((o) => o.judgement.verdict === 'lost').length;
  const leftWorking = outcomes.filter((o) => o.working.length > 0).length;
  return {
    seed: plan.seed,
    timeScale,
    durationMs: Date.now() - started,
    sent: plan.events.length,
    replied: outcomes.filter((o) => o.judgement.verdict === 'ok').length,
    duplicated,
    lost,
    strays,
    leftWorking,
    outcomes,
    rows: [...rows.values()].sort((a, b) => (a.fault === 'none' ? -1 : b.fault === 'none' ? 1 : a.fault.localeCompare(b.fault))),
    injected,
    outages: outageLog.map(({ atMs, durationMs, actualMs }) => ({ atMs, durationMs, actualMs })),
    deadLetters,
    settled,
    notes,
    logLines,
    exitCode: duplicated === 0 && lost === 0 && strays === 0 && leftWorking === 0 && plan.events.length > 0 ? 0 : 1,
  };
}

const MESSAGE_OF: Readonly<Record<SentQueue, string>> = { tasks: 'task', polls: 'poll', replies: 'reply', worker: 'hand-off' };

function consumerOf(queue: QueueName): string {
  return queue === 'tasks' ? 'agent-invoker' : queue === 'polls' ? 'async-result' : 'slack-poster';
}

// ---------------------------------------------------------------------------------------------
// The report

export function renderReport(result: SoakResult, options: { allEvents?: boolean; maxLogLines?: number } = {}): string {
  const out: string[] = [];
  const header = ['fault', 'events', 'ok', 'answer', 'safe error', 'duplicated', 'lost', 'left working'];
  const body = result.rows.map((row) => [row.fault, row.events, row.ok, row.answers, row.safeErrors, row.duplicated, row.lost, row.working].map(String));
  const okAll = result.outcomes.filter((o) => o.judgement.verdict === 'ok');
  const total = ['all events', result.sent, result.replied, okAll.filter((o) => o.judgement.reply === 'answer').length, okAll.filter((o) => o.judgement.reply !== 'answer').length, result.duplicated, result.lost, result.leftWorking].map(String);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length), total[i]!.length));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  out.push(line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line), widths.map((w) => '-'.repeat(w)).join('  '), line(total));
  out.push('(an event counts in the row of each fault it met; "ok" = exactly one reply in its thread: the answer, or one safe error message; "left working" = its thread still shows the assistant working at the end)');

  const safeByKey = new Map<string, number>();
  for (const o of okAll) if (o.judgement.reply !== 'answer') safeByKey.set(o.judgement.reply, (safeByKey.get(o.judgement.reply) ?? 0) + 1);
  if (safeByKey.size) out.push(`safe error replies: ${[...safeByKey].map(([key, n]) => `${key} ×${n}`).join(', ')}`);
  const wantedAnswer = okAll.filter((o) => o.event.kind !== 'fail' && o.event.kind !== 'crash');
  const gotError = wantedAnswer.filter((o) => o.judgement.reply !== 'answer');
  out.push(
    `tasks that can succeed (quick, slow, long): ${wantedAnswer.length - gotError.length}/${wantedAnswer.length} answered` +
      (gotError.length ? `; ${gotError.length} got a safe error instead (${gotError.map((o) => `#${o.event.index} ${o.judgement.reply}`).join(', ')})` : '') +
      `; failing tasks (#fail, #crash): ${okAll.filter((o) => (o.event.kind === 'fail' || o.event.kind === 'crash') && o.judgement.reply !== 'answer').length} got a safe error`,
  );
  out.push(`injected: ${Object.entries(result.injected).sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `${key} ×${n}`).join('; ') || 'nothing'}`);
  if (result.outages.length) out.push(`execution zone outages: ${result.outages.length} (${result.outages.map((o) => `${(o.actualMs / 1000).toFixed(1)} s at +${(o.atMs / 1000).toFixed(0)} s`).join(', ')})`);
  const dlqEvents = result.outcomes.filter((o) => o.deadLettered.length);
  out.push(
    `dead-letter queues: tasks ${result.deadLetters.tasks}, polls ${result.deadLetters.polls}, replies ${result.deadLetters.replies}, worker ${result.deadLetters.worker}` +
      (dlqEvents.length ? ` — of those events, ${dlqEvents.filter((o) => o.judgement.verdict === 'ok').length}/${dlqEvents.length} still got exactly one reply (last-receive message)` : ''),
  );
  for (const note of result.notes) out.push(`note: ${note}`);
  if (result.strays) out.push(`STRAY POSTS: ${result.strays} post(s) in a thread that belongs to no event`);

  const failed = result.outcomes.filter((o) => o.judgement.verdict !== 'ok' || o.working.length > 0);
  const shown = options.allEvents ? result.outcomes : failed;
  if (shown.length) {
    out.push('', options.allEvents ? 'every event:' : 'events that were not answered exactly once, or left working:');
    for (const o of shown) {
      out.push(
        `  #${o.event.index} ${o.judgement.verdict.toUpperCase()} (${o.judgement.detail}) event ${o.event.eventId}, thread ${o.event.ts}, request ${o.requestIds.join(', ') || '(none)'}; ingress ${o.ingressStatuses.join(',')}; faults: ${o.faults.join('; ')}${o.deadLettered.length ? `; dead-lettered from ${o.deadLettered.join(', ')}` : ''}${o.stillQueued.length ? `; STILL IN the ${o.stillQueued.join(', ')} queue at the end` : ''}${o.working.length ? `; LEFT WORKING: ${o.working.join('; ')}` : ''}`,
      );
      if (o.judgement.verdict !== 'ok' || o.working.length > 0) {
        for (const hop of o.hops) out.push(`      hop ${hop}`);
        const keys = [o.event.eventId, o.event.ts, ...o.requestIds];
        const lines = result.logLines.filter((l) => keys.some((key) => l.includes(key)));
        const max = options.maxLogLines ?? 40;
        for (const l of lines.slice(0, max)) out.push(`      log ${l.length > 600 ? `${l.slice(0, 600)}…` : l}`);
        if (lines.length > max) out.push(`      … ${lines.length - max} more log lines`);
      }
    }
  }
  const totalSeconds = Math.round(result.durationMs / 1000);
  const minutes = Math.floor(totalSeconds / 60);
  const seconds = totalSeconds % 60;
  out.push(
    '',
    `seed ${result.seed}: sent ${result.sent} / replied ${result.replied} / duplicated ${result.duplicated} / lost ${result.lost} / left working ${result.leftWorking} — ${result.exitCode === 0 ? 'PASS' : 'FAIL'} in ${minutes} min ${seconds} s (time scale ${result.timeScale})`,
  );
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The command

type Cli = { events: number; seed: number; quick: boolean; timeScale: number; with: Set<string>; log?: string; allEvents: boolean };

export function parseSoakArgs(argv: readonly string[]): Cli {
  const value = (name: string): string | undefined => {
    const inline = argv.find((arg) => arg.startsWith(`--${name}=`));
    if (inline) return inline.slice(name.length + 3);
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  const number = (name: string, fallback: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`--${name} must be a number ≥ 0, got ${raw}`);
    return parsed;
  };
  const events = Math.floor(number('events', quick ? 50 : 300));
  const seed = Math.floor(number('seed', Math.floor(Math.random() * 1_000_000)));
  const known = new Set(['poster-timeout', 'slack-timeout']);
  const extra = new Set((value('with') ?? '').split(',').filter(Boolean));
  for (const name of extra) if (!known.has(name)) throw new Error(`--with: unknown fault ${name} (known: ${[...known].join(', ')})`);
  return { events, seed, quick, timeScale: number('time-scale', 0.1), with: extra, ...(value('log') ? { log: value('log')! } : {}), allEvents: argv.includes('--all-events') };
}

async function main(): Promise<number> {
  const cli = parseSoakArgs(process.argv.slice(2));
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const mix: FaultMix = {
    ...DEFAULT_MIX,
    // A smoke run leaves out the one fault that takes ~2 minutes by design (a chunk's lease).
    ...(cli.quick ? { post5xxOutlast: 0 } : {}),
    ...(cli.with.has('slack-timeout') ? { postTimeout: 0.02 } : {}),
    ...(cli.with.has('poster-timeout') ? { posterTimeout: true } : {}),
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`soak: ${cli.events} events, seed ${cli.seed} (reproduce the mix with --seed ${cli.seed}), time scale ${cli.timeScale}${cli.with.size ? `, with ${[...cli.with].join(', ')}` : ''}${cli.quick ? ' (quick: without "Slack 5xx on several receives in a row")' : ''}`);
  const result = await runSoak({ events: cli.events, seed: cli.seed, timeScale: cli.timeScale, mix, progress: say });
  say('');
  say(renderReport(result, { allEvents: cli.allEvents }));
  const logFile = cli.log ?? (result.exitCode === 0 ? undefined : join(tmpdir(), `soak-${result.seed}-${Date.now()}.jsonl`));
  if (logFile) {
    writeFileSync(logFile, `${result.logLines.join('\n')}\n`);
    say(`every log line of the run: ${logFile}`);
  }
  return result.exitCode;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
      process.exit(1);
    },
  );
}
