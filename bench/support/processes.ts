import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * Every child the bench starts goes through here, so `stopAll()` (called in run.ts's finally and
 * on exit) can end them by pid: `npm run bench` must leave nothing running.
 */
const children = new Set<ChildProcess>();

export const HAS_TASKSET = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' }).status === 0;

/** `command args…`, pinned to `core` with taskset when the machine has it. */
export function pinned(core: number | undefined, command: string, args: readonly string[]): { command: string; args: string[] } {
  if (core === undefined || !HAS_TASKSET) return { command, args: [...args] };
  return { command: 'taskset', args: ['-c', String(core), command, ...args] };
}

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function spawnTracked(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  return track(spawn(command, args, options));
}

/** Ends one child: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 2000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => stop(child)));
}

process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** The environment measured children run in: the default log level, whatever the bench itself uses. */
export function measuredEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.POWERTOOLS_LOG_LEVEL;
  delete env.LOG_LEVEL;
  delete env.POWERTOOLS_DEV;
  delete env.POWERTOOLS_METRICS_DISABLED;
  return env;
}

/**
 * A child program as one plain JS file (esbuild, node22, cjs, minified), so no TypeScript loader
 * runs inside a measured process. `contents` is the entry's source, resolved from `resolveDir`.
 * esbuild itself stays outside: the orchestration code that imports it is never called in a child.
 * The file must live inside the repository, so what stays external resolves from node_modules.
 */
export async function bundleProgram(workDir: string, name: string, resolveDir: string, contents: string, options: { forProfiling?: boolean } = {}): Promise<string> {
  await mkdir(workDir, { recursive: true });
  const outfile = join(workDir, `${name}.js`);
  await build({
    stdin: { contents, resolveDir, loader: 'ts', sourcefile: `${name}-main.ts` },
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    mainFields: ['module', 'main'],
    // For a CPU profile: readable names, and packages left in node_modules so frames say whose code ran.
    minify: !options.forProfiling,
    ...(options.forProfiling ? { packages: 'external' as const } : {}),
    external: ['esbuild'],
    logLevel: 'error',
    absWorkingDir: join(__dirname, '..', '..'),
  });
  return outfile;
}
