import { scanFlags } from './cli-flags';
import { formatNumber } from './format-number';

/**
 * `npm run model` (issue 16): how many AgentCore runtime sessions a workspace keeps live, under
 * the two session policies, and at what message rate it reaches the account's limit on active
 * sessions.
 *
 * A seeded, discrete-event replay. One arrival process of Slack threads is drawn first:
 *
 *   threads      start as a Poisson process (--rate new threads per minute)
 *   messages     a thread's first message, then after each answer another follow-up with
 *                probability --follow-up (so a thread has 1 / (1 − p) messages on average)
 *   answer time  from a message until the poll that finds its task done (cold start included):
 *                the session's last request for that message
 *   think time   from an answer to the user's follow-up
 *
 * The same trace then goes through both policies, each with every idle timeout:
 *
 *   per message       the session key is the message (today: runtimeSessionId from the request id)
 *   per conversation  the session key is the thread (team + channel + thread)
 *
 * A session starts (a cold start) at a request whose key has no live session. It stays live while a
 * task of it runs (its polls are requests) and until the idle timeout after its last request, and
 * never past maxLifetime; a task still running when its session reaches maxLifetime opens a new one
 * with its next poll. Threads never share a session. AgentCore's refusals past the limit are not
 * modelled: the figures are the demand.
 *
 * Measured over the window after the warm-up: peak and time-weighted mean live sessions, cold
 * starts per 1,000 messages, session-seconds per message (Little's law: mean live sessions =
 * message rate × session-seconds per message), and two rates at which the limit is reached:
 *   at limit (peak)  the message rate at which the run's peak reaches the limit, by bisection over
 *                    the thread rate with the same seed (common random numbers), to 0.5 %
 *   at limit (mean)  Little's law: limit / session-seconds per message (the mean reaches the limit;
 *                    the model is linear in the rate, since threads are independent)
 *
 *   npm run model -- [--rate 30] [--follow-up 0.5] [--think 60] [--answer 10] [--idle 60,300,900] …
 *   npm run model -- --help
 */

// ---------------------------------------------------------------------------------------------
// Parameters

export type DistributionKind = 'exponential' | 'lognormal' | 'fixed';

/** A positive random duration in seconds; `sigma` is the lognormal's shape (σ of its log). */
export type Distribution = { kind: DistributionKind; mean: number; sigma: number };

export type Policy = 'per-message' | 'per-conversation';
export const POLICIES: readonly Policy[] = ['per-message', 'per-conversation'];

export type ModelParams = {
  /** New threads per minute. */
  threadsPerMinute: number;
  /** After each answer, the probability of one more follow-up in the thread. */
  followUp: number;
  think: Distribution;
  answer: Distribution;
  /** Simulated time, warm-up included. */
  durationSeconds: number;
  /** Not measured: sessions of the first minutes have no history yet. */
  warmUpSeconds: number;
  idleSeconds: number[];
  maxLifetimeSeconds: number;
  /** Active session workloads per account (a Region quota). */
  limit: number;
  seed: number;
  /** Bisect the rate at which the peak reaches the limit (else only Little's law). */
  search: boolean;
};

export const DEFAULT_PARAMS: ModelParams = {
  threadsPerMinute: 30,
  followUp: 0.5,
  think: { kind: 'exponential', mean: 60, sigma: 1 },
  answer: { kind: 'lognormal', mean: 10, sigma: 1 },
  durationSeconds: 2 * 3600,
  warmUpSeconds: 30 * 60,
  idleSeconds: [60, 300, 900],
  maxLifetimeSeconds: 28_800,
  limit: 500,
  seed: 1,
  search: true,
};

/** AgentCore's bounds for idleRuntimeSessionTimeout and maxLifetime. */
export const AGENTCORE_SECONDS = { min: 60, max: 28_800 };

