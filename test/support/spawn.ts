import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ZONE_BIN = join(__dirname, '..', '..', 'bin', 'zone.js');

export type Spawned = {
  child: ChildProcess;
  output: () => string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Ends it (SIGTERM) if it still runs; resolves with its exit code (null when a signal ended it). */
  stop(): Promise<number | null>;
  /** Resolves with its exit code once it ends by itself (killed after `timeoutMs`, then null). */
  ended(timeoutMs?: number): Promise<number | null>;
};

/** Runs the real `zone` command as a child process, as a user would. */
export function spawnZone(args: string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(process.execPath, [ZONE_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    waitFor: (pattern, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const check = () => {
          const match = output.match(pattern);
          if (match) return resolve(match);
          if (child.exitCode !== null || Date.now() - started > timeoutMs) return reject(new Error(`no ${pattern} in output:\n${output}`));
          setTimeout(check, 25);
        };
        check();
      }),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    ended: async (timeoutMs = 20_000) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Runs `zone` to completion and returns its exit code and output. */
export async function runZone(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  const run = spawnZone(args, env);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => run.child.on('exit', resolve));
  clearTimeout(timer);
  return { code, output: run.output() };
}
