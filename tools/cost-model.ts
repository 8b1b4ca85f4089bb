import { CONTEXT_DEFAULTS } from '../cdk/config';
import { DYNAMODB_PARTIAL_TEXT } from '../src/execution/stores/dynamodb-task-store';
import { DEFAULT_STREAM_HOLD_S } from '../src/transport/config';
import { FUNCTION_TIMEOUT_SECONDS } from '../src/verification/pipeline-settings';
import { DEFAULT_POLL_SCHEDULE, pollDelaySeconds, type PollSchedule } from '../src/verification/poll-schedule';
import { VerificationConfigSchema } from '../src/verification/config';
import { guardrailCostRows } from './guardrail-cost';
import { BEDROCK_MODELS, PRICES, type ModelPrice } from './prices';
import { generateTrace, measure, sessionsOf, type Message, type ModelParams } from './session-model';

/**
 * The cost model (issue 28): dollars per 1,000 Slack messages, for both execution designs and for
 * the settings that move the bill. It replays the session model's trace (tools/session-model.ts:
 * the same threads, follow-ups, think and answer times), follows every message through the
 * pipeline — slack-events, agent-invoker, the polls of async-result, slack-poster, the execution
 * zone — counting what each step bills (Lambda GB-seconds and requests, SQS requests, DynamoDB
 * request units, AgentCore vCPU and memory, Bedrock tokens), and prices the counts with
 * tools/prices.ts. AgentCore memory comes from the sessions the trace opens: a session bills its
 * memory from its first request until it ends, idle time included, so the idle timeout and the
 * stop policy are priced from the same sessions the session model counts.
 *
 * What it does not price: Slack itself, CloudWatch (logs, metrics, alarms), data transfer out,
 * the free tiers, the SQS event sources' empty receives (a few cents a month per queue whatever
 * the traffic), and the fixed monthly items (WAF's web ACL and rules, the two secrets) — those are
 * listed apart (`fixedMonthly`).
 */

// ---------------------------------------------------------------------------------------------
// What the deployment runs

/**
 * Memory (MB) of each function as CDK deploys it (cdk/stacks/verification-zone-stack.ts,
 * cdk/constructs/function-url-execution-host.ts; ZoneFunction's default 256): all arm64. The CDK
 * code writes them inline, so test/tools/cost-model.test.ts reads them from the synthesized
 * templates and fails when they part.
 */
export const LAMBDA_MEMORY_MB = {
  slackEvents: 512,
  agentInvoker: 1024,
  asyncResult: 256,
  slackPoster: 256,
  executionUrl: 512,
  executionWorker: 512,
} as const;
export type LambdaName = keyof typeof LAMBDA_MEMORY_MB;

export type Design = 'agentcore' | 'https';
export const DESIGNS: readonly Design[] = ['agentcore', 'https'];
export const DESIGN_NAMES: Record<Design, string> = { agentcore: 'AgentCore (default)', https: 'function URL' };

/**
 * When a conversation's AgentCore session ends:
 *   idle      at the runtime's idle timeout after its last request (today)
 *   after     StopRuntimeSession once the thread has been quiet `seconds` after an answer (a
 *             delayed check per answer: an SQS message to async-result, which reads the thread's
 *             last activity and stops the session if nothing came since)
 *   at-once   StopRuntimeSession as soon as the answer is read (the final poll calls it)
 */
export type StopPolicy = { kind: 'idle' } | { kind: 'after'; seconds: number } | { kind: 'at-once' };

export type CostSettings = {
  design: Design;
  /** The runtime's idleRuntimeSessionTimeout (`-c agentcoreIdleTimeoutSeconds`). */
  idleTimeoutSeconds: number;
  stop: StopPolicy;
  /** SYNC_BUDGET_MS: how long execute_task waits for the answer before `accepted`. */
  syncBudgetSeconds: number;
  /** STREAM_HOLD_S: how long the invoker and each poll hold a streamed read (0: none). */
  streamHoldSeconds: number;
  /** STREAM_POLL_DELAY_S: the next poll while text flows. */
  streamPollDelaySeconds: number;
  /** POLL_FIRST_DELAY_S, POLL_BACKOFF_FACTOR, POLL_MAX_DELAY_S, POLL_DEADLINE_S. */
  poll: PollSchedule;
  /** Whether answers stream text as they are written (Bedrock's ConverseStream does). */
  streamed: boolean;
};

const VERIFICATION_DEFAULTS = VerificationConfigSchema.parse({});

export const DEFAULT_SETTINGS: CostSettings = {
  design: 'agentcore',
  idleTimeoutSeconds: CONTEXT_DEFAULTS.agentcoreIdleTimeoutSeconds,
  stop: { kind: 'idle' },
  syncBudgetSeconds: CONTEXT_DEFAULTS.syncBudgetMs / 1000,
  streamHoldSeconds: DEFAULT_STREAM_HOLD_S,
  streamPollDelaySeconds: VERIFICATION_DEFAULTS.STREAM_POLL_DELAY_S,
  poll: DEFAULT_POLL_SCHEDULE,
  streamed: true,
};

// ---------------------------------------------------------------------------------------------
// Assumptions: what the code and the trace do not say

