import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fixtures } from './protocol-overhead';
import { ID_PLACEHOLDER, requestIdFor, SERVER_KINDS, type LoadFigures, type LoadOptions, type ServerKind } from './support/throughput-shared';
import { pairedRatios, rotate, summarize, type Summary } from './stats';
import { STARTUP_FRAME, attribute, type Attribution, type CpuProfile, type Frame, type Marker } from './support/cpu-profile';
import { HAS_TASKSET, bundleProgram, measuredEnv, pinned, spawnTracked, stop } from './support/processes';

/**
 * Part 3: the execution runtime's HTTP host under load on 127.0.0.1, echo executor, next to the
 * same method served by jayson and by json-rpc-2.0 over node:http, and by a bare JSON.parse /
 * JSON.stringify server (the floor). Server pinned to core 1, autocannon to core 0 (taskset).
 * Each round starts every server afresh, in a new order; each run has an untimed warm-up first.
 */
const ROOT = join(__dirname, '..');
const PEERS = join(__dirname, 'peers');
const SERVER_CORE = 1;
const LOAD_CORE = 0;

export type ThroughputRun = LoadFigures & { kind: ServerKind; round: number };

export type ThroughputResult = {
  rounds: number;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  bodyBytes: number;
  pinned: boolean;
  runs: ThroughputRun[];
  rps: Record<ServerKind, Summary>;
  p99: Record<ServerKind, Summary>;
  p50: Record<ServerKind, Summary>;
  /** ours / peer, per round. */
  rpsRatio: Record<Exclude<ServerKind, 'ours'>, Summary>;
  p99Ratio: Record<Exclude<ServerKind, 'ours'>, Summary>;
  /** Where ours spends its CPU under the same load (one extra run under --cpu-prof). */
  profile?: Attribution & { seconds: number; requestsPerSecond: number };
};

export type ThroughputOptions = {
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  /** 0: no profile run. */
  profileSeconds: number;
  workDir: string;
  log: (line: string) => void;
};

const fromPackage = (name: string) => (frame: { url: string }) => frame.url.includes(`/node_modules/${name}/`);
/** A function of ours (the profiling bundle keeps names; packages stay in node_modules, so their frames are told apart by url). */
const ours = (...names: string[]) => (frame: Frame) => frame.url.endsWith('throughput-profile.js') && names.includes(frame.functionName);
/**
 * What the runtime does per request, and what the peers do not: zod (the envelope and the params
 * are checked by their schemas); then what issue 14 removed from the hot path (all ~0 %); then
 * what is left.
 */
const PROFILE_MARKERS: Marker[] = [
  { label: 'node:http and the socket (parsing, writes)', matches: (f) => /^node:(_http_|net$|internal\/stream_base_commons)/.test(f.url) || f.functionName === 'writev' },
  { label: 'garbage collection', matches: (f) => f.functionName === '(garbage collector)' },
  { label: 'zod (the envelope and the params, checked by their schemas)', matches: fromPackage('zod') },
  { label: 'Powertools `Logger.createChild` (the per-task child logger of `taskLogger`)', matches: (f) => f.functionName === 'createChild' && fromPackage('@aws-lambda-powertools/logger')(f) },
  { label: 'Powertools writing log lines (`processLogItem`)', matches: (f) => f.functionName === 'processLogItem' && fromPackage('@aws-lambda-powertools/logger')(f) },
  { label: 'all Powertools code (logger and commons)', matches: (f) => f.url.includes('/node_modules/@aws-lambda-powertools/') },
  { label: 'timers (node:internal/timers; a task has none of its own now)', matches: (f) => f.url === 'node:internal/timers' },
  { label: 'AbortController (made only when an executor reads its signal)', matches: (f) => f.url === 'node:internal/abort_controller' },
  { label: '`TaskService.executeTask` (the task, from its request key to its answer)', matches: (f) => f.functionName === 'executeTask' },
  { label: '… of it, `paramsHashOf` (canonical JSON of the params and its SHA-256: the repeated-id check)', matches: ours('paramsHashOf') },
  { label: '… of it, the memory task store (create, two transitions, eviction of the oldest record)', matches: ours('create', 'transition', 'makeRoom', 'live', 'liveByRequest', 'drop', 'expired') },
  // The dispatcher's own work (what the bare server does too), not the method it calls: JSON.parse runs inside `dispatch`, JSON.stringify inside `text`.
  { label: 'the dispatcher itself: body decoding, JSON.parse, envelope check, JSON.stringify of the answer', stack: (frames) => ours('dispatch', 'text', 'route')(frames[0]!) || frames.some(ours('bodyText')) },
];

