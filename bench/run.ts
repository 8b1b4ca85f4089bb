import { mkdtemp, mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { existingRehearsalSection, withRehearsalSection } from '../tools/rehearse/results-section';
import { runColdStart } from './cold-start';
import { runEndToEnd } from './end-to-end';
import { runGuardrailBench } from './guardrail';
import { runLiveAnswers, type LiveAnswersOptions } from './live-answers';
import { runPollCost } from './poll-cost';
import { runProtocolOverhead } from './protocol-overhead';
import { runBoundedWaits } from './bounded-waits';
import { runReplySplitter } from './reply-splitter';
import { runStepsQuestions } from './steps-questions';
import { loadAverage, renderResults, type BenchResults } from './report';
import { runThroughput } from './runtime-throughput';
import { ensureBenchPackages } from './support/bench-packages';
import { stopAll } from './support/processes';

/**
 * `npm run bench` (all parts, under ten minutes on a 2-core machine) and `npm run bench -- --quick`
 * (every part, briefly). Writes bench/RESULTS.md (quick: bench/RESULTS.quick.md, so a quick
 * check never overwrites the published figures). Options (`npm run bench -- --help`):
 */
const USAGE = `npm run bench -- [--quick] [--only=1,3] [--out=<file>] [--help]
  --quick       every part briefly (under a minute), written to bench/RESULTS.quick.md
  --only=1,3    only these parts: 1 cold start, 2 protocol, 3 throughput, 4 end to end,
                5 poll cost, 6 reply splitter, 7 live answers, 8 guardrail, 9 bounded waits,
                10 steps and questions (the file written holds only the
                parts run: with --only, pass --out to keep RESULTS.md whole)
  --out=<file>  write the results elsewhere
Parts 1 and 3 load the bench's own packages (bench/package.json: the peers, the load generator,
the small AWS clients); before they run, npm ci in bench/ installs them when bench/node_modules
is missing or older than bench/package-lock.json.
`;

type Settings = {
  coldStartRounds: number;
  probeRounds: number;
  protocolSamples: number;
  protocolSampleMs: number;
  throughput: { rounds: number; durationSeconds: number; warmupSeconds: number; connections: number; profileSeconds: number };
  endToEnd: { eventsPerTransport: number; warmupEvents: number; chunk: number };
  warmRuns: number;
  splitter: { samples: number; budgetMs: number };
  boundedWaitRounds: number;
  liveAnswers: LiveAnswersOptions;
  guardrail: { samples: number; answers: number; words: number; wordMs: number };
  stepsQuestions: { tasks: number; steps: number; stepMs: number; resumeRounds: number };
};

const FULL: Settings = {
  coldStartRounds: 15,
  probeRounds: 8,
  protocolSamples: 30,
  protocolSampleMs: 20,
  throughput: { rounds: 5, durationSeconds: 10, warmupSeconds: 2, connections: 50, profileSeconds: 5 },
  endToEnd: { eventsPerTransport: 300, warmupEvents: 20, chunk: 25 },
  warmRuns: 50,
  splitter: { samples: 20, budgetMs: 5_000 },
  boundedWaitRounds: 20,
  // 60 words at 20 words/s (ECHO_STREAM_MS=50, and the A2A agent's #delay): a 3 s answer, in real time.
  liveAnswers: { eventsPerTransport: 8, warmupEvents: 1, handOverEvents: 2, words: 60, wordMs: 50 },
  // The same 60-word answers at 20 words/s as part 7, through the output guardrail's stream masker.
  guardrail: { samples: 20, answers: 200, words: 60, wordMs: 50 },
  // 40 tasks of 3 steps (240 state changes), a change every 150 ms as an agent's tool calls come; 30 questions answered.
  stepsQuestions: { tasks: 40, steps: 3, stepMs: 150, resumeRounds: 30 },
};

const QUICK: Settings = {
  coldStartRounds: 3,
  probeRounds: 2,
  protocolSamples: 8,
  protocolSampleMs: 10,
  throughput: { rounds: 1, durationSeconds: 3, warmupSeconds: 1, connections: 50, profileSeconds: 2 },
  endToEnd: { eventsPerTransport: 40, warmupEvents: 5, chunk: 20 },
  warmRuns: 15,
  splitter: { samples: 5, budgetMs: 2_000 },
  boundedWaitRounds: 3,
  liveAnswers: { eventsPerTransport: 2, warmupEvents: 1, handOverEvents: 1, words: 60, wordMs: 50 },
  guardrail: { samples: 5, answers: 50, words: 60, wordMs: 50 },
  stepsQuestions: { tasks: 5, steps: 3, stepMs: 150, resumeRounds: 5 },
};

/** A per-poll billed duration closer to AWS than loopback: AgentCore round trip plus an SQS send. */
const ASSUMED_AWS_POLL_MS = 100;

function parseArgs(argv: readonly string[]): { quick: boolean; parts: Set<number>; out: string } {
  const quick = argv.includes('--quick');
  const only = argv.find((arg) => arg.startsWith('--only='));
  const parts = new Set(only ? only.slice('--only='.length).split(',').map(Number) : [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const outArg = argv.find((arg) => arg.startsWith('--out='));
  const out = outArg ? outArg.slice('--out='.length) : join(__dirname, quick ? 'RESULTS.quick.md' : 'RESULTS.md');
  return { quick, parts, out };
}

async function main(): Promise<number> {
  if (process.argv.includes('--help')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { quick, parts, out } = parseArgs(process.argv.slice(2));
  const settings = quick ? QUICK : FULL;
  if (parts.has(1) || parts.has(3)) ensureBenchPackages((line) => process.stdout.write(`${line}\n`));
  // The fakes this process hosts are not measured: keep their logs out of the way. Measured
  // children get the default level back (see measuredEnv).
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

  // Inside the repo (ignored by git's `.tmp/` rule) so child bundles resolve node_modules.
  await mkdir(join(__dirname, '.tmp'), { recursive: true });
  const workDir = await mkdtemp(join(__dirname, '.tmp', 'run-'));
  const started = Date.now();
  const results: BenchResults = { quick, startedAt: new Date(started), durationSeconds: 0, loadAverageAtStart: loadAverage(), failures: [] };
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const part = async (n: number, name: string, run: () => Promise<void>) => {
    if (!parts.has(n)) return;
    const partStarted = Date.now();
    log(`[${n}] ${name}`);
    try {
      await run();
    } catch (error) {
      const message = String((error as Error)?.stack ?? error);
      results.failures.push({ part: `${n}. ${name}`, error: message });
      log(`[${n}] FAILED: ${message}`);
    } finally {
      await stopAll();
      log(`[${n}] done in ${((Date.now() - partStarted) / 1000).toFixed(0)} s`);
    }
  };

  try {
    await part(1, 'cold start of every Lambda bundle', async () => {
      results.coldStart = await runColdStart({ rounds: settings.coldStartRounds, probeRounds: settings.probeRounds, workDir: join(workDir, 'cold-start'), log });
    });
    await part(2, 'protocol overhead', async () => {
      results.protocol = await runProtocolOverhead({ samples: settings.protocolSamples, sampleMs: settings.protocolSampleMs, log });
    });
    await part(3, 'execution runtime throughput', async () => {
      results.throughput = await runThroughput({ ...settings.throughput, workDir: join(workDir, 'throughput'), log });
    });
    await part(4, 'end to end, locally', async () => {
      results.endToEnd = await runEndToEnd({ ...settings.endToEnd, workDir: join(workDir, 'end-to-end'), log });
    });
    await part(5, 'cost of following a long task', async () => {
      results.pollCost = await runPollCost({ warmRuns: settings.warmRuns, workDir: join(workDir, 'poll-cost'), assumedPollMs: ASSUMED_AWS_POLL_MS, log });
    });
    await part(6, 'reply splitter on pathological text', async () => {
      results.splitter = runReplySplitter({ ...settings.splitter, log });
    });
    await part(7, 'live answers', async () => {
      results.liveAnswers = await runLiveAnswers({ ...settings.liveAnswers, workDir: join(workDir, 'live-answers'), log });
    });
    await part(8, 'guardrail: masking and the stream masker', async () => {
      results.guardrail = await runGuardrailBench({ ...settings.guardrail, log });
    });
    await part(9, 'bounded waits', async () => {
      results.boundedWaits = await runBoundedWaits({ rounds: settings.boundedWaitRounds, log });
    });
    await part(10, 'steps and questions', async () => {
      results.stepsQuestions = await runStepsQuestions({ ...settings.stepsQuestions, log });
    });
  } finally {
    await stopAll();
    await rm(workDir, { recursive: true, force: true });
    await rmdir(join(__dirname, '.tmp')).catch(() => undefined);
  }

  results.durationSeconds = (Date.now() - started) / 1000;
  // The rehearsal's section (npm run rehearse -- --record) is not the bench's to drop.
  const kept = existingRehearsalSection(await readFile(out, 'utf8').catch(() => ''));
  await writeFile(out, kept ? withRehearsalSection(renderResults(results), kept) : renderResults(results));
  log(`wrote ${out} (${results.durationSeconds.toFixed(0)} s)`);
  return results.failures.length ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
    await stopAll();
    process.exit(1);
  },
);