export type Assumptions = {
  model: ModelPrice;
  /** Per message: system prompt, thread context, the question. */
  inputTokens: number;
  /** Per message: the answer. */
  outputTokens: number;
  /** Text starts flowing this long after a task starts (the model's first token). */
  firstTextSeconds: number;
  /** A session's peak memory, system overhead included (AgentCore bills at least 128 MB). */
  agentcoreMemoryGb: number;
  /** CPU the runtime consumes per request (execute_task, a poll, a cancel), vCPU-seconds. */
  vcpuSecondsPerRequest: number;
  /** CPU while a task runs (reading the model's stream, writing partial text): vCPU. */
  vcpuWhileAnswering: number;
  /** CPU to boot a session (microVM, Node, the bundle): vCPU-seconds. */
  vcpuSecondsPerColdStart: number;
  /** Each function's own work per invocation, seconds (beyond waiting on the execution zone). */
  ownSeconds: { slackEvents: number; agentInvoker: number; poll: number; slackPoster: number; executionCall: number; stopCheck: number; stopCall: number };
  /** Slack deliveries per message (a mention in a channel may come as app_mention and message both). */
  eventsPerMessage: number;
  /** Slack API bytes per message, both ways (the NAT gateway's share in a governed account). */
  slackBytesPerMessage: number;
  /** Bytes through the interface endpoints per message (SQS, Bedrock, Logs, AgentCore). */
  endpointBytesPerMessage: number;
};

export const DEFAULT_MODEL = BEDROCK_MODELS.find((m) => m.id === CONTEXT_DEFAULTS.bedrockModelId) ?? BEDROCK_MODELS[0]!;

export const DEFAULT_ASSUMPTIONS: Assumptions = {
  model: DEFAULT_MODEL,
  inputTokens: 1_500,
  outputTokens: 400,
  firstTextSeconds: 1,
  agentcoreMemoryGb: 0.5,
  vcpuSecondsPerRequest: 0.02,
  vcpuWhileAnswering: 0.02,
  vcpuSecondsPerColdStart: 1,
  // bench part 7's stated AWS figures: ~100 ms an AWS call, ~100 ms a Slack call.
  ownSeconds: { slackEvents: 0.15, agentInvoker: 0.6, poll: 0.2, slackPoster: 0.4, executionCall: 0.06, stopCheck: 0.1, stopCall: 0.05 },
  eventsPerMessage: 1,
  slackBytesPerMessage: 50_000,
  endpointBytesPerMessage: 30_000,
};

/**
 * DynamoDB request units per step (≤ 1 KB writes, ≤ 4 KB reads), estimated from the stores each
 * step touches (src/verification/stores, src/execution/stores/dynamodb-task-store.ts).
 */
export const DYNAMO_UNITS = {
  /** Event claim (acquire, complete), the user's rate counter; whether the thread is one the bot answers in. */
  slackEvents: { writes: 3, reads: 1 },
  /** The live reply and the thread's working task; the Stop check. */
  agentInvoker: { writes: 2, reads: 1 },
  /** The live reply read; written again when the text grew. */
  poll: { writes: 1, reads: 1 },
  /** The chunk lease, the live reply settled, the thread remembered. */
  slackPoster: { writes: 3, reads: 0 },
  /** The request item and the task (the final write is counted with the partial text). */
  executeTask: { writes: 2, reads: 0 },
} as const;

// ---------------------------------------------------------------------------------------------
// One message through the pipeline

export type MessageUsage = {
  /** Seconds each Lambda function runs for this message, and its invocations. */
  lambdaSeconds: Record<LambdaName, number>;
  lambdaInvocations: Record<LambdaName, number>;
  polls: number;
  sqsRequests: number;
  dynamoWrites: number;
  dynamoReads: number;
  /** Requests the execution zone answers (execute_task, polls; held reads count once). */
  executionRequests: number;
};

const zeroLambda = (): Record<LambdaName, number> => ({ slackEvents: 0, agentInvoker: 0, asyncResult: 0, slackPoster: 0, executionUrl: 0, executionWorker: 0 });

/** Whole-item writes of the partial text every 500 ms while text flows, each billed by the item's size then. */
function partialTextWriteUnits(answerSeconds: number, a: Assumptions): number {
  const flowing = Math.max(0, answerSeconds - a.firstTextSeconds);
  const writes = Math.floor((flowing * 1000) / DYNAMODB_PARTIAL_TEXT.writeIntervalMs) + 1;
  const answerBytes = a.outputTokens * 4;
  let units = 0;
  for (let i = 1; i <= writes; i += 1) units += Math.ceil((1024 + (answerBytes * i) / writes) / 1024);
  return units;
}

/**
 * What one message whose task takes `answerSeconds` bills in the pipeline: the invoker waits up
 * to the sync budget (and holds a streamed read, with STREAM_HOLD_S), then async-result polls on
 * the schedule the code uses — STREAM_POLL_DELAY_S while text grows, else the backoff — and holds
 * the stream at each poll when STREAM_HOLD_S is set.
 */
