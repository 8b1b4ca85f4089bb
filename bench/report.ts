import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { join } from 'node:path';
import type { ColdStartResult, Mode } from './cold-start';
import type { EndToEndResult } from './end-to-end';
import { TRANSPORTS } from './end-to-end';
import { CHARS_PER_TOKEN, FUNCTION_MEMORY_GB, HAND_OVER_HOLD_S, LIVE_AGENT_LABELS, LIVE_AGENTS, liveAnswerVerdicts, SIGN_OF_LIFE_TARGET_MS, TARGETS, type AgentFigures, type Distribution, type LiveAgent, type LiveAnswersResult, type LiveTargetName } from './live-answers';
import type { PollCostResult, TaskCost } from './poll-cost';
import type { ProtocolOverheadResult } from './protocol-overhead';
import { FIRST_TEXT_DELAY_TARGET_MS, MASK_TARGET_MS, type GuardrailBenchResult } from './guardrail';
import type { BoundedWaitsResult } from './bounded-waits';
import { RESUME_TARGET_MS, STEP_CARD_TARGET_MS, type StepsQuestionsResult } from './steps-questions';
import { SPLITTER_TARGET_MS, type SplitterResult } from './reply-splitter';
import type { ThroughputResult } from './runtime-throughput';
import { SERVER_KINDS } from './support/throughput-shared';
import { PRICE_REGION, PRICES } from '../tools/prices';
import { formatNumber } from '../tools/format-number';
import { formatBytes, formatRatio, formatSummary, type Summary } from './stats';

/** Writes bench/RESULTS.md: machine, versions, every figure as median (min–max), ratios, PASS/MISS. */

export type BenchResults = {
  quick: boolean;
  startedAt: Date;
  durationSeconds: number;
  loadAverageAtStart: number[];
  coldStart?: ColdStartResult;
  protocol?: ProtocolOverheadResult;
  throughput?: ThroughputResult;
  endToEnd?: EndToEndResult;
  pollCost?: PollCostResult;
  splitter?: SplitterResult;
  liveAnswers?: LiveAnswersResult;
  guardrail?: GuardrailBenchResult;
  boundedWaits?: BoundedWaitsResult;
  stepsQuestions?: StepsQuestionsResult;
  /** Parts that threw, with why. */
  failures: Array<{ part: string; error: string }>;
};

const ROOT = join(__dirname, '..');

const PACKAGES = [
  'esbuild',
  'autocannon',
  'jayson',
  'json-rpc-2.0',
  '@slack/bolt',
  '@slack/web-api',
  'zod',
  '@middy/core',
  '@aws-lambda-powertools/logger',
  '@aws-lambda-powertools/batch',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-bedrock-agentcore',
  '@aws-sdk/client-bedrock-runtime',
  '@aws-sdk/client-secrets-manager',
  'dynalite',
  'tsx',
];