export function validateParams(p: ModelParams): void {
  const fail = (message: string): never => {
    throw new RangeError(message);
  };
  if (!(p.threadsPerMinute > 0 && Number.isFinite(p.threadsPerMinute))) fail(`--rate must be > 0 (new threads per minute), got ${p.threadsPerMinute}`);
  if (!(p.followUp >= 0 && p.followUp < 1)) fail(`--follow-up must be within [0, 1), got ${p.followUp}`);
  for (const [name, d] of [['think', p.think], ['answer', p.answer]] as const) {
    if (!(d.mean > 0 && Number.isFinite(d.mean))) fail(`--${name} must be a mean > 0 s, got ${d.mean}`);
    if (d.kind === 'lognormal' && !(d.sigma > 0 && Number.isFinite(d.sigma))) fail(`--${name}-sigma must be > 0, got ${d.sigma}`);
  }
  if (!(p.durationSeconds > 0 && Number.isFinite(p.durationSeconds))) fail(`--duration must be > 0, got ${p.durationSeconds}`);
  if (!(p.warmUpSeconds >= 0 && p.warmUpSeconds < p.durationSeconds)) fail(`--warm-up must be ≥ 0 and shorter than --duration, got ${p.warmUpSeconds}`);
  if (p.idleSeconds.length === 0) fail('--idle needs at least one idle timeout');
  for (const idle of p.idleSeconds) if (!(idle > 0 && Number.isFinite(idle))) fail(`--idle: every timeout must be > 0 s, got ${idle}`);
  if (!(p.maxLifetimeSeconds > 0)) fail(`--max-lifetime must be > 0, got ${p.maxLifetimeSeconds}`);
  if (!(Number.isInteger(p.limit) && p.limit >= 1)) fail(`--limit must be a whole number ≥ 1, got ${p.limit}`);
  if (!Number.isInteger(p.seed)) fail(`--seed must be a whole number, got ${p.seed}`);
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness

export type Random = () => number;

/** mulberry32: the same sequence for the same seed on every machine; uniform in [0, 1). */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A stream of its own per (seed, stream): thread i draws the same times whatever the rate. */
export function streamSeed(seed: number, stream: number): number {
  // murmur3's finalizer over the pair.
  let h = (seed ^ Math.imul(stream + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export function sample(d: Distribution, random: Random): number {
  switch (d.kind) {
    case 'fixed':
      return d.mean;
    case 'exponential':
      return -d.mean * Math.log(1 - random());
    case 'lognormal': {
      // Box–Muller; μ so that the mean is d.mean.
      const u = 1 - random();
      const v = random();
      const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
      return Math.exp(Math.log(d.mean) - (d.sigma * d.sigma) / 2 + d.sigma * z);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The trace: threads and their messages

export type Message = {
  thread: number;
  /** 0 for the thread's first message, then 1, 2 … for its follow-ups. */
  turn: number;
  /** Seconds since the start of the run. */
  arrival: number;
  /** When the poll that finds its task done reaches the session: its last request. */
  done: number;
};

/** The messages, thread by thread, each thread's in order. */
export type Trace = { threads: number; messages: Message[] };

export type TraceParams = Pick<ModelParams, 'threadsPerMinute' | 'followUp' | 'think' | 'answer' | 'durationSeconds' | 'seed'>;

/** Every message that arrives before the end of the run (follow-ups past it are left out). */
export function generateTrace(p: TraceParams): Trace {
  const arrivals = seededRandom(p.seed);
  const perSecond = p.threadsPerMinute / 60;
  const messages: Message[] = [];
  let threads = 0;
  // Unit-rate gaps scaled by the rate: a faster run is the same draws, closer together.
  for (let start = -Math.log(1 - arrivals()) / perSecond; start < p.durationSeconds; start += -Math.log(1 - arrivals()) / perSecond) {
    const thread = threads++;
    const random = seededRandom(streamSeed(p.seed, thread));
    let arrival = start;
    for (let turn = 0; arrival < p.durationSeconds; turn += 1) {
      const done = arrival + sample(p.answer, random);
      messages.push({ thread, turn, arrival, done });
      if (!(random() < p.followUp)) break;
      arrival = done + sample(p.think, random);
    }
  }
  return { threads, messages };
}

// ---------------------------------------------------------------------------------------------
// Sessions

/** A session live over [start, end); its start is a cold start. */
export type Session = { key: number; start: number; end: number };

/**
 * The sessions a policy opens for the trace (its messages thread by thread, each thread's in arrival
 * order, as generateTrace gives them). Each key's requests are handled in order: a message
 * arriving while its key's session is live joins it (warm), otherwise it starts one (cold).
 */
export function sessionsOf(messages: readonly Message[], policy: Policy, idleSeconds: number, maxLifetimeSeconds = Infinity): Session[] {
  const sessions: Session[] = [];
  const seen = new Set<number>();
  let key = -1;
  let open = false;
  let start = 0;
  let busy = 0;

  /** Closes what has ended before `t` (Infinity: everything), following maxLifetime cuts. */
  const settle = (t: number) => {
    while (open) {
      const idleEnd = busy + idleSeconds;
      const lifeEnd = start + maxLifetimeSeconds;
      if (idleEnd <= lifeEnd) {
        if (t < idleEnd) return;
        sessions.push({ key, start, end: idleEnd });
        open = false;
        return;
      }
      if (t < lifeEnd) return;
      sessions.push({ key, start, end: lifeEnd });
      // A task still running: its next poll opens a new session at once.
      if (busy > lifeEnd) start = lifeEnd;
      else open = false;
    }
  };

  for (let i = 0; i < messages.length; i += 1) {
    const m = messages[i]!;
    const next = policy === 'per-message' ? i : m.thread;
    if (next !== key) {
      settle(Infinity);
      if (seen.has(next)) throw new RangeError(`the messages of thread ${m.thread} are not together: give them thread by thread`);
      seen.add(next);
      key = next;
    } else {
      if (m.arrival < messages[i - 1]!.arrival) throw new RangeError(`thread ${m.thread}: its messages must be in arrival order`);
      settle(m.arrival);
    }
    if (open) {
      busy = Math.max(busy, m.done);
    } else {
      open = true;
      start = m.arrival;
      busy = m.done;
    }
  }
  settle(Infinity);
  return sessions;
}

/** Live sessions at time t. */
export function liveAt(sessions: readonly Session[], t: number): number {
  let live = 0;
  for (const s of sessions) if (s.start <= t && t < s.end) live += 1;
  return live;
}

export type Figures = {
  peak: number;
  /** Time-weighted over the window. */
  mean: number;
  /** Messages that arrived in the window. */
  messages: number;
  /** Sessions started in the window. */
  coldStarts: number;
  coldStartsPer1000: number;
  /** Session-seconds in the window per message in it: Little's W. */
  sessionSecondsPerMessage: number;
};

/** Figures over the window [from, to). */
export function measure(sessions: readonly Session[], messages: readonly Message[], from: number, to: number): Figures {
  const starts = new Float64Array(sessions.length);
  const ends = new Float64Array(sessions.length);
  let coldStarts = 0;
  sessions.forEach((s, i) => {
    starts[i] = s.start;
    ends[i] = s.end;
    if (s.start >= from && s.start < to) coldStarts += 1;
  });
  starts.sort();
  ends.sort();
  let i = 0;
  let j = 0;
  let live = 0;
  // Live at `from`: started at or before it, not yet ended.
  while (i < starts.length && starts[i]! <= from) (live += 1), (i += 1);
  while (j < ends.length && ends[j]! <= from) (live -= 1), (j += 1);
  let peak = live;
  let area = 0;
  let t = from;
  for (;;) {
    const nextStart = i < starts.length ? starts[i]! : Infinity;
    const nextEnd = j < ends.length ? ends[j]! : Infinity;
    const at = Math.min(nextStart, nextEnd);
    if (at >= to) break;
    area += live * (at - t);
    t = at;
    // Half-open intervals: an end and a start at the same instant do not overlap.
    if (nextEnd <= nextStart) (live -= 1), (j += 1);
    else {
      live += 1;
      i += 1;
      if (live > peak) peak = live;
    }
  }
  area += live * (to - t);
  let count = 0;
  for (const m of messages) if (m.arrival >= from && m.arrival < to) count += 1;
  return {
    peak,
    mean: area / (to - from),
    messages: count,
    coldStarts,
    coldStartsPer1000: count === 0 ? 0 : (1000 * coldStarts) / count,
    sessionSecondsPerMessage: count === 0 ? 0 : area / count,
  };
}

// ---------------------------------------------------------------------------------------------
// The model

export type Row = Figures & {
  policy: Policy;
  idleSeconds: number;
  /** Messages per minute at which the peak reaches the limit (bisection), when searched. */
  limitRatePeak?: number;
  /** Messages per minute at which the mean reaches the limit (Little's law). */
  limitRateMean: number;
};

export type ModelResult = {
  params: ModelParams;
  threads: number;
  /** Messages per minute in the measured window. */
  measuredMessagesPerMinute: number;
  /** threads per minute / (1 − p). */
  expectedMessagesPerMinute: number;
  rows: Row[];
};

const messagesPerThread = (p: Pick<ModelParams, 'followUp'>) => 1 / (1 - p.followUp);

function figuresAt(params: ModelParams, threadsPerMinute: number, policy: Policy, idleSeconds: number): Figures {
  const trace = generateTrace({ ...params, threadsPerMinute });
  const sessions = sessionsOf(trace.messages, policy, idleSeconds, params.maxLifetimeSeconds);
  return measure(sessions, trace.messages, params.warmUpSeconds, params.durationSeconds);
}

/**
 * Messages per minute at which the run's peak reaches the limit: bisection over the thread rate,
 * the same seed at every rate, until the bracket is within 0.5 %; the answer is the bracket's top
 * (the lowest rate tried whose peak reached the limit). `guess`: a thread rate near the answer.
 */
export function rateAtLimit(params: ModelParams, policy: Policy, idleSeconds: number, guess: number): number {
  const reaches = (threadsPerMinute: number) => figuresAt(params, threadsPerMinute, policy, idleSeconds).peak >= params.limit;
  let hi = guess;
  for (let tries = 0; !reaches(hi); tries += 1) {
    if (tries > 40) return Infinity;
    hi *= 1.5;
  }
  let lo = hi / 1.5;
  for (let tries = 0; reaches(lo); tries += 1) {
    hi = lo;
    if (tries > 40) return hi * messagesPerThread(params);
    lo /= 1.5;
  }
  while ((hi - lo) / hi > 0.005) {
    const mid = (lo + hi) / 2;
    if (reaches(mid)) hi = mid;
    else lo = mid;
  }
  return hi * messagesPerThread(params);
}

export function runModel(params: ModelParams): ModelResult {
  validateParams(params);
  const trace = generateTrace(params);
  const windowMinutes = (params.durationSeconds - params.warmUpSeconds) / 60;
  const rows: Row[] = [];
  let measured = 0;
  for (const policy of POLICIES) {
    for (const idleSeconds of params.idleSeconds) {
      const figures = measure(sessionsOf(trace.messages, policy, idleSeconds, params.maxLifetimeSeconds), trace.messages, params.warmUpSeconds, params.durationSeconds);
      measured = figures.messages;
      const limitRateMean = figures.sessionSecondsPerMessage > 0 ? (params.limit / figures.sessionSecondsPerMessage) * 60 : Infinity;
      const row: Row = { policy, idleSeconds, ...figures, limitRateMean };
      if (params.search && Number.isFinite(limitRateMean)) {
        row.limitRatePeak = rateAtLimit(params, policy, idleSeconds, limitRateMean / messagesPerThread(params));
      }
      rows.push(row);
    }
  }
  return {
    params,
    threads: trace.threads,
    measuredMessagesPerMinute: measured / windowMinutes,
    expectedMessagesPerMinute: params.threadsPerMinute * messagesPerThread(params),
    rows,
  };
}

// ---------------------------------------------------------------------------------------------
// The table

export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return String(seconds);
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${Number.isInteger(seconds) ? seconds : formatNumber(seconds)} s`;
}

const plain = (value: number) => (Number.isInteger(value) ? value.toLocaleString('en-US') : formatNumber(value));

function describe(d: Distribution): string {
  if (d.kind === 'fixed') return `fixed ${formatSeconds(d.mean)}`;
  if (d.kind === 'lognormal') return `lognormal, mean ${formatSeconds(d.mean)} (σ ${d.sigma}, median ${formatNumber(d.mean * Math.exp((-d.sigma * d.sigma) / 2))} s)`;
  return `exponential, mean ${formatSeconds(d.mean)}`;
}

const rate = (perMinute: number | undefined) => (perMinute === undefined ? '—' : Number.isFinite(perMinute) ? formatNumber(perMinute) : 'never');

export const COLUMNS = [
  'policy',
  'idle timeout',
  'peak live sessions',
  'mean live sessions',
  'cold starts / 1,000 msgs',
  'session-s / msg',
  'msgs/min at limit (peak, search)',
  'msgs/min at limit (mean, Little)',
] as const;

function cells(row: Row): string[] {
  return [
    row.policy,
    formatSeconds(row.idleSeconds),
    plain(row.peak),
    formatNumber(row.mean),
    formatNumber(row.coldStartsPer1000),
    formatNumber(row.sessionSecondsPerMessage),
    rate(row.limitRatePeak),
    rate(row.limitRateMean),
  ];
}

export function renderReport(result: ModelResult, options: { markdown?: boolean } = {}): string {
  const p = result.params;
  const lines: string[] = [];
  const measuredMinutes = (p.durationSeconds - p.warmUpSeconds) / 60;
  const summary = [
    `AgentCore session model — seed ${p.seed}: ${formatSeconds(p.durationSeconds)} simulated, the first ${formatSeconds(p.warmUpSeconds)} warm-up (not measured).`,
    `Arrivals: ${plain(p.threadsPerMinute)} new threads/min; follow-up probability ${p.followUp} → ${plain(result.expectedMessagesPerMinute)} messages/min expected (${formatNumber(result.measuredMessagesPerMinute)} measured over ${plain(measuredMinutes)} min).`,
    `Think time ${describe(p.think)}; answer time ${describe(p.answer)}; max lifetime ${formatSeconds(p.maxLifetimeSeconds)}; account limit ${p.limit} live sessions.`,
  ];
  const notes = [
    `Peak and mean: live sessions (demand; refusals past the limit are not modelled). Session-s / msg: session-seconds per message (Little's W).`,
    p.search
      ? `At limit (peak): the message rate at which the run's peak reaches ${p.limit}, by bisection over the rate with the same seed (to 0.5 %). At limit (mean): Little's law, ${p.limit} ÷ session-s per msg × 60.`
      : `At limit (mean): Little's law, ${p.limit} ÷ session-s per msg × 60 (the search for the peak's rate was skipped: --no-search).`,
  ];
  const table = result.rows.map(cells);
  if (options.markdown) {
    lines.push(...summary, '');
    lines.push(`| ${COLUMNS.join(' | ')} |`);
    lines.push(`|${COLUMNS.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`);
    for (const row of table) lines.push(`| ${row.join(' | ')} |`);
    lines.push('', ...notes);
  } else {
    lines.push(...summary, '');
    const widths = COLUMNS.map((title, i) => Math.max(title.length, ...table.map((row) => row[i]!.length)));
    const format = (row: readonly string[]) => row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
    lines.push(format(COLUMNS), widths.map((w) => '-'.repeat(w)).join('  '));
    for (const row of table) lines.push(format(row));
    lines.push('', ...notes);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The command

export const USAGE = `npm run model -- [options]

A seeded simulation of AgentCore runtime sessions: one arrival process of Slack threads replayed
through two session policies (one session per message, one per conversation), each with every idle
timeout. Durations take s, m or h (plain numbers are seconds).

  --rate <n>             new threads per minute (default ${DEFAULT_PARAMS.threadsPerMinute})
  --follow-up <p>        after each answer, probability of another follow-up, 0 ≤ p < 1 (default ${DEFAULT_PARAMS.followUp})
  --think <duration>     mean think time, answer to follow-up (default ${DEFAULT_PARAMS.think.mean} s)
  --think-dist <kind>    exponential | lognormal | fixed (default ${DEFAULT_PARAMS.think.kind})
  --think-sigma <σ>      lognormal shape of the think time (default ${DEFAULT_PARAMS.think.sigma})
  --answer <duration>    mean answer time, message to the poll that finds it done (default ${DEFAULT_PARAMS.answer.mean} s)
  --answer-dist <kind>   exponential | lognormal | fixed (default ${DEFAULT_PARAMS.answer.kind})
  --answer-sigma <σ>     lognormal shape of the answer time (default ${DEFAULT_PARAMS.answer.sigma})
  --duration <duration>  simulated time, warm-up included (default ${formatSeconds(DEFAULT_PARAMS.durationSeconds)})
  --warm-up <duration>   not measured (default ${formatSeconds(DEFAULT_PARAMS.warmUpSeconds)}; keep it ≥ the longest idle timeout)
  --idle <list>          idle timeouts, comma-separated (default ${DEFAULT_PARAMS.idleSeconds.join(',')}; AgentCore accepts 60–28800 s)
  --max-lifetime <dur>   a session's maxLifetime (default ${DEFAULT_PARAMS.maxLifetimeSeconds} s)
  --limit <n>            active session workloads per account (default ${DEFAULT_PARAMS.limit})
  --seed <n>             the random seed (default ${DEFAULT_PARAMS.seed})
  --no-search            skip the bisection for the peak's limit rate (Little's law only)
  --markdown             print the table as Markdown
  --help                 this text
`;

export type Cli = { params: ModelParams; markdown: boolean; help: boolean; warnings: string[] };

export function parseDuration(raw: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?|\.\d+)\s*(s|m|min|h)?$/.exec(raw.trim());
  if (!match) throw new RangeError(`${flag}: expected a duration such as 90, 90s, 15m or 2h, got ${JSON.stringify(raw)}`);
  const value = Number(match[1]);
  const unit = match[2];
  return unit === 'h' ? value * 3600 : unit === 'm' || unit === 'min' ? value * 60 : value;
}

const BOOLEAN_FLAGS = new Set(['--markdown', '--help', '-h', '--no-search']);
const VALUE_FLAGS = new Set([
  '--rate', '--follow-up', '--think', '--think-dist', '--think-sigma', '--answer', '--answer-dist', '--answer-sigma',
  '--duration', '--warm-up', '--idle', '--max-lifetime', '--limit', '--seed',
]);

export function parseModelArgs(argv: readonly string[]): Cli {
  const { flags, values, rest } = scanFlags(argv, { booleans: BOOLEAN_FLAGS, values: VALUE_FLAGS });
  if (rest.length) throw new RangeError(`unknown argument ${JSON.stringify(rest[0])} (see --help)`);
  const number = (flag: string, fallback: number): number => {
    const raw = values.get(flag);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(parsed)) throw new RangeError(`${flag} must be a number, got ${JSON.stringify(raw)}`);
    return parsed;
  };
  const duration = (flag: string, fallback: number) => (values.has(flag) ? parseDuration(values.get(flag)!, flag) : fallback);
  const kind = (flag: string, fallback: DistributionKind): DistributionKind => {
    const raw = values.get(flag) ?? fallback;
    if (raw === 'exponential' || raw === 'lognormal' || raw === 'fixed') return raw;
    throw new RangeError(`${flag} must be exponential, lognormal or fixed, got ${JSON.stringify(raw)}`);
  };
  const d = DEFAULT_PARAMS;
  const params: ModelParams = {
    threadsPerMinute: number('--rate', d.threadsPerMinute),
    followUp: number('--follow-up', d.followUp),
    think: { kind: kind('--think-dist', d.think.kind), mean: duration('--think', d.think.mean), sigma: number('--think-sigma', d.think.sigma) },
    answer: { kind: kind('--answer-dist', d.answer.kind), mean: duration('--answer', d.answer.mean), sigma: number('--answer-sigma', d.answer.sigma) },
    durationSeconds: duration('--duration', d.durationSeconds),
    warmUpSeconds: duration('--warm-up', d.warmUpSeconds),
    idleSeconds: values.has('--idle')
      ? values.get('--idle')!.split(',').filter((s) => s.trim() !== '').map((s) => parseDuration(s, '--idle'))
      : [...d.idleSeconds],
    maxLifetimeSeconds: duration('--max-lifetime', d.maxLifetimeSeconds),
    limit: number('--limit', d.limit),
    seed: number('--seed', d.seed),
    search: !flags.has('--no-search'),
  };
  const help = flags.has('--help') || flags.has('-h');
  if (!help) validateParams(params);
  const warnings: string[] = [];
  for (const idle of params.idleSeconds) {
    if (idle < AGENTCORE_SECONDS.min || idle > AGENTCORE_SECONDS.max) warnings.push(`idle timeout ${idle} s is outside what AgentCore accepts (60–28800 s)`);
  }
  const longest = Math.max(...params.idleSeconds);
  if (params.warmUpSeconds < longest) warnings.push(`the warm-up (${params.warmUpSeconds} s) is shorter than the longest idle timeout (${longest} s): the first measured minutes are not yet steady`);
  return { params, markdown: flags.has('--markdown'), help, warnings };
}

/** The whole command, without touching the process: its exit code and what it prints. */
export function modelCli(argv: readonly string[]): { code: number; stdout: string; stderr: string } {
  let cli: Cli;
  try {
    cli = parseModelArgs(argv);
  } catch (error) {
    return { code: 2, stdout: '', stderr: `${(error as Error).message}\n\n${USAGE}` };
  }
  if (cli.help) return { code: 0, stdout: USAGE, stderr: '' };
  const result = runModel(cli.params);
  return { code: 0, stdout: `${renderReport(result, { markdown: cli.markdown })}\n`, stderr: cli.warnings.map((w) => `warning: ${w}\n`).join('') };
}

if (require.main === module) {
  const { code, stdout, stderr } = modelCli(process.argv.slice(2));
  process.stderr.write(stderr);
  process.stdout.write(stdout);
  process.exitCode = code;
}