export function messageUsage(answerSeconds: number, s: CostSettings, a: Assumptions): MessageUsage {
  const lambdaSeconds = zeroLambda();
  const lambdaInvocations = zeroLambda();
  const own = a.ownSeconds;
  const d = answerSeconds;
  let sqs = 0;
  let writes = 0;
  let reads = 0;
  let executionRequests = 1;

  lambdaInvocations.slackEvents = a.eventsPerMessage;
  lambdaSeconds.slackEvents = own.slackEvents * a.eventsPerMessage;
  writes += DYNAMO_UNITS.slackEvents.writes;
  reads += DYNAMO_UNITS.slackEvents.reads * a.eventsPerMessage;
  sqs += 3; // the task: sent, received, deleted

  const sync = Math.min(d, s.syncBudgetSeconds);
  lambdaInvocations.agentInvoker = 1;
  writes += DYNAMO_UNITS.agentInvoker.writes;
  reads += DYNAMO_UNITS.agentInvoker.reads;
  let invokerWait = sync;
  let t = sync;
  const hold = s.streamed ? s.streamHoldSeconds : 0;
  let heldLast = 0;
  if (d > t && hold > 0) {
    const room = Math.max(0, FUNCTION_TIMEOUT_SECONDS.agentInvoker - own.agentInvoker - sync - 5);
    heldLast = Math.min(d - t, hold, room);
    invokerWait += heldLast;
    t += heldLast;
  }
  lambdaSeconds.agentInvoker = own.agentInvoker + invokerWait;

  let polls = 0;
  if (d > t) {
    // The first poll: at once after a hold that ran its length, else the first delay.
    let delay = heldLast > 0 ? (heldLast >= hold / 2 ? 0 : s.streamPollDelaySeconds) : pollDelaySeconds(s.poll, 0);
    let quiet = 0;
    const pollRoom = Math.max(0, FUNCTION_TIMEOUT_SECONDS.asyncResult - own.poll - 5);
    for (;;) {
      t += delay;
      polls += 1;
      sqs += 3;
      reads += DYNAMO_UNITS.poll.reads;
      executionRequests += 1;
      lambdaInvocations.asyncResult += 1;
      if (t >= d) {
        lambdaSeconds.asyncResult += own.poll;
        break;
      }
      const flowing = s.streamed && t > a.firstTextSeconds;
      if (flowing) writes += DYNAMO_UNITS.poll.writes;
      if (flowing && hold > 0) {
        const held = Math.min(d - t, hold, pollRoom);
        lambdaSeconds.asyncResult += own.poll + held;
        t += own.poll + held;
        if (t >= d) break;
        delay = held >= hold / 2 ? 0 : s.streamPollDelaySeconds;
        continue;
      }
      lambdaSeconds.asyncResult += own.poll;
      t += own.poll;
      if (flowing) {
        quiet = 0;
        delay = s.streamPollDelaySeconds;
      } else {
        quiet += 1;
        delay = pollDelaySeconds(s.poll, quiet);
      }
    }
  }

  lambdaInvocations.slackPoster = 1;
  lambdaSeconds.slackPoster = own.slackPoster;
  writes += DYNAMO_UNITS.slackPoster.writes;
  sqs += 3; // the reply: sent, received, deleted

  // The execution zone's task table: the task, its partial text, one read per poll (≤ 4 KB).
  writes += DYNAMO_UNITS.executeTask.writes + partialTextWriteUnits(d, a);

  if (s.design === 'https') {
    // The URL function answers execute_task within the sync budget (holding a stream if asked);
    // past it the worker runs the rest of the task from the hand-off queue.
    lambdaInvocations.executionUrl = 1 + polls;
    lambdaSeconds.executionUrl = own.executionCall * (1 + polls) + invokerWait + (lambdaSeconds.asyncResult - own.poll * polls);
    if (d > s.syncBudgetSeconds) {
      lambdaInvocations.executionWorker = 1;
      lambdaSeconds.executionWorker = d - s.syncBudgetSeconds + own.executionCall;
      sqs += 3;
    }
  }
  return { lambdaSeconds, lambdaInvocations, polls, sqsRequests: sqs, dynamoWrites: writes, dynamoReads: reads, executionRequests };
}

// ---------------------------------------------------------------------------------------------
// A setting priced: the trace, its sessions, every message

export type LineItem =
  | 'lambda:slackEvents'
  | 'lambda:agentInvoker'
  | 'lambda:asyncResult'
  | 'lambda:slackPoster'
  | 'lambda:execution'
  | 'apiGateway'
  | 'sqs'
  | 'dynamodb'
  | 'secretsManager'
  | 'agentcore:vcpu'
  | 'agentcore:memoryActive'
  | 'agentcore:memoryIdle'
  | 'bedrock';

export const LINE_ITEMS: ReadonlyArray<{ item: LineItem; name: string }> = [
  { item: 'lambda:slackEvents', name: 'Lambda slack-events' },
  { item: 'lambda:agentInvoker', name: 'Lambda agent-invoker' },
  { item: 'lambda:asyncResult', name: 'Lambda async-result' },
  { item: 'lambda:slackPoster', name: 'Lambda slack-poster' },
  { item: 'lambda:execution', name: 'Lambda execution (URL + worker)' },
  { item: 'apiGateway', name: 'API Gateway + WAF requests' },
  { item: 'sqs', name: 'SQS' },
  { item: 'dynamodb', name: 'DynamoDB' },
  { item: 'secretsManager', name: 'Secrets Manager' },
  { item: 'agentcore:vcpu', name: 'AgentCore vCPU' },
  { item: 'agentcore:memoryActive', name: 'AgentCore memory, task running' },
  { item: 'agentcore:memoryIdle', name: 'AgentCore memory, idle' },
  { item: 'bedrock', name: 'Bedrock tokens' },
];