/** The bench's own packages (bench/package.json), installed in bench/node_modules. */
const BENCH_PACKAGES = new Set(Object.keys((JSON.parse(readFileSync(join(ROOT, 'bench', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies));

/**
 * The installed version: a package of the bench's from bench/node_modules, any other from the
 * project's (bench/node_modules also holds the peers' own dependencies, @slack/web-api among them).
 */
export function packageVersion(name: string): string {
  const modules = BENCH_PACKAGES.has(name) ? join(ROOT, 'bench', 'node_modules') : join(ROOT, 'node_modules');
  try {
    return (JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [`| ${headers.map(escape).join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.map(escape).join(' | ')} |`)].join('\n');
}

const verdict = (pass: boolean | undefined) => (pass === undefined ? 'reported (no target)' : pass ? '**PASS**' : '**MISS**');
/** Billed milliseconds are whole numbers. */
const whole = (value: number) => Math.round(value).toLocaleString('en-US');
const signed = (value: number) => `${value >= 0 ? '+' : '−'}${formatNumber(Math.abs(value))}`;
const ms = (summary: Summary | undefined) => (summary ? formatSummary(summary, 'ms') : '—');
const us = (summary: Summary) => formatSummary({ ...summary, median: summary.median / 1000, min: summary.min / 1000, max: summary.max / 1000 }, 'µs');

type Target = { part: string; target: string; measured: string; pass: boolean | undefined };

function targets(results: BenchResults): Target[] {
  const list: Target[] = [];
  const cold = results.coldStart;
  if (cold) {
    const offline = cold.slackEventsVsBolt.offline;
    const loopback = cold.slackEventsVsBolt.loopback;
    list.push({
      part: '1',
      target: 'slack-events load + first answer over bare Node ≤ 0.3× the Bolt handler’s (signed url_verification, no network for either)',
      measured: `${formatRatio(offline)}: ${ms(cold.overBare.offline['slack-events'])} vs Bolt ${ms(cold.overBare.offline.bolt)}`,
      pass: offline.median <= 0.3,
    });
    list.push({
      part: '1',
      target: 'same with a first real event ≤ 0.5× (ours: app_mention with its DynamoDB and SQS calls on loopback; Bolt: app_mention, no-op listener)',
      measured: `${formatRatio(loopback)}: ${ms(cold.overBare.loopback['slack-events'])} vs Bolt ${ms(cold.overBare.loopback.bolt)}`,
      pass: loopback.median <= 0.5,
    });
    const extra = cold.bundles.filter((b) => b.unexpectedClients.length > 0);
    list.push({
      part: '1',
      target: 'no bundle carries an AWS SDK client it never calls',
      measured: extra.length === 0 ? 'every client in every bundle is on a code path of that function' : extra.map((b) => `${b.name}: ${b.unexpectedClients.join(', ')}`).join('; '),
      pass: extra.length === 0,
    });
  }
  const protocol = results.protocol;
  if (protocol) {
    const row = (name: string) => protocol.rows.find((r) => r.name === name)!;
    const request = row('request: build + serialize');
    const response = row('response: parse + validate');
    const roundTrip = row('round trip, sync steps');
    list.push({ part: '2', target: 'build + serialize an execute_task request (1 KiB) < 5 µs', measured: `${us(request.ours)} (bare JSON.stringify ${us(request.bare)})`, pass: request.ours.median < 5000 });
    list.push({ part: '2', target: 'parse + validate its response (1 KiB) < 5 µs', measured: `${us(response.ours)} (bare JSON.parse ${us(response.bare)})`, pass: response.ours.median < 5000 });
    list.push({ part: '2', target: 'round trip ≤ 1.5× bare stringify + parse', measured: formatRatio(roundTrip.ratio), pass: roundTrip.ratio.median <= 1.5 });
  }
  const throughput = results.throughput;
  if (throughput) {
    const bestPeer = (['jayson', 'json-rpc-2.0'] as const).reduce((best, peer) => (throughput.rps[peer].median > throughput.rps[best].median ? peer : best));
    list.push({
      part: '3',
      target: 'runtime req/s ≥ the best peer’s',
      measured: `${formatRatio(throughput.rpsRatio[bestPeer])} of ${bestPeer} (${formatNumber(throughput.rps.ours.median)} vs ${formatNumber(throughput.rps[bestPeer].median)} req/s)`,
      pass: throughput.rpsRatio[bestPeer].median >= 1,
    });
    list.push({
      part: '3',
      target: 'runtime req/s ≥ 0.9× the bare JSON.parse/JSON.stringify floor',
      measured: `${formatRatio(throughput.rpsRatio.bare)} (${formatNumber(throughput.rps.ours.median)} vs ${formatNumber(throughput.rps.bare.median)} req/s)`,
      pass: throughput.rpsRatio.bare.median >= 0.9,
    });
  }
  const e2e = results.endToEnd;
  if (e2e) {
    list.push({
      part: '4',
      target: 'end to end p50 / p99 per transport (no target: reported)',
      measured: TRANSPORTS.map((t) => `${t} ${formatNumber(e2e.reply[t].p50)} / ${formatNumber(e2e.reply[t].p99)} ms`).join('; '),
      pass: undefined,
    });
  }
  const poll = results.pollCost;
  if (poll) {
    for (const cost of poll.measured) {
      list.push({
        part: '5',
        target: `${label(cost.taskSeconds)} task: ≥ 100× fewer billed ms than a function sleeping while it polls every 2 s, whole task, invoker included (it waits ${poll.syncBudgetMs} ms in both designs: a held stream that stays quiet is let go after STREAM_QUIET_S, as a plain call answers \`accepted\` at the sync budget)`,
        measured: `${formatRatio(cost.totalRatio)} (${whole(cost.asyncResult.billedMs)} vs ${whole(cost.sleepingLoop.billedMs)} ms)`,
        pass: cost.totalRatio >= 100,
      });
    }
    for (const cost of poll.measured) {
      list.push({
        part: '5',
        target: `${label(cost.taskSeconds)} task: same, after the task was accepted (where the designs differ)`,
        measured: `${formatRatio(cost.followingRatio)} (${whole(cost.asyncResult.followingBilledMs)} vs ${whole(cost.sleepingLoop.followingBilledMs)} ms)`,
        pass: cost.followingRatio >= 100,
      });
    }
  }
  const splitter = results.splitter;
  if (splitter) {
    for (const row of splitter.rows) {
      list.push({
        part: '6',
        target: `split ${formatNumber(splitter.chars)} characters of ${row.name} < ${SPLITTER_TARGET_MS} ms, chunks correct`,
        measured: row.problem ? `wrong: ${row.problem}` : ms(row.split),
        pass: !row.problem && row.split.median < SPLITTER_TARGET_MS,
      });
    }
  }
  const live = results.liveAnswers;
  if (live) list.push(...liveTargets(live));
  const guard = results.guardrail;
  if (guard) {
    for (const row of guard.rows) {
      list.push({
        part: '8',
        target: `mask ${formatNumber(guard.chars)} characters of ${row.name} < ${MASK_TARGET_MS} ms, no entity left`,
        measured: row.problem ? `wrong: ${row.problem}` : ms(row.mask),
        pass: !row.problem && row.mask.median < MASK_TARGET_MS,
      });
    }
    list.push({
      part: '8',
      target: `first text delay the output masker adds to a ${guard.stream.words}-word streamed answer ≤ ${FIRST_TEXT_DELAY_TARGET_MS} ms p95, nothing shown that masking the whole would hide`,
      measured: `${formatNumber(guard.stream.firstText.p95)} ms p95 (p50 ${formatNumber(guard.stream.firstText.p50)}, max ${formatNumber(guard.stream.firstText.max)}); ${guard.stream.leaked} of ${guard.stream.answers} answers differ`,
      pass: guard.stream.leaked === 0 && guard.stream.firstText.p95 <= FIRST_TEXT_DELAY_TARGET_MS,
    });
    const live = guard.live;
    list.push({
      part: '8',
      target: `the same through the live path (held stream, live reply, @slack/web-api against the fake Slack): added first text delay ≤ ${FIRST_TEXT_DELAY_TARGET_MS} ms p95, no entity in any Slack call`,
      measured: `+${formatNumber(live.added.p95)} ms p95 (p50 ${formatNumber(live.added.p50)}, max ${formatNumber(live.added.max)}); ${live.leaked} of ${live.answers} answers showed an entity`,
      pass: live.leaked === 0 && live.added.p95 <= FIRST_TEXT_DELAY_TARGET_MS,
    });
  }
  const sq = results.stepsQuestions;
  if (sq) {
    list.push({
      part: '10',
      target: `a step's card in Slack (task_update, through the live path against the fake Slack) ≤ ${STEP_CARD_TARGET_MS} ms p95 after the agent emits it, every step shown`,
      measured: `${formatNumber(sq.cards.p95)} ms p95 (p50 ${formatNumber(sq.cards.p50)}, max ${formatNumber(sq.cards.max)}); ${sq.cards.missing} of ${sq.cards.samples + sq.cards.missing} never shown`,
      pass: sq.cards.missing === 0 && sq.cards.p95 <= STEP_CARD_TARGET_MS,
    });
    list.push({
      part: '10',
      target: `a question answered: click to the resumed task's answer in the thread ≤ ${RESUME_TARGET_MS} ms p95 (local stack, https), every click resumed`,
      measured: `${formatNumber(sq.resume.p95)} ms p95 (p50 ${formatNumber(sq.resume.p50)}, max ${formatNumber(sq.resume.max)}); ${sq.resume.missing} of ${sq.resume.rounds} not resumed`,
      pass: sq.resume.missing === 0 && sq.resume.p95 <= RESUME_TARGET_MS,
    });
  }
  return list;
}

/** `setStatus ×10` (or several methods, most frequent first). */
const methods = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([method, count]) => `${method} ×${count}`)
    .join(', ');

const percent = (fraction: number) => `${formatNumber(fraction * 100)} %`;
/** A summary of counts: `3 (2–4)`. */
const counts = (summary: Summary) => (summary.min === summary.max ? String(summary.median) : `${summary.median} (${summary.min}–${summary.max})`);
/** Dollars with three significant figures: `$0.0000432`. */
const usd = (value: number) => `$${value < 0.01 ? value.toPrecision(3) : value.toFixed(4)}`;
/** `p50 / p95 ms`. */
const p50p95 = (d: Distribution, sign = '') => `${sign}${formatNumber(d.p50)} / ${sign}${formatNumber(d.p95)} ms`;

function liveTargets(live: LiveAnswersResult): Target[] {
  const verdicts = liveAnswerVerdicts(live);
  const o = live.options;
  const held = live.agents.held;
  const handOver = live.agents['hand-over'];
  /** Each agent's figure, a MISS marked; the row passes when every agent does. */
  const row = (target: LiveTargetName, text: string, figure: (agent: LiveAgent) => string): Target => {
    const mine = verdicts.filter((v) => v.target === target);
    return {
      part: '7',
      target: text,
      measured: LIVE_AGENTS.map((agent) => `${LIVE_AGENT_LABELS[agent]} ${figure(agent)}${mine.find((v) => v.agent === agent)!.pass ? '' : ' (MISS)'}`).join('; '),
      pass: mine.every((v) => v.pass),
    };
  };
  const setting = `${o.words} words at ${formatNumber(1000 / o.wordMs)} words/s, held streams at the defaults`;
  const priced = live.agents.held['in-process'].model.map((m) => m.model).join(', ');
  return [
    row('sign', `first visible sign ≤ ${SIGN_OF_LIFE_TARGET_MS / 1000} s after the Slack event’s POST (p50; p95 reported), per agent`, (a) => p50p95(held[a].sign)),
    row(
      'first-text',
      `first answer text in Slack ≤ the agent’s first word + ${TARGETS.firstTextP50Ms / 1000} s (p50) and + ${TARGETS.firstTextP95Ms / 1000} s (p95), per agent (${setting})`,
      (a) => p50p95(held[a].firstText, '+'),
    ),
    row('behind', `while the model writes, Slack ≤ ${TARGETS.behindP95Ms / 1000} s behind it (p95 of the lag at every Slack call that showed text; max reported)`, (a) => `${formatNumber(held[a].behind.p95)} ms (max ${formatNumber(held[a].behind.all.max)})`),
    row('final', `final answer complete ≤ ${TARGETS.finalP95Ms / 1000} s after the last word (p95 of POST → final answer in place − POST → last word)`, (a) => `${p50p95(held[a].final, '+')}`),
    row(
      'step',
      `at least one visible step per second of answer: each answer’s largest gap between consecutive Slack calls that showed text ≤ ${TARGETS.stepP95Ms / 1000} s (p95 over answers; max reported)`,
      (a) => `${formatNumber(held[a].step.p95)} ms (max ${formatNumber(held[a].step.all.max)})`,
    ),
    row(
      'one-at-a-time',
      `one function at a time per answer: the most agent-invoker + async-result deliveries holding one answer at once = ${TARGETS.atOnce} (queues’ delivered/settled events), at the defaults and with STREAM_HOLD_S=${HAND_OVER_HOLD_S}, where the answer crosses several holds`,
      (a) => `${held[a].holdingAtOnce} / ${handOver[a].holdingAtOnce} (${counts(handOver[a].polls)} polls)`,
    ),
    {
      part: '7',
      target: `verification zone per streamed answer (reported): billed GB-s, each invocation at its function’s memory, in $ at tools/prices.ts (arm64, requests included), next to the answer’s output tokens at Bedrock prices (${priced})`,
      measured: LIVE_AGENTS.map((a) => `${LIVE_AGENT_LABELS[a]} ${held[a].gbSeconds.median.toFixed(2)} GB-s = ${usd(held[a].lambdaUsd)}`).join('; ') + `; the model’s output: ${held['in-process'].model.map((m) => `${m.model} ${usd(m.usd)}`).join(', ')}`,
      pass: undefined,
    },
    {
      part: '7',
      target: `a ${live.modelAnswerSeconds}-second answer, held (model, reported): agent-invoker holds ${formatNumber(live.holds.invokerMs / 1000)} s, then async-result ${formatNumber(live.holds.pollMs / 1000)} s at a time, with this run’s overheads; next to the model’s output (${priced})`,
      measured:
        LIVE_AGENTS.map((a) => `${LIVE_AGENT_LABELS[a]} ${live.sixty[a].cost.gbSeconds.toFixed(1)} GB-s = ${usd(live.sixty[a].cost.lambdaUsd)}${live.sixty[a].inputs.pollsHold ? '' : ` (${live.sixty[a].cost.polls} plain polls after the invoker’s hold)`}`).join('; ') +
        `; the model’s output: ${live.sixty['in-process'].model.map((m) => `${m.model} ${usd(m.usd)}`).join(', ')}`,
      pass: undefined,
    },
  ];
}

const label = (seconds: number) => (seconds >= 60 ? `${seconds / 60} min` : `${seconds} s`);

function machineSection(results: BenchResults): string {
  const cpu = cpus();
  return [
    '## Machine',
    '',
    table(
      ['CPU', 'cores', 'memory', 'OS', 'Node', 'load average at start (1/5/15 min)'],
      [[cpu[0]?.model ?? 'unknown', String(cpu.length), formatBytes(totalmem()), `${osType()} ${release()}`, process.version, results.loadAverageAtStart.map((l) => l.toFixed(2)).join(' / ')]],
    ),
    '',
    `Pinning: ${results.throughput?.pinned ?? true ? 'taskset available (servers on core 1, autocannon on core 0, cold-start processes on core 1)' : 'no taskset: nothing pinned'}.`,
    '',
    table(['package', 'version'], PACKAGES.map((name) => [name, packageVersion(name)])),
  ].join('\n');
}

function coldStartSection(cold: ColdStartResult): string {
  const modes: Mode[] = ['offline', 'loopback'];
  const rows = cold.bundles.map((b) => [
    b.name === 'bolt' ? 'Bolt AwsLambdaReceiver (peer)' : b.name,
    formatBytes(b.bytes),
    formatBytes(b.gzipBytes),
    ...modes.flatMap((mode) => [ms(cold.wall[mode][b.name]), ms(cold.overBare[mode][b.name]), `${ms(cold.requireMs[mode][b.name])} + ${ms(cold.firstEventMs[mode][b.name])}`]),
  ]);
  rows.unshift(['bare `node -e 0`', '—', '—', ms(cold.bare.offline), '—', '—', ms(cold.bare.loopback), '—', '—']);
  const events = cold.bundles.map((b) => [b.name === 'bolt' ? 'Bolt' : b.name, cold.events.offline[b.name] ?? '—', cold.events.loopback[b.name] ?? '—']);
  const clients = cold.bundles
    .filter((b) => b.name !== 'bolt')
    .map((b) => [
      b.name,
      b.awsClients.map((c) => `${c.name} (${formatBytes(c.bytes)})`).join(', ') || 'none',
      Object.entries(b.mayCall)
        .map(([client, why]) => `${client}: ${why}`)
        .join('; '),
      b.unexpectedClients.length ? `**MISS**: ${b.unexpectedClients.join(', ')}` : '**PASS**',
    ]);
  const top = cold.bundles.map((b) => [b.name === 'bolt' ? 'Bolt' : b.name, b.topPackages.slice(0, 6).map((p) => `${p.name} ${formatBytes(p.bytes)}`).join(', ')]);
  return [
    '## 1. Cold start of every Lambda bundle',
    '',
    'Each bundle is built as `cdk/constructs/zone-function.ts` has NodejsFunction build it (esbuild: bundle, platform node, target node22, format cjs, minify, tree shaking, `mainFields: [module, main]`, external source map, `externalModules: []` so @aws-sdk is inside), ' +
      'and run with `NODE_OPTIONS=--enable-source-maps` as the construct sets it; the Bolt handler is bundled and run the same way. ' +
      `Each run is a fresh \`node\` process (pinned to one core) that requires the bundle and calls its handler with one event, then exits; the figure is the whole process, spawn to exit, ${cold.rounds} rounds, bare node and all bundles in a new order each round. ` +
      '"Over bare" is paired per round with `node -e 0`. "require + first event" is measured inside the process.',
    '',
    table(
      ['function', 'bundle', 'gzip', 'offline: whole process', 'offline: over bare', 'offline: require + first event', 'loopback: whole process', 'loopback: over bare', 'loopback: require + first event'],
      rows,
    ),
    '',
    `slack-events ÷ Bolt, load + first answer over bare Node: **${formatRatio(cold.slackEventsVsBolt.offline)}** offline (url_verification), ${formatRatio(cold.slackEventsVsBolt.loopback)} with a first real event (targets ≤ 0.3× and ≤ 0.5×).`,
    '',
    'What each first event was:',
    '',
    table(['function', 'offline', 'loopback (AWS and Slack answered on 127.0.0.1)'], events),
    '',
    'AWS SDK clients in each bundle (from esbuild’s metafile: files with bytes in the output), and the code paths that call them:',
    '',
    table(['function', 'clients in the bundle', 'may call (configuration picks the path)', 'verdict'], clients),
    '',
    'Biggest packages in each bundle (bytes of minified output):',
    '',
    table(['function', 'packages'], top),
    ...(cold.probes.length
      ? [
          '',
          `What slack-events’ load is made of: one-purpose handlers, bundled the same way, each loading one dependency as the function does (clients built at module scope) and answering the same signed url_verification; whole process over bare node, ${cold.probes[0]!.rounds} rounds. Costs do not add up exactly: packages share code (@smithy/core, @aws-sdk/core).`,
          '',
          table(
            ['handler that loads only', 'bundle', 'gzip', 'over bare node'],
            [
              ...cold.probes.map((p) => [p.label, formatBytes(p.bytes), formatBytes(p.gzipBytes), ms(p.overBare)]),
              ['(for scale, from the rounds above) the Bolt handler', formatBytes(cold.bundles.find((b) => b.name === 'bolt')!.bytes), formatBytes(cold.bundles.find((b) => b.name === 'bolt')!.gzipBytes), ms(cold.overBare.offline.bolt)],
            ],
          ),
        ]
      : []),
  ].join('\n');
}

function protocolSection(protocol: ProtocolOverheadResult): string {
  return [
    '## 2. Protocol overhead',
    '',
    `Request body ${protocol.requestBytes} B, response body ${protocol.responseBytes} B (Slack-like text: punctuation, a newline, a few non-ASCII characters). ` +
      `${protocol.samples} samples per row, each a batch of calls; ours and bare alternate sample by sample, and the ratio is taken per pair. ns per operation.`,
    '',
    table(
      ['step', 'side', 'ours', 'bare', 'ours ÷ bare', 'compared with'],
      protocol.rows.map((row) => [row.name, row.side, formatSummary(row.ours, 'ns'), formatSummary(row.bare, 'ns'), formatRatio(row.ratio), row.what]),
    ),
  ].join('\n');
}

function throughputSection(t: ThroughputResult): string {
  const names: Record<string, string> = { ours: 'execution runtime (ours)', jayson: 'jayson over node:http', 'json-rpc-2.0': 'json-rpc-2.0 over node:http', bare: 'bare JSON.parse/JSON.stringify (floor)' };
  const rows = SERVER_KINDS.map((kind) => [
    names[kind] ?? kind,
    formatSummary(t.rps[kind]),
    formatSummary(t.p50[kind], 'ms'),
    formatSummary(t.p99[kind], 'ms'),
    kind === 'ours' ? '—' : formatRatio(t.rpsRatio[kind]),
    kind === 'ours' ? '—' : formatRatio(t.p99Ratio[kind]),
  ]);
  return [
    '## 3. Execution runtime throughput',
    '',
    `autocannon, ${t.connections} connections, ${t.durationSeconds} s per run after a ${t.warmupSeconds} s warm-up, ${t.bodyBytes} B \`execute_task\` bodies, each with a fresh UUID-shaped string id ` +
      '(the runtime treats a repeated id as the same task; a fixed id would measure its repeat cache). ' +
      `${t.rounds} rounds; every server is started afresh for each run, in a new order each round; ratios are taken within a round. ` +
      `${t.pinned ? 'Server on core 1, autocannon on core 0 (taskset).' : 'Not pinned (no taskset).'} ` +
      'Ours is the runtime as `zone serve` builds it (echo executor, memory task store, default log level, logs to /dev/null), bundled with esbuild like every server here.',
    '',
    table(['server', 'req/s', 'p50 latency', 'p99 latency', 'ours ÷ this (req/s)', 'ours ÷ this (p99)'], rows),
    ...(t.profile
      ? [
          '',
          `Where ours spends its CPU under the same load: one more ${t.profile.seconds} s run under \`node --cpu-prof\` (${formatNumber(t.profile.requestsPerSecond)} req/s while profiled; packages kept in node_modules so frames say whose code ran). ` +
            'Share of busy samples whose stack contains the code named; shares overlap.',
          '',
          table(['inside', 'share of busy CPU'], t.profile.shares.map((share) => [share.label, `${(share.share * 100).toFixed(0)} %`])),
        ]
      : []),
  ].join('\n');
}

function endToEndSection(e: EndToEndResult): string {
  const base = e.reply['in-process'];
  return [
    '## 4. End to end, locally',
    '',
    `A signed \`app_mention\` into the local pipeline (\`createLocalPipeline\`: slack-events, agent-invoker, async-result and slack-poster with in-memory queues and stores), ` +
      'the reply posted by the real @slack/web-api client to the fake Slack Web API on loopback; execution runtime with the echo executor. ' +
      `${e.eventsPerTransport} events per transport, one at a time, after ${e.warmupEvents} warm-up events each; the transports take turns in chunks. ` +
      'Time from the event reaching the ingress to the reply reaching the fake Slack API.',
    '',
    table(
      ['transport', 'reply p50', 'reply p99', 'median (min–max)', 'adds over in-process (p50 / p99)', 'ack to Slack p50 / p99'],
      TRANSPORTS.map((t) => [
        t,
        `${formatNumber(e.reply[t].p50)} ms`,
        `${formatNumber(e.reply[t].p99)} ms`,
        formatSummary(e.reply[t].all, 'ms'),
        t === 'in-process' ? '—' : `${signed(e.reply[t].p50 - base.p50)} / ${signed(e.reply[t].p99 - base.p99)} ms`,
        `${formatNumber(e.ack[t].p50)} / ${formatNumber(e.ack[t].p99)} ms`,
      ]),
    ),
  ].join('\n');
}

function costRows(costs: TaskCost[]): string[][] {
  return costs.map((c) => [
    label(c.taskSeconds),
    `${c.asyncResult.invocations} (1 + ${c.asyncResult.polls} polls)`,
    `${whole(c.asyncResult.billedMs)} (${whole(c.asyncResult.followingBilledMs)})`,
    `${c.sleepingLoop.invocations} (${c.sleepingLoop.polls} polls inside)`,
    `${whole(c.sleepingLoop.billedMs)} (${whole(c.sleepingLoop.followingBilledMs)})`,
    formatRatio(c.followingRatio),
    formatRatio(c.totalRatio),
  ]);
}

function pollCostSection(p: PollCostResult): string {
  const headers = ['task', 'async-result: invocations', 'billed ms (after acceptance)', 'sleeping loop: invocations', 'billed ms (after acceptance)', 'fewer billed ms, after acceptance', 'fewer billed ms, whole task'];
  return [
    '## 5. Cost of following a long task',
    '',
    `Poll schedule (default config): first delay ${p.schedule.firstDelaySeconds} s, ×${p.schedule.factor} per poll, capped at ${p.schedule.maxDelaySeconds} s, deadline ${p.schedule.deadlineSeconds} s; ` +
      `polls at ${p.timeline.slice(0, 9).join(', ')}, … s after acceptance (${p.timeline.length} polls up to the deadline). ` +
      `The invoker waits ${p.syncBudgetMs} ms on a task that writes nothing — a held stream is let go after STREAM_QUIET_S (5 s by default), as a plain execute_task answers \`accepted\` at the sync budget (SYNC_BUDGET_MS, also 5 s) — so it is billed that wait in both designs.`,
    '',
    `Per poll: the warm async-result Lambda handler (bundled, one get_task_result over AgentCore via the emulator, next poll sent to SQS, all on loopback) took ${ms(p.warmPollHandler)}; billed **${p.pollInvocationMs} ms** per poll (median, rounded up to Lambda’s 1 ms). ` +
      `Invoker overhead on top of its wait: the warm agent-invoker handler, ${ms(p.warmInvokerHandler)}, billed ${p.invokerOverheadMs} ms. ` +
      `The sleeping loop sleeps ${p.sleepIntervalSeconds} s between polls and pays the same per-poll call time; it is one invocation billed for the whole wait.`,
    '',
    table(headers, costRows(p.measured)),
    '',
    `The same with a stated ${p.assumedPollMs} ms per poll (closer to a real AWS round trip to AgentCore plus an SQS send than loopback is):`,
    '',
    table(headers, costRows(p.assumed)),
    '',
    'Nearly all of the async design’s billed time is the invoker waiting for the sync budget. Whole-task ratio (measured per-poll figures) if execute_task answered `accepted` sooner:',
    '',
    table(
      ['SYNC_BUDGET_MS', ...p.budgetSensitivity[0]!.costs.map((c) => `${label(c.taskSeconds)} task`)],
      p.budgetSensitivity.map((row) => [
        `${row.syncBudgetMs} ms${row.syncBudgetMs === p.syncBudgetMs ? ' (default)' : ''}`,
        ...row.costs.map((c) => `${formatRatio(c.totalRatio)} (${whole(c.asyncResult.billedMs)} vs ${whole(c.sleepingLoop.billedMs)} ms)`),
      ]),
    ),
    '',
    'Left out of both designs: slack-events and slack-poster (the same in each), cold starts (one per container either way), and Lambda’s per-request charge, which makes each extra invocation cost about as much as 60 billed ms at the construct’s 256 MB on arm64 (us-east-1 list prices: $0.20 per million requests, $0.0000133334 per GB-second).',
  ].join('\n');
}

function boundedWaitsSection(b: BoundedWaitsResult): string {
  return [
    '## 9. Bounded waits',
    '',
    `How soon a call ends once its own bound is reached, on loopback, ${b.rounds} calls per row (the tests wait for these events without timing them). ms from the call's start to its end.`,
    '',
    table(
      ['call', 'bound', 'ended after', 'what'],
      b.rows.map((row) => [row.name, `${row.boundMs} ms`, formatSummary(row.endedMs, 'ms'), row.what]),
    ),
  ].join('\n');
}

function stepsQuestionsSection(sq: StepsQuestionsResult): string {
  const c = sq.cards;
  const r = sq.resume;
  return [
    '## 10. Steps and questions',
    '',
    `The agent at work (bench/steps-questions.ts; docs/architecture.md §2.5 "Steps", §2.8 "Questions to a person"). Step cards: ${c.tasks} tasks whose agent emits ${c.steps} steps, each in progress and then complete, a change every ${c.stepMs} ms, held as agent-invoker holds a stream (its flush rules and real timers) and shown by the live reply with the real @slack/web-api client against the fake Slack API; a sample is one state change, from the moment the agent yielded it to the fake Slack's arrival time of the first stream call whose task_update chunk carries it. ` +
      `Resume: ${r.rounds} questions (the echo agent's \`#ask=\`) through the whole local stack (both zones, https between them, in-memory queues), each answered by the asker's click on Approve (a signed block_actions to the ingress); from the click to the resumed task's answer in the thread (the local workspace's time for that message).`,
    '',
    table(
      ['what', 'samples', 'p50', 'p95', 'max', 'missing'],
      [
        ['agent emits a step → its card in Slack', String(c.samples), `${formatNumber(c.p50)} ms`, `${formatNumber(c.p95)} ms`, `${formatNumber(c.max)} ms`, String(c.missing)],
        ['click on Approve → the resumed answer', String(r.rounds - r.missing), `${formatNumber(r.p50)} ms`, `${formatNumber(r.p95)} ms`, `${formatNumber(r.max)} ms`, String(r.missing)],
      ],
    ),
  ].join('\n');
}

function splitterSection(s: SplitterResult): string {
  return [
    '## 6. Reply splitter on pathological text',
    '',
    `\`splitForSlack\` (src/slack/split-message.ts) on ${formatNumber(s.chars)} UTF-16 code units of each shape, chunk limit ${formatNumber(s.limit)}, in the bench process; up to ${s.samples} samples per shape after a warm-up on a tenth of the size. ` +
      'The posting path runs `toSafeMrkdwn` (src/slack/safe-mrkdwn.ts) first; it is timed as a whole beside the splitter. ' +
      'Each split is checked: chunks within the limit, none blank, no surrogate pair cut, every visible character kept.',
    '',
    table(
      ['shape', 'text', 'chunks', 'splitForSlack', 'posting path (toSafeMrkdwn + split)', 'check'],
      s.rows.map((row) => [row.name, row.what, String(row.chunks), ms(row.split), ms(row.posting), row.problem ? `**wrong**: ${row.problem}` : 'ok']),
    ),
  ].join('\n');
}

function guardrailSection(g: GuardrailBenchResult): string {
  const s = g.stream;
  return [
    '## 8. Guardrail: masking and the stream masker',
    '',
    `The built-in guardrail (src/guardrail/, GUARDRAIL=builtin) masking ${formatNumber(g.chars)} characters of each shape in the bench process, ${g.samples} samples after a warm-up on a tenth of the size; the corpus row is checked (every seeded entity gone). ` +
      `Then ${s.answers} answers of ${s.words} words built from the seeded corpus (an entity every twenty words or so — far denser than real answers), a word every ${s.wordMs} ms on a simulated clock, through the stream masker: ` +
      'a character is shown when the push that releases it returns (its word’s arrival plus the measured CPU of that push); the delay is that minus its arrival. ' +
      'Every streamed answer is compared with masking the whole answer at once.',
    '',
    table(
      ['text', 'entities masked', 'mask', 'check'],
      g.rows.map((row) => [row.name, String(row.entities), ms(row.mask), row.problem ? `**wrong**: ${row.problem}` : 'ok']),
    ),
    '',
    table(
      ['streamed answers', 'p50', 'p95', 'max'],
      [
        ['first text, added delay', `${formatNumber(s.firstText.p50)} ms`, `${formatNumber(s.firstText.p95)} ms`, `${formatNumber(s.firstText.max)} ms`],
        ['every character, added delay', `${formatNumber(s.perChar.p50)} ms`, `${formatNumber(s.perChar.p95)} ms`, `${formatNumber(s.perChar.max)} ms`],
      ],
    ),
    '',
    `Answers that showed anything other than the whole answer masked: ${s.leaked} of ${s.answers}. A word is held only while it, or the number it is a group of, may still become an entity; an answer that opens with a grouped number or a key block shows nothing until it is complete, which is what the p95 measures.`,
    '',
    `Through the live path, in real time (bench/guardrail-live.ts): ${g.live.answers} answers of ${g.live.words} words (corpus sentences, a space between them), a word every ${g.live.wordMs} ms, each held as agent-invoker holds a stream (its flush rules and timers) and shown by the live reply with the real @slack/web-api client against the fake Slack API — once unmasked, once with GUARDRAIL=builtin masking; the first text is the fake Slack's arrival time of the first call that showed answer text, against the first word.`,
    '',
    table(
      ['live path, first text', 'p50', 'p95'],
      [
        ['unmasked', `${formatNumber(g.live.plain.p50)} ms`, `${formatNumber(g.live.plain.p95)} ms`],
        ['masked (GUARDRAIL=builtin)', `${formatNumber(g.live.masked.p50)} ms`, `${formatNumber(g.live.masked.p95)} ms`],
        ['added by masking, answer by answer', `${formatNumber(g.live.added.p50)} ms`, `${formatNumber(g.live.added.p95)} ms (max ${formatNumber(g.live.added.max)})`],
      ],
    ),
    '',
    `Answers whose Slack calls showed a seeded entity: ${g.live.leaked} of ${g.live.answers}. The hold's flushes carry whole words, so masking holds back only a number whose next group may still come — until the next flush.`,
  ].join('\n');
}

function liveAnswersSection(live: LiveAnswersResult, results: BenchResults): string {
  const o = live.options;
  const answerSeconds = (o.words * o.wordMs) / 1000;
  const f = live.flush;
  const held = live.agents.held;
  const handOver = live.agents['hand-over'];
  const models = held['in-process'].model;
  const poll = results.pollCost;
  const tenMinutes = poll?.measured.find((c) => c.taskSeconds === 600);
  const dist = (d: Distribution) => `${formatNumber(d.p50)} / ${formatNumber(d.p95)} ms (max ${formatNumber(d.all.max)})`;
  const billedPer = (t: AgentFigures) => [ms(t.billedMs.ingress), ms(t.billedMs.invoker), t.polls.max === 0 ? '0' : `${ms(t.billedMs.polls)} in ${counts(t.polls)}`, ms(t.billedMs.poster)];
  return [
    '## 7. Live answers',
    '',
    'A signed `app_mention` POSTed over HTTP to slack-events of the local pipeline (`createLocalPipeline`: the four verification functions, in-memory queues and stores, real time: timeScale 1), ' +
      'the real @slack/web-api client against the fake Slack Web API on loopback (it accepts the agent session, the thread status and streams). ' +
      `agent-invoker sends \`execute_task\` with \`stream: true\` and holds the stream (STREAM_HOLD_S ${live.holdS}; no Lambda deadline locally, so the setting is the hold), appending as text comes — a flush once ${f.minWords} words or ${f.minChars} characters wait and ${f.firstGapMs} ms into the hold (the first) or ${f.minGapMs} ms since the last, at least every ${f.maxGapMs} ms while text waits (FLUSH_RULES) —; ` +
      `a stream with no new text for STREAM_QUIET_S (${live.quietS} s) is let go to polling; slack-poster stops the stream and puts the final answer in place. The agents: ` +
      `the execution runtime over in-process, https and agentcore (the real SDK client → the AgentCore emulator), its echo executor streaming ${o.words} words at ${formatNumber(1000 / o.wordMs)} words/s (ECHO_STREAM_MS=${o.wordMs}: a ${formatNumber(answerSeconds)} s answer), its words timed by a wrapper around the echo executor’s \`onText\`; ` +
      `and an @a2a-js/sdk agent (test/support/a2a-agents.ts) whose card says it streams, configured as a deployment would be (EXECUTION_PROTOCOL=a2a, TRANSPORT=https, EXECUTION_URL=its endpoint) and read with \`SendStreamingMessage\`, streaming the same ${o.words} words at the same pace (\`#stream #words=${o.words} #delay=${o.wordMs}\`), its words timed by the agent’s \`onAnswerText\` hook as it publishes them. ` +
      `${o.eventsPerTransport} events per agent after ${o.warmupEvents} warm-up event${o.warmupEvents === 1 ? '' : 's'} each, one at a time, the agents taking turns; then ${o.handOverEvents} per agent with STREAM_HOLD_S=${HAND_OVER_HOLD_S}, so the answer crosses several holds. ` +
      `Every event is checked to end as one stopped stream showing exactly the answer, no post. Times are the fake Slack API’s answers to the calls. Load average at the run’s start: ${results.loadAverageAtStart.map((l) => l.toFixed(2)).join(' / ')} (2 cores, shared with other work).`,
    '',
    '**At the defaults** (the targets): the first visible sign after the POST; the first answer text after the agent’s first word; how far Slack was behind the model at each call that showed text (the call’s answer → when the agent produced the oldest character in it); the last word → the final answer in place; each answer’s largest gap between consecutive calls that showed text (the stream’s start, each append, the final answer). p50 / p95 (max).',
    '',
    table(
      ['agent', 'first visible sign', 'first text − first word', 'Slack behind the model, per call', 'final answer − last word', 'largest step per answer', 'appends per answer', 'POST → first word', 'first word → last', 'POST → final answer'],
      LIVE_AGENTS.map((a) => {
        const t = held[a];
        return [LIVE_AGENT_LABELS[a], `${dist(t.sign)}; ${methods(t.sign.methods)}`, `${dist(t.firstText)}; ${methods(t.firstText.methods)}`, dist(t.behind), dist(t.final), dist(t.step), counts(t.appends), ms(t.firstWord), ms(t.stream), ms(t.done)];
      }),
    ),
    '',
    `The first text shows ${f.firstGapMs} ms into the hold (FLUSH_RULES.firstGapMs), the runtime’s text coming in 100 ms batches (STREAM_COALESCE_MS); then an append every ${f.minGapMs} ms while text flows (FLUSH_RULES.minGapMs: 100 appends a minute, chat.appendStream’s Tier 4), so Slack is up to about ${f.minGapMs} ms plus a batch behind the model, and each step is about ${f.minGapMs} ms. ` +
      'The final answer is in place once the agent’s last word has reached the invoker (the task’s success ends the hold without a last append), slack-poster has been queued and has stopped the stream and rewritten the message. ' +
      'On AWS each figure grows by what loopback leaves out: a Slack round trip per call (tens of ms), the SQS hand-off to slack-poster, the transport’s round trip, a cold start where there is one (part 1).',
    '',
    `**Across holds** (STREAM_HOLD_S=${HAND_OVER_HOLD_S}): agent-invoker holds ${HAND_OVER_HOLD_S} s, then async-result holds the stream again from the cursor, ${HAND_OVER_HOLD_S} s at a time (the next poll queued at once: the hold ran its length). ` +
      '"At once": the most agent-invoker and async-result deliveries holding the answer at the same time, from the queues’ events — a delivery holds from `delivered` until it settles or queues the next poll (its last step; it holds nothing after); "running" counts from `delivered` to `succeeded`, so the sender’s last milliseconds after it queued the next poll overlap the next delivery, which the local queue hands out at once.',
    '',
    table(
      ['agent', 'polls per answer', 'at once (holding)', 'running (overlap per answer)', 'first text − first word', 'Slack behind the model', 'final answer − last word', 'largest step per answer'],
      LIVE_AGENTS.map((a) => {
        const t = handOver[a];
        return [LIVE_AGENT_LABELS[a], counts(t.polls), String(t.holdingAtOnce), `${t.runningAtOnce} (${ms(t.overlapMs)})`, dist(t.firstText), dist(t.behind), dist(t.final), dist(t.step)];
      }),
    ),
    '',
    ...(LIVE_AGENTS.some((a) => !live.sixty[a].inputs.pollsHold)
      ? [
          `${LIVE_AGENTS.filter((a) => !live.sixty[a].inputs.pollsHold)
            .map((a) => LIVE_AGENT_LABELS[a])
            .join(', ')}: after the invoker’s hold, async-result’s polls are plain reads (the A2A protocol reads a poll as GetTask, not as a stream: no \`SubscribeToTask\`), so the rest of the answer comes one poll at a time, STREAM_POLL_DELAY_S (${live.pollDelaySeconds} s) apart — behind the model and in steps of seconds, as the table shows. At the defaults an answer shorter than the invoker’s hold (${formatNumber(live.holds.invokerMs / 1000)} s on AWS) is held whole.`,
          '',
        ]
      : []),
    `**Billed per streamed answer** (at the defaults): each function’s handler time — slack-events’ call, and each delivery’s from the queue’s delivered → settled events — rounded up to the millisecond as Lambda bills, at its memory as CDK deploys it (tools/cost-model.ts \`LAMBDA_MEMORY_MB\`: slack-events ${formatNumber(FUNCTION_MEMORY_GB.ingress * 1024)} MB, agent-invoker ${formatNumber(FUNCTION_MEMORY_GB.tasks * 1024)} MB, async-result ${formatNumber(FUNCTION_MEMORY_GB.polls * 1024)} MB, slack-poster ${formatNumber(FUNCTION_MEMORY_GB.replies * 1024)} MB), ` +
      `priced at tools/prices.ts (${PRICE_REGION}, read ${PRICES.lambdaArmGbSecond.checked}): $${PRICES.lambdaArmGbSecond.usd} per GB-second (arm64) and $${formatNumber(PRICES.lambdaRequest.usd * 1e6)} per million requests. ` +
      `Next to it, what the answer’s output tokens (its characters ÷ ${CHARS_PER_TOKEN}) cost on Bedrock (tools/prices.ts: ${models.map((m) => `${m.model} $${formatNumber(m.usdPerMillionOutput)}`).join(', ')} per million output tokens); the prompt’s input tokens come on top. Median per answer.`,
    '',
    table(
      ['agent', 'slack-events', 'agent-invoker', 'async-result', 'slack-poster', 'GB-s per answer', 'Lambda $', ...models.map((m) => `${m.model}: output $ (Lambda ÷ it)`)],
      LIVE_AGENTS.map((a) => {
        const t = held[a];
        return [LIVE_AGENT_LABELS[a], ...billedPer(t), `${t.gbSeconds.median.toFixed(3)} (${t.gbSeconds.min.toFixed(3)}–${t.gbSeconds.max.toFixed(3)})`, usd(t.lambdaUsd), ...t.model.map((m) => `${usd(m.usd)} (${percent(m.lambdaShare)})`)];
      }),
    ),
    '',
    `**A ${live.modelAnswerSeconds}-second answer, held** (bench/live-answers.ts \`heldAnswerCost\`): the deployment bounds each hold by its function’s Lambda timeout less HOLD_MARGIN_MS (src/verification/live/stream-hold.ts \`holdMsFor\`; the timeouts in src/verification/pipeline-settings.ts): agent-invoker holds ${formatNumber(live.holds.invokerMs / 1000)} s, then async-result ${formatNumber(live.holds.pollMs / 1000)} s at a time from the cursor until the answer ends — one function at a time, each billed its hold plus this run’s overhead: agent-invoker’s billed ms beyond the answer it held whole (median, at the defaults), a poll’s billed ms beyond the text it held (from the STREAM_HOLD_S=${HAND_OVER_HOLD_S} runs); slack-poster and slack-events as measured. ` +
      `The model’s output: the same answer at the measured pace (${formatNumber(live.sixty['in-process'].model[0]!.usd / (live.sixty['in-process'].model[0]!.usdPerMillionOutput / 1e6) / live.modelAnswerSeconds)} tokens a second) for ${live.modelAnswerSeconds} s.`,
    '',
    table(
      ['agent', 'agent-invoker', 'async-result', 'slack-poster + slack-events', 'GB-s', 'Lambda $', ...models.map((m) => `${m.model}: output $ (Lambda ÷ it)`)],
      LIVE_AGENTS.map((a) => {
        const s = live.sixty[a];
        const c = s.cost;
        return [
          LIVE_AGENT_LABELS[a],
          `${whole(c.invokerBilledMs)} ms (overhead ${whole(s.inputs.invokerOverheadMs)})`,
          s.inputs.pollsHold ? `${c.polls} holds, ${whole(c.pollsBilledMs)} ms (overhead ${formatNumber(s.inputs.pollMs)} each)` : `${c.polls} plain polls × ${formatNumber(s.inputs.pollMs)} = ${whole(c.pollsBilledMs)} ms`,
          `${whole(c.posterBilledMs)} + ${whole(c.ingressBilledMs)} ms`,
          c.gbSeconds.toFixed(2),
          usd(c.lambdaUsd),
          ...s.model.map((m) => `${usd(m.usd)} (${percent(m.lambdaShare)})`),
        ];
      }),
    ),
    '',
    `Holding is what a streamed answer costs: its billed time is its length, on one function at a time, where polling every 2 s billed a few ms per poll (before issue 26). Next to the model’s own output for the same answer it is a few per cent of Claude’s, and more than the cheapest model’s, as the tables show. ` +
      `A second held by agent-invoker (${formatNumber(FUNCTION_MEMORY_GB.tasks * 1024)} MB, sized for shared files) bills ${formatNumber(FUNCTION_MEMORY_GB.tasks / FUNCTION_MEMORY_GB.polls)}× a second held by async-result (${formatNumber(FUNCTION_MEMORY_GB.polls * 1024)} MB): the STREAM_HOLD_S=${HAND_OVER_HOLD_S} answers above, mostly held by async-result, billed ${LIVE_AGENTS.map((a) => `${LIVE_AGENT_LABELS[a]} ${percent(handOver[a].gbSeconds.median / held[a].gbSeconds.median)}`).join(', ')} of the GB-s of those the invoker held whole. ` +
      `A task that writes nothing is not held: its stream is let go after STREAM_QUIET_S (${live.quietS} s) and it is polled at the backoff — part 5’s case. ` +
      (tenMinutes
        ? `Part 5’s target row “10 min task: ≥ 100× fewer billed ms than a function sleeping while it polls every 2 s” holds in this run: ${formatRatio(tenMinutes.totalRatio)} (${whole(tenMinutes.asyncResult.billedMs)} vs ${whole(tenMinutes.sleepingLoop.billedMs)} ms), **${tenMinutes.totalRatio >= 100 ? 'PASS' : 'MISS'}**.`
        : 'Part 5’s target row “10 min task: ≥ 100× fewer billed ms than a function sleeping while it polls every 2 s” measures that case (`npm run bench -- --only=5`).'),
  ].join('\n');
}

function notesSection(results: BenchResults): string {
  return [
    '## Method and caveats',
    '',
    '- Machines here are noisy (shared 2-core VM; other jobs may run): every comparison alternates its commands round by round and ratios are taken within a round. Figures are median (min–max).',
    `- Node here is ${process.version}; bundles target node22 as Lambda's nodejs22.x runtime runs them. On Node < 22 the AWS SDK prints a support warning at load; it costs next to nothing.`,
    '- Cold start on a laptop-class VM is not Lambda’s: Lambda adds its own sandbox and runtime init. The ratios between bundles carry over better than the milliseconds.',
    '- The bundles include the AWS SDK (`externalModules: []` in the construct); had it stayed external, the runtime’s SDK would be loaded from disk instead, at a similar cost.',
    '- No timing is asserted in a unit test; `test/bench/` checks only the bench’s arithmetic.',
    ...(results.quick ? ['- **This is a quick run** (`--quick`): few rounds and short runs; use it to check the bench works, not for figures.'] : []),
  ].join('\n');
}

export function renderResults(results: BenchResults): string {
  const list = targets(results);
  const parts = [
    '# Benchmarks',
    '',
    `Generated by \`npm run bench${results.quick ? ' -- --quick' : ''}\` on ${results.startedAt.toISOString()}; the run took ${formatNumber(results.durationSeconds / 60)} min. ` +
      'Every figure is the median with min–max in brackets.' +
      (results.quick ? ' **Quick run: indicative only.**' : ''),
    '',
    '## Targets',
    '',
    table(
      ['part', 'target', 'measured', 'result'],
      list.map((t) => [t.part, t.target, t.measured, verdict(t.pass)]),
    ),
  ];
  if (results.failures.length) {
    parts.push('', '**Parts that failed to run:**', '', ...results.failures.map((f) => `- ${f.part}: ${f.error.split('\n')[0]}`));
  }
  parts.push('', machineSection(results));
  if (results.coldStart) parts.push('', coldStartSection(results.coldStart));
  if (results.protocol) parts.push('', protocolSection(results.protocol));
  if (results.throughput) parts.push('', throughputSection(results.throughput));
  if (results.endToEnd) parts.push('', endToEndSection(results.endToEnd));
  if (results.pollCost) parts.push('', pollCostSection(results.pollCost));
  if (results.splitter) parts.push('', splitterSection(results.splitter));
  if (results.liveAnswers) parts.push('', liveAnswersSection(results.liveAnswers, results));
  if (results.guardrail) parts.push('', guardrailSection(results.guardrail));
  if (results.boundedWaits) parts.push('', boundedWaitsSection(results.boundedWaits));
  if (results.stepsQuestions) parts.push('', stepsQuestionsSection(results.stepsQuestions));
  parts.push('', notesSection(results), '');
  return parts.join('\n');
}

export function loadAverage(): number[] {
  return loadavg();
}
