import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The bench's own packages (bench/package.json: Bolt, jayson, json-rpc-2.0, autocannon, the small
 * AWS clients) are not the project's, so the project's `npm ci` leaves them out. Parts 1 and 3
 * load them; before either runs, `npm ci` in bench/ installs them when bench/node_modules is
 * missing or older than bench/package-lock.json. Modules resolve upward from the importing file,
 * so bench/peers finds them in bench/node_modules and everything else in the root's.
 */
const BENCH = join(__dirname, '..');

export function benchPackagesInstalled(): boolean {
  const installed = join(BENCH, 'node_modules', '.package-lock.json');
  return existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(BENCH, 'package-lock.json')).mtimeMs;
}

export function ensureBenchPackages(log: (line: string) => void): void {
  if (benchPackagesInstalled()) return;
  log('installing the bench’s own packages (bench/package.json: npm ci in bench/)');
  const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: BENCH, stdio: ['ignore', 'inherit', 'inherit'], shell: process.platform === 'win32' });
  if (npm.status !== 0) throw new Error(`npm ci in ${BENCH} failed (${npm.error?.message ?? `exit code ${npm.status}`})`);
}