export type CostResult = {
  settings: CostSettings;
  /** Dollars per 1,000 messages, by line item. */
  per1000: Record<LineItem, number>;
  total: number;
  /** Per message, averaged over the measured window. */
  usage: {
    polls: number;
    sqsRequests: number;
    dynamoWrites: number;
    dynamoReads: number;
    lambdaGbSeconds: Record<LambdaName, number>;
    lambdaInvocations: Record<LambdaName, number>;
    /** Verification-zone GB-seconds of a message (the four functions). */
    verificationGbSeconds: number;
    secretsCalls: number;
    vcpuSeconds: number;
    sessionSeconds: number;
    activeSessionSeconds: number;
    coldStartsPer1000: number;
  };
};

/** The seconds after an answer a session lives under a policy (the runtime's idle timeout caps every policy). */
export function sessionTailSeconds(s: Pick<CostSettings, 'idleTimeoutSeconds' | 'stop'>, a: Assumptions): number {
  if (s.stop.kind === 'at-once') return Math.max(a.ownSeconds.stopCall, 0.001);
  if (s.stop.kind === 'after') return Math.min(s.stop.seconds, s.idleTimeoutSeconds);
  return s.idleTimeoutSeconds;
}

export type CostInputs = { params: ModelParams; assumptions: Assumptions; messages?: readonly Message[] };

/** The measured window's messages of the trace (generated once per parameter set). */
function windowOf(params: ModelParams, messages?: readonly Message[]) {
  const all = messages ?? generateTrace(params).messages;
  return { all, measured: all.filter((m) => m.arrival >= params.warmUpSeconds && m.arrival < params.durationSeconds) };
}

