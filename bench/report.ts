import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { join } from 'node:path';
import type { ColdStartResult, Mode } from './cold-start';
import type { EndToEndResult } from './end-to-end';
import { TRANSPORTS } from './end-to-end';
import { COST_TARGET_FRACTION, FIRST_TEXT_TARGET_MS, liveAnswerVerdicts, SIGN_OF_LIFE_TARGET_MS, type LiveAnswersResult, type StreamCost } from './live-answers';
import type { PollCostResult, TaskCost } from './poll-cost';
import type { ProtocolOverheadResult } from './protocol-overhead';
import { SPLITTER_TARGET_MS, type SplitterResult } from './reply-splitter';
import type { ThroughputResult } from './runtime-throughput';
import { SERVER_KINDS } from './support/throughput-shared';
import { formatBytes, formatNumber, formatRatio, formatSummary, type Summary } from './stats';

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
  return list;
}

/** `setStatus ×10` (or several methods, most frequent first). */
const methods = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([method, count]) => `${method} ×${count}`)
    .join(', ');

const percent = (fraction: number) => `${formatNumber(fraction * 100)} %`;
/** `1/10`. */
const share = (fraction: number) => `1/${Math.round(1 / fraction)}`;
/** A summary of counts: `3 (2–4)`. */
const counts = (summary: Summary) => (summary.min === summary.max ? String(summary.median) : `${summary.median} (${summary.min}–${summary.max})`);

/** `1,020 ms = 1.70 % of 60,000 ms (58.8× fewer)`. */
const costFigure = (cost: StreamCost) => `${whole(cost.billedMs)} ms = ${percent(cost.fraction)} of ${whole(cost.holdingBilledMs)} ms (${formatRatio(cost.ratio)} fewer)`;