type Programs = { server: string; load: string };

/** Servers and load generator as plain JS bundles: no TypeScript loader inside a measured process. */
async function buildPrograms(workDir: string): Promise<Programs> {
  return {
    server: await bundleProgram(workDir, 'throughput-server', PEERS, "import { serveFromArgv } from './servers'; serveFromArgv();"),
    load: await bundleProgram(workDir, 'throughput-load', PEERS, "import { loadFromArgv } from './load'; loadFromArgv();"),
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One request, and the answer must be the echo result for that very id. */
async function checkAnswer(url: string, template: string, id: string): Promise<string | undefined> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: template.replace(ID_PLACEHOLDER, JSON.stringify(id)) });
  if (response.status !== 200) return `HTTP ${response.status}`;
  const body = (await response.json()) as { jsonrpc?: string; id?: unknown; result?: { status?: string; response_text?: string } };
  if (body.jsonrpc !== '2.0' || body.id !== id || body.result?.status !== 'success' || !body.result.response_text?.startsWith('echo: ')) {
    return `unexpected answer ${JSON.stringify(body).slice(0, 200)}`;
  }
  return undefined;
}

async function waitUntilServing(url: string, template: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not started';
  while (Date.now() < deadline) {
    try {
      const problem = await checkAnswer(url, template, requestIdFor(0xfffff000 + Math.floor(Math.random() * 0xfff)));
      if (!problem) return;
      throw new Error(problem);
    } catch (error) {
      last = String((error as Error).message ?? error);
      if (!/ECONNREFUSED|fetch failed/.test(last)) throw new Error(`${url}: ${last}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not start within ${timeoutMs} ms: ${last}`);
}

async function runLoadChild(programs: Programs, options: LoadOptions): Promise<LoadFigures> {
  const { command, args } = pinned(LOAD_CORE, process.execPath, [programs.load, JSON.stringify(options)]);
  const child = spawnTracked(command, args, { cwd: ROOT, env: measuredEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`load generator failed (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadFigures;
}

async function measureServer(programs: Programs, kind: ServerKind, round: number, template: string, options: ThroughputOptions, idBase: number): Promise<ThroughputRun> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/invocations`;
  const { command, args } = pinned(SERVER_CORE, process.execPath, [programs.server, kind, String(port)]);
  // stdout is where the runtime's logs go (as on AgentCore): to /dev/null here.
  const server = spawnTracked(command, args, { cwd: ROOT, env: measuredEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  server.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  try {
    await waitUntilServing(url, template, 30_000).catch((error: unknown) => {
      throw new Error(`${kind}: ${(error as Error).message}\n${stderr}`);
    });
    const base = { url, connections: options.connections, bodyTemplate: template };
    await runLoadChild(programs, { ...base, durationSeconds: options.warmupSeconds, firstId: idBase });
    const figures = await runLoadChild(programs, { ...base, durationSeconds: options.durationSeconds, firstId: idBase + 50_000_000 });
    const problem = await checkAnswer(url, template, requestIdFor(idBase + 99_999_999));
    if (problem) throw new Error(`${kind} answered wrongly after the load: ${problem}`);
    if (figures.non2xx > 0 || figures.errors > 0) throw new Error(`${kind}: ${figures.non2xx} non-2xx answers and ${figures.errors} errors under load`);
    return { kind, round, ...figures };
  } finally {
    await stop(server);
  }
}

/** One more run of ours under `--cpu-prof`, from a bundle that keeps packages in node_modules so frames say whose code ran. */
async function profileOurs(template: string, options: ThroughputOptions, programs: Programs): Promise<ThroughputResult['profile']> {
  const server = await bundleProgram(options.workDir, 'throughput-profile', PEERS, "import { serveFromArgv } from './servers'; serveFromArgv();", { forProfiling: true });
  const profileDir = join(options.workDir, 'cpu-profile');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/invocations`;
  const { command, args } = pinned(SERVER_CORE, process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, server, 'ours', String(port)]);
  const child = spawnTracked(command, args, { cwd: ROOT, env: measuredEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let figures: LoadFigures;
  try {
    await waitUntilServing(url, template, 30_000);
    figures = await runLoadChild(programs, { url, connections: options.connections, durationSeconds: options.profileSeconds, bodyTemplate: template, firstId: 7_000_000_000 });
  } finally {
    // SIGTERM: the server closes and exits, and node writes the profile on the way out.
    await stop(child, 10_000);
  }
  const file = (await readdir(profileDir)).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the profiled server wrote no profile');
  const profile = JSON.parse(await readFile(join(profileDir, file), 'utf8')) as CpuProfile;
  // Start-up (module loading) is left out: the shares describe the server under load.
  return { ...attribute(profile, PROFILE_MARKERS, { exclude: STARTUP_FRAME }), seconds: options.profileSeconds, requestsPerSecond: figures.requestsPerSecond };
}

export async function runThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  const { request } = fixtures();
  const template = JSON.stringify({ ...request, id: '__ID__' });
  const bodyBytes = Buffer.byteLength(template) - ID_PLACEHOLDER.length + JSON.stringify(requestIdFor(0)).length;
  const programs = await buildPrograms(options.workDir);
  const runs: ThroughputRun[] = [];
  let idBase = 0;
  for (let round = 0; round < options.rounds; round += 1) {
    for (const kind of rotate(SERVER_KINDS, round)) {
      idBase += 100_000_000;
      const run = await measureServer(programs, kind, round, template, options, idBase);
      runs.push(run);
      options.log(`  round ${round + 1}/${options.rounds} ${kind}: ${run.requestsPerSecond.toFixed(0)} req/s, p99 ${run.latencyP99Ms} ms`);
    }
  }
  const byKind = (kind: ServerKind, pick: (run: ThroughputRun) => number) =>
    runs
      .filter((run) => run.kind === kind)
      .sort((a, b) => a.round - b.round)
      .map(pick);
  const profile = options.profileSeconds > 0 ? await profileOurs(template, options, programs) : undefined;
  if (profile) options.log(`  profile of ours: ${profile.shares.map((share) => `${(share.share * 100).toFixed(0)}% ${share.label.split(' (')[0]}`).join(', ')}`);
  const per = (pick: (run: ThroughputRun) => number) => Object.fromEntries(SERVER_KINDS.map((kind) => [kind, summarize(byKind(kind, pick))])) as Record<ServerKind, Summary>;
  const peers = SERVER_KINDS.filter((kind): kind is Exclude<ServerKind, 'ours'> => kind !== 'ours');
  const ratio = (pick: (run: ThroughputRun) => number) =>
    Object.fromEntries(peers.map((peer) => [peer, summarize(pairedRatios(byKind('ours', pick), byKind(peer, pick)))])) as Record<Exclude<ServerKind, 'ours'>, Summary>;
  return {
    rounds: options.rounds,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    warmupSeconds: options.warmupSeconds,
    bodyBytes,
    pinned: HAS_TASKSET,
    runs,
    rps: per((run) => run.requestsPerSecond),
    p99: per((run) => run.latencyP99Ms),
    p50: per((run) => run.latencyP50Ms),
    rpsRatio: ratio((run) => run.requestsPerSecond),
    p99Ratio: ratio((run) => run.latencyP99Ms),
    ...(profile ? { profile } : {}),
  };
}