export function priceSetting(settings: CostSettings, inputs: CostInputs): CostResult {
  const { params, assumptions: a } = inputs;
  const { all, measured } = windowOf(params, inputs.messages);
  const n = measured.length;
  if (n === 0) throw new RangeError('no message arrived in the measured window: run longer or at a higher rate');

  const lambdaSeconds = zeroLambda();
  const lambdaInvocations = zeroLambda();
  let polls = 0;
  let sqs = 0;
  let writes = 0;
  let reads = 0;
  let executionRequests = 0;
  let answerSeconds = 0;
  for (const m of measured) {
    const u = messageUsage(m.done - m.arrival, settings, a);
    for (const name of Object.keys(lambdaSeconds) as LambdaName[]) {
      lambdaSeconds[name] += u.lambdaSeconds[name];
      lambdaInvocations[name] += u.lambdaInvocations[name];
    }
    polls += u.polls;
    sqs += u.sqsRequests;
    writes += u.dynamoWrites;
    reads += u.dynamoReads;
    executionRequests += u.executionRequests;
    answerSeconds += m.done - m.arrival;
  }
  // Stop machinery, per answer.
  if (settings.design === 'agentcore' && settings.stop.kind === 'after') {
    lambdaInvocations.asyncResult += n;
    lambdaSeconds.asyncResult += n * a.ownSeconds.stopCheck;
    sqs += 3 * n;
    reads += n;
    writes += n; // the thread's last activity, written as each message arrives
  } else if (settings.design === 'agentcore' && settings.stop.kind === 'at-once') {
    lambdaSeconds.asyncResult += n * a.ownSeconds.stopCall;
  }

  const perMessage = (x: number) => x / n;
  const gbSeconds = Object.fromEntries((Object.keys(lambdaSeconds) as LambdaName[]).map((name) => [name, perMessage(lambdaSeconds[name] * (LAMBDA_MEMORY_MB[name] / 1024))])) as Record<LambdaName, number>;
  const invocations = Object.fromEntries((Object.keys(lambdaInvocations) as LambdaName[]).map((name) => [name, perMessage(lambdaInvocations[name])])) as Record<LambdaName, number>;
  const lambdaCost = (...names: LambdaName[]) =>
    1000 * names.reduce((sum, name) => sum + gbSeconds[name] * PRICES.lambdaArmGbSecond.usd + invocations[name] * PRICES.lambdaRequest.usd, 0);

  // Secrets Manager: each warm instance reads its secret once per 5 minutes (src/secrets cache);
  // the warm instances of a function are about its concurrency (Little's law), at least one.
  const messagesPerSecond = n / (params.durationSeconds - params.warmUpSeconds);
  const readers: LambdaName[] = ['slackEvents', 'agentInvoker', 'asyncResult', 'slackPoster'];
  const secretReadsPerSecond = readers.reduce((sum, name) => sum + Math.max(1, messagesPerSecond * perMessage(lambdaSeconds[name])) / 300, 0);
  const secretsCalls = secretReadsPerSecond / messagesPerSecond;

  // AgentCore: the conversation's sessions under this policy, over the same window.
  let vcpuSeconds = 0;
  let sessionSeconds = 0;
  let coldStartsPer1000 = 0;
  if (settings.design === 'agentcore') {
    const sessions = sessionsOf(all, 'per-conversation', sessionTailSeconds(settings, a), params.maxLifetimeSeconds);
    const figures = measure(sessions, all, params.warmUpSeconds, params.durationSeconds);
    sessionSeconds = figures.sessionSecondsPerMessage;
    coldStartsPer1000 = figures.coldStartsPer1000;
    vcpuSeconds = perMessage(executionRequests) * a.vcpuSecondsPerRequest + perMessage(answerSeconds) * a.vcpuWhileAnswering + (coldStartsPer1000 / 1000) * a.vcpuSecondsPerColdStart;
  }
  const activeSessionSeconds = settings.design === 'agentcore' ? Math.min(sessionSeconds, perMessage(answerSeconds)) : 0;
  const gbHour = (seconds: number) => (seconds * a.agentcoreMemoryGb * PRICES.agentcoreGbHour.usd) / 3600;

  const per1000: Record<LineItem, number> = {
    'lambda:slackEvents': lambdaCost('slackEvents'),
    'lambda:agentInvoker': lambdaCost('agentInvoker'),
    'lambda:asyncResult': lambdaCost('asyncResult'),
    'lambda:slackPoster': lambdaCost('slackPoster'),
    'lambda:execution': lambdaCost('executionUrl', 'executionWorker'),
    apiGateway: 1000 * a.eventsPerMessage * (PRICES.apiGatewayRestRequest.usd + PRICES.wafRequest.usd),
    sqs: 1000 * perMessage(sqs) * PRICES.sqsRequest.usd,
    dynamodb: 1000 * (perMessage(writes) * PRICES.dynamoWriteUnit.usd + perMessage(reads) * PRICES.dynamoReadUnit.usd),
    secretsManager: 1000 * secretsCalls * PRICES.secretsManagerCall.usd,
    'agentcore:vcpu': (1000 * vcpuSeconds * PRICES.agentcoreVcpuHour.usd) / 3600,
    'agentcore:memoryActive': 1000 * gbHour(activeSessionSeconds),
    'agentcore:memoryIdle': 1000 * gbHour(sessionSeconds - activeSessionSeconds),
    bedrock: 1000 * (a.inputTokens * a.model.input.usd + a.outputTokens * a.model.output.usd),
  };
  const total = Object.values(per1000).reduce((sum, x) => sum + x, 0);
  const verificationGbSeconds = readers.reduce((sum, name) => sum + gbSeconds[name], 0);
  return {
    settings,
    per1000,
    total,
    usage: {
      polls: perMessage(polls),
      sqsRequests: perMessage(sqs),
      dynamoWrites: perMessage(writes),
      dynamoReads: perMessage(reads),
      lambdaGbSeconds: gbSeconds,
      lambdaInvocations: invocations,
      verificationGbSeconds,
      secretsCalls,
      vcpuSeconds,
      sessionSeconds,
      activeSessionSeconds,
      coldStartsPer1000,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// What each setting changes

export type SettingRow = { group: string; label: string; result: CostResult; isDefault: boolean };

const stopLabel = (s: CostSettings) =>
  s.stop.kind === 'at-once' ? 'StopRuntimeSession at once' : s.stop.kind === 'after' ? `StopRuntimeSession after ${formatDuration(s.stop.seconds)} quiet` : `idle timeout ${formatDuration(s.idleTimeoutSeconds)}`;

export function formatDuration(seconds: number): string {
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** The idle-session policies compared for issue 28 item 4 (AgentCore design). */
export function sessionPolicies(base: CostSettings = DEFAULT_SETTINGS): CostSettings[] {
  return [
    { ...base, idleTimeoutSeconds: 900, stop: { kind: 'idle' } },
    { ...base, idleTimeoutSeconds: base.idleTimeoutSeconds, stop: { kind: 'idle' } },
    { ...base, idleTimeoutSeconds: 120, stop: { kind: 'idle' } },
    { ...base, idleTimeoutSeconds: 60, stop: { kind: 'idle' } },
    { ...base, stop: { kind: 'after', seconds: 120 } },
    { ...base, stop: { kind: 'after', seconds: 30 } },
    { ...base, stop: { kind: 'at-once' } },
  ];
}

export function settingRows(inputs: CostInputs): SettingRow[] {
  const rows: SettingRow[] = [];
  const add = (group: string, label: string, settings: CostSettings) => {
    const isDefault = JSON.stringify(settings) === JSON.stringify(DEFAULT_SETTINGS);
    rows.push({ group, label, result: priceSetting(settings, inputs), isDefault });
  };
  for (const s of sessionPolicies()) add('AgentCore session end', stopLabel(s), s);
  for (const hold of [0, 30, 120]) add('streaming hold', `STREAM_HOLD_S=${hold}`, { ...DEFAULT_SETTINGS, streamHoldSeconds: hold });
  for (const delay of [1, 2, 3]) add('poll delay, streamed answers', `STREAM_POLL_DELAY_S=${delay}`, { ...DEFAULT_SETTINGS, streamPollDelaySeconds: delay });
  const quiet = { ...DEFAULT_SETTINGS, streamed: false };
  for (const [first, factor] of [[1, 2], [2, 2], [5, 2], [2, 1.5], [2, 3]] as const) {
    add('poll delay, answers that do not stream', `POLL_FIRST_DELAY_S=${first}, POLL_BACKOFF_FACTOR=${factor}`, { ...quiet, poll: { ...quiet.poll, firstDelaySeconds: first, factor } });
  }
  return rows;
}

export type Recommendation = { settings: CostSettings; label: string; reason: string; saving: number; extraColdStarts: number };

/**
 * The idle-session default: the cheapest policy whose cold starts stay within 1 per 100 messages
 * of the fewest any policy gets — a cold start is a slower answer the user sees, a dollar saved
 * is not, so only savings that cost (almost) no warm follow-ups count.
 */
export function recommendSessionEnd(inputs: CostInputs): Recommendation {
  const results = sessionPolicies().map((s) => ({ s, r: priceSetting(s, inputs) }));
  const fewest = Math.min(...results.map((x) => x.r.usage.coldStartsPer1000));
  const current = results.find((x) => JSON.stringify(x.s) === JSON.stringify(DEFAULT_SETTINGS))!;
  const eligible = results.filter((x) => x.r.usage.coldStartsPer1000 <= fewest + 10);
  const best = eligible.reduce((a, b) => (b.r.total < a.r.total - 1e-12 ? b : a));
  const atOnce = results.find((x) => x.s.stop.kind === 'at-once')!;
  const label = stopLabel(best.s);
  const saving = current.r.total - best.r.total;
  const extraColdStarts = best.r.usage.coldStartsPer1000 - fewest;
  const idleShare = (best.r.per1000['agentcore:memoryIdle'] / best.r.total) * 100;
  const reason =
    `${label}, no StopRuntimeSession: the cheapest policy whose cold starts stay within 10 per 1,000 messages of the fewest any policy gets ` +
    `(${plain(best.r.usage.coldStartsPer1000)} against ${plain(fewest)}), ${money(best.r.total)} per 1,000 messages, its idle memory ${plain(Math.round(idleShare * 10) / 10)} % of that. ` +
    `Stopping at once would save ${money(best.r.total - atOnce.r.total)} more per 1,000 messages but make ${plain(atOnce.r.usage.coldStartsPer1000 - fewest)} more of every 1,000 messages wait for a cold start; ` +
    `a Stop after N quiet minutes is the idle timeout N plus a check per answer, so the idle timeout is the setting to shorten.`;
  return { settings: best.s, label, reason, saving, extraColdStarts };
}

// ---------------------------------------------------------------------------------------------
// Fixed monthly costs

export type FixedItem = { name: string; monthly: number; how: string };

/** What a deployment bills each month whatever the traffic (not in the per-1,000 figures). */
export function fixedMonthly(): FixedItem[] {
  return [
    { name: 'Secrets Manager: 2 secrets', monthly: 2 * PRICES.secretsManagerSecretMonth.usd, how: 'signing secret and bot token' },
    { name: 'WAF web ACL + 2 rules', monthly: 5 + 2 * 1, how: '$5 a web ACL, $1 a rule (https://aws.amazon.com/waf/pricing/); off with -c waf=false' },
  ];
}

export const GOVERNED_ENDPOINTS = ['SQS', 'Secrets Manager', 'CloudWatch Logs', 'Bedrock runtime', 'AgentCore'] as const;
export const GOVERNED_AZS = 2;

export type GovernedCost = { fixed: FixedItem[]; fixedMonthly: number; per1000: FixedItem[]; per1000Total: number };

/**
 * Strict governance (issue 29): one NAT gateway (its hours, its Elastic IP, the Slack traffic
 * it carries), interface endpoints for five services in two AZs (DynamoDB's gateway endpoint is
 * free), one customer-managed KMS key. KMS requests per 1,000 messages are an upper bound: one per
 * SQS request and DynamoDB request, as if no data key were ever reused (SQS reuses one for 5
 * minutes by default, DynamoDB caches its table key), so the real figure is far lower.
 */
export function governedCost(base: CostResult, a: Assumptions): GovernedCost {
  const hours = 730;
  const fixed: FixedItem[] = [
    { name: 'NAT gateway', monthly: hours * PRICES.natGatewayHour.usd, how: `1 × ${hours} h × $${PRICES.natGatewayHour.usd}` },
    { name: 'its public IPv4 address', monthly: hours * PRICES.publicIpv4Hour.usd, how: `${hours} h × $${PRICES.publicIpv4Hour.usd}` },
    {
      name: `interface endpoints (${GOVERNED_ENDPOINTS.join(', ')})`,
      monthly: GOVERNED_ENDPOINTS.length * GOVERNED_AZS * hours * PRICES.interfaceEndpointAzHour.usd,
      how: `${GOVERNED_ENDPOINTS.length} × ${GOVERNED_AZS} AZs × ${hours} h × $${PRICES.interfaceEndpointAzHour.usd}`,
    },
    { name: 'DynamoDB gateway endpoint', monthly: 0, how: 'free' },
    { name: 'customer-managed KMS key', monthly: PRICES.kmsKeyMonth.usd, how: `1 key × $${PRICES.kmsKeyMonth.usd}` },
  ];
  const kmsRequests = base.usage.sqsRequests + base.usage.dynamoWrites + base.usage.dynamoReads;
  const per1000: FixedItem[] = [
    { name: 'NAT data processed', monthly: (1000 * a.slackBytesPerMessage * PRICES.natGatewayGb.usd) / 1e9, how: `${a.slackBytesPerMessage / 1000} KB of Slack API traffic a message` },
    { name: 'endpoint data processed', monthly: (1000 * a.endpointBytesPerMessage * PRICES.interfaceEndpointGb.usd) / 1e9, how: `${a.endpointBytesPerMessage / 1000} KB a message` },
    { name: 'KMS requests (upper bound)', monthly: 1000 * kmsRequests * PRICES.kmsRequest.usd, how: `${plain(kmsRequests)} a message, no data key reused` },
  ];
  const sum = (items: FixedItem[]) => items.reduce((s, i) => s + i.monthly, 0);
  return { fixed, fixedMonthly: sum(fixed), per1000, per1000Total: sum(per1000) };
}

// ---------------------------------------------------------------------------------------------
// The report

export function money(usd: number): string {
  if (usd === 0) return '$0';
  const abs = Math.abs(usd);
  const digits = abs >= 100 ? 2 : abs >= 1 ? 3 : abs >= 0.01 ? 4 : 5;
  const fixed = usd.toFixed(digits);
  return `${fixed.startsWith('-') ? '−' : ''}$${fixed.replace('-', '')}`;
}

function plain(x: number): string {
  if (Number.isInteger(x)) return x.toLocaleString('en-US');
  const abs = Math.abs(x);
  return x.toLocaleString('en-US', { maximumFractionDigits: abs >= 100 ? 0 : abs >= 10 ? 1 : 2 });
}

const share = (part: number, total: number) => (part > 0 && part / total < 0.001 ? '< 0.1 %' : `${plain(Math.round((1000 * part) / total) / 10)} %`);

/** A per-1,000-token price as listed ($0.00006, not 6.000000000000001e-5). */
const listed = (perToken: number) => `$${Number((perToken * 1000).toPrecision(6))}`;

/** GUARDRAIL=bedrock's ApplyGuardrail per direction, beside the task's own cost (tools/guardrail-cost.ts). */
function guardrailLines(a: Assumptions, base: CostResult, md: boolean): string[] {
  const rows = guardrailCostRows(a.outputTokens);
  const total = rows.reduce((sum, row) => sum + row.per1000, 0);
  const price = `$${(PRICES.guardrailPiiTextUnit.usd * 1000).toFixed(2)} per 1,000 text units (${PRICES.guardrailPiiTextUnit.source}, read ${PRICES.guardrailPiiTextUnit.checked})`;
  return [
    `GUARDRAIL=bedrock (off by default), per 1,000 messages: ApplyGuardrail's sensitive-information filter at ${price}:`,
    '',
    ...table(
      ['direction', 'what is checked, per message', 'text units', 'per 1,000 messages', 'vs the task (AgentCore)'],
      [...rows.map((row) => [row.direction, row.what, plain(row.units), money(row.per1000), share(row.per1000, base.total)]), ['both', 'total', plain(rows.reduce((sum, row) => sum + row.units, 0)), money(total), share(total, base.total)]],
      md,
      2,
    ),
    '',
  ];
}

function table(header: string[], rows: string[][], markdown: boolean, alignLeft = 1): string[] {
  if (markdown) {
    return [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < alignLeft ? ' --- ' : ' ---: ')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => r.map((c, i) => (i < alignLeft ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

export type CostReport = {
  designs: Record<Design, CostResult>;
  settings: SettingRow[];
  models: Array<{ model: ModelPrice; result: CostResult }>;
  recommendation: Recommendation;
  governed: GovernedCost;
};

export function runCostModel(inputs: CostInputs): CostReport {
  const messages = inputs.messages ?? generateTrace(inputs.params).messages;
  const withTrace = { ...inputs, messages };
  const designs = Object.fromEntries(DESIGNS.map((design) => [design, priceSetting({ ...DEFAULT_SETTINGS, design }, withTrace)])) as Record<Design, CostResult>;
  return {
    designs,
    settings: settingRows(withTrace),
    models: BEDROCK_MODELS.map((model) => ({ model, result: priceSetting(DEFAULT_SETTINGS, { ...withTrace, assumptions: { ...inputs.assumptions, model } }) })),
    recommendation: recommendSessionEnd(withTrace),
    governed: governedCost(designs.agentcore, inputs.assumptions),
  };
}

function usageOf(item: LineItem, r: CostResult, a: Assumptions): string {
  const u = r.usage;
  const fn = (name: LambdaName) => `${plain(u.lambdaInvocations[name])} × ${LAMBDA_MEMORY_MB[name]} MB, ${plain(u.lambdaGbSeconds[name])} GB-s`;
  switch (item) {
    case 'lambda:slackEvents':
      return fn('slackEvents');
    case 'lambda:agentInvoker':
      return fn('agentInvoker');
    case 'lambda:asyncResult':
      return `${plain(u.polls)} polls × ${LAMBDA_MEMORY_MB.asyncResult} MB, ${plain(u.lambdaGbSeconds.asyncResult)} GB-s`;
    case 'lambda:slackPoster':
      return fn('slackPoster');
    case 'lambda:execution':
      return '— (AgentCore design)';
    case 'apiGateway':
      return `${plain(a.eventsPerMessage)} REST request, inspected by WAF`;
    case 'sqs':
      return `${plain(u.sqsRequests)} requests (task, polls, reply: send, receive, delete)`;
    case 'dynamodb':
      return `${plain(u.dynamoWrites)} write units, ${plain(u.dynamoReads)} read units`;
    case 'secretsManager':
      return `${plain(u.secretsCalls)} GetSecretValue (cached 5 min an instance)`;
    case 'agentcore:vcpu':
      return `${plain(u.vcpuSeconds)} vCPU-s (only while computing)`;
    case 'agentcore:memoryActive':
      return `${plain(u.activeSessionSeconds)} s × ${a.agentcoreMemoryGb} GB`;
    case 'agentcore:memoryIdle':
      return `${plain(u.sessionSeconds - u.activeSessionSeconds)} s × ${a.agentcoreMemoryGb} GB (idle until the session ends)`;
    case 'bedrock':
      return `${plain(a.inputTokens)} in + ${plain(a.outputTokens)} out tokens, ${a.model.name}`;
  }
}

export function assumptionLines(inputs: CostInputs): string[] {
  const { params: p, assumptions: a } = inputs;
  const s = DEFAULT_SETTINGS;
  const messagesPerMinute = p.threadsPerMinute / (1 - p.followUp);
  return [
    `Cost per 1,000 messages (US$, ${'us-east-1'} list prices of tools/prices.ts, no free tier), the session model's trace: ${plain(messagesPerMinute)} messages/min, ` +
      `follow-up probability ${p.followUp}, think time mean ${p.think.mean} s (${p.think.kind}), answer time mean ${p.answer.mean} s (${p.answer.kind}), seed ${p.seed}.`,
    `Per message: ${plain(a.inputTokens)} input and ${plain(a.outputTokens)} output tokens (${a.model.name}, the default model); text flows from ${a.firstTextSeconds} s into the task; ` +
      `one Slack event; AgentCore session peak memory ${a.agentcoreMemoryGb} GB, ${a.vcpuSecondsPerRequest} vCPU-s a request, ${a.vcpuWhileAnswering} vCPU while answering, ${a.vcpuSecondsPerColdStart} vCPU-s a cold start.`,
    `Defaults: one session per conversation, idle timeout ${formatDuration(s.idleTimeoutSeconds)}; SYNC_BUDGET_MS ${s.syncBudgetSeconds * 1000}; STREAM_HOLD_S ${s.streamHoldSeconds}; ` +
      `STREAM_POLL_DELAY_S ${s.streamPollDelaySeconds}; POLL_FIRST_DELAY_S ${s.poll.firstDelaySeconds}, POLL_BACKOFF_FACTOR ${s.poll.factor}; Lambda arm64 at the memory CDK deploys.`,
  ];
}

export function renderCostReport(report: CostReport, inputs: CostInputs, options: { markdown?: boolean; governed?: boolean } = {}): string {
  const md = options.markdown ?? false;
  const a = inputs.assumptions;
  const base = report.designs.agentcore;
  const lines: string[] = [...assumptionLines(inputs), ''];

  lines.push('Where the money goes, per 1,000 messages:', '');
  const rows = LINE_ITEMS.map(({ item, name }) => [name, usageOf(item, base, a), ...DESIGNS.map((d) => money(report.designs[d].per1000[item])), share(base.per1000[item], base.total)]);
  rows.push(['total', '', ...DESIGNS.map((d) => money(report.designs[d].total)), '100 %']);
  const infra = (r: CostResult) => r.total - r.per1000.bedrock;
  rows.push(['total without Bedrock', '', ...DESIGNS.map((d) => money(infra(report.designs[d]))), share(infra(base), base.total)]);
  lines.push(...table(['item', 'per message (AgentCore design)', ...DESIGNS.map((d) => DESIGN_NAMES[d]), 'share (AgentCore)'], rows, md, 2), '');

  lines.push('The model, per 1,000 messages (AgentCore design, defaults):', '');
  lines.push(
    ...table(
      ['model', 'input / output per 1,000 tokens', 'Bedrock', 'total', 'Bedrock share'],
      report.models.map(({ model, result }) => [model.name, `${listed(model.input.usd)} / ${listed(model.output.usd)}`, money(result.per1000.bedrock), money(result.total), share(result.per1000.bedrock, result.total)]),
      md,
      2,
    ),
    '',
  );

  lines.push(...guardrailLines(a, base, md));

  lines.push('What each setting changes (AgentCore design, the other settings at their defaults):', '');
  const reference = (group: string) => report.settings.find((r) => r.group === group && (r.isDefault || (group.includes('do not stream') && r.label === 'POLL_FIRST_DELAY_S=2, POLL_BACKOFF_FACTOR=2')))!;
  lines.push(
    ...table(
      ['setting', 'value', 'session-s / msg', 'cold starts / 1,000', 'polls / msg', 'verification GB-s / msg', 'AgentCore', 'total', 'vs default'],
      report.settings.map((row) => {
        const r = row.result;
        const ref = reference(row.group).result;
        const agentcore = r.per1000['agentcore:vcpu'] + r.per1000['agentcore:memoryActive'] + r.per1000['agentcore:memoryIdle'];
        return [
          row.group,
          row.isDefault ? `**${row.label} (default)**` : row.label,
          plain(r.usage.sessionSeconds),
          plain(r.usage.coldStartsPer1000),
          plain(r.usage.polls),
          plain(r.usage.verificationGbSeconds),
          money(agentcore),
          money(r.total),
          row === reference(row.group) ? '—' : money(r.total - ref.total),
        ];
      }),
      md,
      2,
    ),
    '',
  );
  lines.push(`Recommended session end: ${report.recommendation.reason}`);
  const fixed = fixedMonthly();
  lines.push('', `Not in the figures: fixed monthly ${fixed.map((f) => `${f.name} ${money(f.monthly)}`).join('; ')}; CloudWatch, data transfer out, free tiers, the SQS event sources' empty receives.`);

  if (options.governed) {
    const g = report.governed;
    lines.push('', 'Governed account (strict governance, issue 29): what it adds each month, whatever the traffic:', '');
    const fixedRows = g.fixed.map((f) => [f.name, f.how, money(f.monthly)]);
    fixedRows.push(['total a month', '', money(g.fixedMonthly)]);
    lines.push(...table(['item', 'how', 'per month'], fixedRows, md, 2), '');
    const perRows = g.per1000.map((f) => [f.name, f.how, money(f.monthly)]);
    perRows.push(['total per 1,000 messages', '', money(g.per1000Total)]);
    lines.push(...table(['item', 'how', 'per 1,000 messages'], perRows, md, 2));
  }
  return lines.join('\n');
}