function liveTargets(live: LiveAnswersResult): Target[] {
  const seconds = live.modelAnswerSeconds;
  return liveAnswerVerdicts(live).map((verdict): Target => {
    if (verdict.transport === 'aws (assumed)') {
      const a = live.assumed;
      return {
        part: '7',
        target: `same, with stated AWS figures: a poll ${a.awsCallMs} ms (AgentCore + SQS, as part 5) + ${a.slackCallMs} ms (the Slack append); invoker and poster: measured + ${a.awsCallMs} ms per AWS call + ${a.slackCallMs} ms per Slack call`,
        measured: `${costFigure(a.cost)}; within ${share(COST_TARGET_FRACTION)} while a poll bills ≤ ${a.breakEvenPollMs} ms`,
        pass: verdict.pass,
      };
    }
    const t = live.transports[verdict.transport];
    if (verdict.target === 'sign') {
      return {
        part: '7',
        target: `${verdict.transport}: first visible sign ≤ ${SIGN_OF_LIFE_TARGET_MS / 1000} s after the Slack event’s POST (p50)`,
        measured: `p50 ${formatNumber(t.sign.p50)} ms, p95 ${formatNumber(t.sign.p95)} ms (${methods(t.sign.methods)})`,
        pass: verdict.pass,
      };
    }
    if (verdict.target === 'first-text') {
      return {
        part: '7',
        target: `${verdict.transport}: first streamed text in Slack ≤ the executor’s first word + ${FIRST_TEXT_TARGET_MS / 1000} s (p50; p95 reported)`,
        measured: `p50 +${formatNumber(t.firstText.p50)} ms, p95 +${formatNumber(t.firstText.p95)} ms (${methods(t.firstText.methods)})`,
        pass: verdict.pass,
      };
    }
    return {
      part: '7',
      target: `${verdict.transport}: billed ms of agent-invoker + async-result + slack-poster for a ${seconds} s streamed answer ≤ ${share(COST_TARGET_FRACTION)} of a function holding on for the whole answer (model, measured ms)`,
      measured: `${costFigure(t.cost)}: ${whole(t.cost.invokerBilledMs)} + ${t.cost.polls} polls × ${whole(t.cost.pollsBilledMs / t.cost.polls)} + ${whole(t.cost.posterBilledMs)}`,
      pass: verdict.pass,
    };
  });
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

function liveAnswersSection(live: LiveAnswersResult): string {
  const o = live.options;
  const answerSeconds = (o.words * o.wordMs) / 1000;
  const seconds = live.modelAnswerSeconds;
  const part5 = live.part5;
  const ten = part5.tenMinutes;
  const costRow = (name: string, cost: StreamCost, breakEven: number) => [
    name,
    whole(cost.invokerBilledMs),
    `${cost.polls} × ${whole(cost.pollsBilledMs / cost.polls)} = ${whole(cost.pollsBilledMs)}`,
    whole(cost.posterBilledMs),
    `**${whole(cost.billedMs)}**`,
    whole(cost.holdingBilledMs),
    percent(cost.fraction),
    formatRatio(cost.ratio),
    `${breakEven} ms`,
  ];
  return [
    '## 7. Live answers',
    '',
    'A signed `app_mention` POSTed over HTTP to slack-events of the local pipeline (`createLocalPipeline`: the four verification functions, in-memory queues and stores, real time: timeScale 1), ' +
      'the real @slack/web-api client against the fake Slack Web API on loopback (it accepts the thread status and streams), for each transport to one execution runtime. ' +
      `Its echo executor streams ${o.words} words at ${formatNumber(1000 / o.wordMs)} words/s (ECHO_STREAM_MS=${o.wordMs}: a ${formatNumber(answerSeconds)} s answer); STREAM_FIRST_TEXT_MS ${live.streamFirstTextMs}, STREAM_POLL_DELAY_S ${live.pollDelaySeconds}, the rest default. ` +
      `${o.eventsPerTransport} events per transport after ${o.warmupEvents} warm-up event${o.warmupEvents === 1 ? '' : 's'} each, one at a time, the transports taking turns; every event checked to end as one stopped stream showing exactly the answer. ` +
      'Times are the fake Slack API’s answers to the calls. The executor’s first word is timed by a wrapper around the echo executor (its `onText`), handed to `createExecutionRuntime`; nothing in the runtime was changed to time it.',
    '',
    table(
      ['transport', 'first visible sign p50 / p95', 'median (min–max)', 'shown by', 'first text − first word p50 / p95', 'median (min–max)', 'shown by', 'POST → first word', 'first word → last (executor)', 'POST → final answer in place'],
      TRANSPORTS.map((name) => {
        const t = live.transports[name];
        return [
          name,
          `${formatNumber(t.sign.p50)} / ${formatNumber(t.sign.p95)} ms`,
          ms(t.sign.all),
          methods(t.sign.methods),
          `${formatNumber(t.firstText.p50)} / ${formatNumber(t.firstText.p95)} ms`,
          ms(t.firstText.all),
          methods(t.firstText.methods),
          ms(t.firstWord),
          ms(t.stream),
          ms(t.done),
        ];
      }),
    ),
    '',
    `The first text waits for the runtime’s first-text window (STREAM_FIRST_TEXT_MS, ${live.streamFirstTextMs} ms: execute_task answers \`accepted\` with the words gathered by then), and reaches Slack as the stream’s start; the rest follows with each poll, ${live.pollDelaySeconds} s apart.`,
    '',
    'Billed ms of the verification functions while these answers streamed: each delivery’s handler time (the queue’s delivered → settled events), rounded up to the millisecond as Lambda bills; the invoker and the poster per answer, async-result per poll; mean, then median (min–max).',
    '',
    table(
      ['transport', 'agent-invoker, per answer', 'async-result, per poll', 'polls per answer', 'appends per answer', 'slack-poster, per answer', 'first word → first poll queued'],
      TRANSPORTS.map((name) => {
        const t = live.transports[name];
        return [
          name,
          `mean ${formatNumber(t.invoker.mean)} ms; ${ms(t.invoker.all)}`,
          `mean ${formatNumber(t.poll.mean)} ms; ${ms(t.poll.all)}`,
          `${counts(t.polls)}; model ${t.predictedPolls}`,
          counts(t.appends),
          `mean ${formatNumber(t.poster.mean)} ms; ${ms(t.poster.all)}`,
          ms(t.firstPollQueued),
        ];
      }),
    ),
    '',
    ...heldStreamLines(live),
    `**The model for a ${seconds}-second answer** (bench/live-answers.ts, \`streamedAnswerCost\`): billed = agent-invoker + N × async-result + slack-poster, each at its mean billed ms above, rounded up. ` +
      `The invoker queues the first poll a = (first word → first poll queued, median) after the first word with the ${live.pollDelaySeconds} s delay D; each poll queues the next as it ends, so polls start D + p apart (p: a poll’s ms; SQS’s delivery latency, left out, would only space them further); ` +
      `the first poll at or after the answer’s end finds it done: N = 1 + ⌈(T − a − D) / (D + p)⌉ for an answer streamed for T. ` +
      `The model’s N for the measured answers is above, beside the measured count. The other design — a function that holds the connection to the agent (or sleeps and polls) for the whole answer — is billed at least T = ${whole(seconds * 1000)} ms; that floor is the comparison (target: ≤ ${share(COST_TARGET_FRACTION)} of it). ` +
      `Last column: the most a poll may bill with the answer still within ${share(COST_TARGET_FRACTION)}.`,
    '',
    table(
      ['figures', 'agent-invoker', 'async-result: polls × ms', 'slack-poster', 'billed ms', 'holding function', 'share', 'fewer billed ms', `a poll may bill (within ${share(COST_TARGET_FRACTION)})`],
      [
        ...TRANSPORTS.map((name) => {
          const t = live.transports[name];
          return costRow(`measured, ${name}`, t.cost, t.breakEvenPollMs);
        }),
        costRow(`stated AWS figures (agentcore’s a)`, live.assumed.cost, live.assumed.breakEvenPollMs),
      ],
    ),
    '',
    `Stated AWS figures: a poll bills ${live.assumed.awsCallMs} ms for its AWS work (the AgentCore round trip and the SQS send, part 5’s figure) + ${live.assumed.slackCallMs} ms for its Slack round trip (chat.appendStream); ` +
      `the invoker bills what the agentcore transport measured + ${live.assumed.awsCallMs} ms (execute_task, the first poll queued) + 3 × ${live.assumed.slackCallMs} ms (status, thread read, stream start) = ${whole(live.assumed.cost.invokerBilledMs)} ms; ` +
      `the poster what it measured + ${live.assumed.awsCallMs} ms (its claims) + 2 × ${live.assumed.slackCallMs} ms (stream stop, final update) = ${whole(live.assumed.cost.posterBilledMs)} ms. ` +
      `While text flows a poll runs every D + p, so the streamed design’s share of a holding function tends to p / (D + p) as answers grow: within ${share(COST_TARGET_FRACTION)} only while a poll bills under about D / 9 = ${formatNumber((live.pollDelaySeconds * 1000) / 9)} ms, less what the invoker and the poster take.`,
    '',
    'On AWS the first two figures grow by what loopback leaves out: the SQS hand-off to agent-invoker (tens of ms), a cold start where there is one (part 1), and a Slack round trip for the call that shows it; ' +
      `the first text also waits for the transport’s round trip. Against 1 s, the sign of life has that room; the first text has ${formatNumber(1000 - live.streamFirstTextMs)} ms of it beyond the ${live.streamFirstTextMs} ms window.`,
    '',
    `Part 5 still holds: its 10-minute figure comes from the backoff schedule, which live answers leave unchanged (default config: polls at ${part5.timeline.slice(0, 6).join(', ')}, … s after acceptance), and applies to a task that produces no text until it is done (its held stream is let go after ${part5.syncBudgetMs} ms without text, STREAM_QUIET_S, and it never polls faster). ` +
      `Recomputed with part 5’s model and this part’s larger figures (a poll billed ${part5.pollMs} ms — a streamed poll, Slack append included — and the invoker’s whole ${part5.invokerMs} ms as its overhead), the 10-minute task is ` +
      `${formatRatio(ten.totalRatio)} below a sleeping function over the whole task (${whole(ten.asyncResult.billedMs)} vs ${whole(ten.sleepingLoop.billedMs)} ms, ${ten.asyncResult.polls} polls) and ${formatRatio(ten.followingRatio)} after acceptance: ` +
      `${ten.totalRatio >= 100 && ten.followingRatio >= 100 ? '**still ≥ 100×**' : '**below 100×**'}. A task that streams for its whole length is a different case: it is polled every ${live.pollDelaySeconds} s while text flows, and its cost is the streamed share above, whatever its length.`,
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
  if (results.liveAnswers) parts.push('', liveAnswersSection(results.liveAnswers));
  parts.push('', notesSection(results), '');
  return parts.join('\n');
}

export function loadAverage(): number[] {
  return loadavg();
}

/**
 * Held streams (docs/architecture.md §2.5): how far Slack was behind the model at each append, and
 * what an answer bills in Lambda (GB-seconds at each function's memory) next to what the model's
 * output costs at a few Bedrock prices. Absent from results measured before held streams.
 */
function heldStreamLines(live: LiveAnswersResult): string[] {
  const rows = TRANSPORTS.flatMap((name) => {
    const t = live.transports[name];
    if (!t.appendLag || !t.held) return [];
    return [
      [
        name,
        `${formatNumber(t.appendLag.p50)} / ${formatNumber(t.appendLag.p95)} ms (max ${formatNumber(t.appendLag.all.max)})`,
        `${t.held.gbSeconds.median.toFixed(3)} GB-s = $${t.held.cost.lambdaUsd.toFixed(6)}`,
        ...t.held.cost.model.map((m) => `$${m.usd.toFixed(5)} (Lambda ${(m.lambdaShare * 100).toFixed(1)} %)`),
      ],
    ];
  });
  if (rows.length === 0) return [];
  const prices = TRANSPORTS.map((name) => live.transports[name].held).find(Boolean)!.cost.model.map((m) => `model output at $${m.pricePerMillion}/M tokens`);
  return [
    'Held streams: each Slack call that showed answer text (the stream’s start, each append) against when the executor produced the oldest character in it — how far Slack was behind the model, p50 / p95 over all calls; and the billed GB-seconds of the verification functions per answer (each delivery’s billed ms at its function’s memory: agent-invoker 1 GB, async-result and slack-poster 256 MB), priced at $0.0000166667 per GB-s, next to what the answer’s output tokens (characters ÷ 4) cost the model.',
    '',
    table(['transport', 'Slack behind the model, per append', 'Lambda per answer (median)', ...prices], rows),
    '',
  ];
}
