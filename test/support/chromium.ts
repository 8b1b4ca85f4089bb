import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Flags for a headless Chromium on a machine with a closed network (no background calls home). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Debian's Chromium, installed with apt-get when missing (never a browser download). Returns why
 * it is unavailable, or undefined when it is there.
 */
export function ensureChromium(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  const apt = (args: string[]) => spawnSync('apt-get', args, { stdio: 'ignore', timeout: 600_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (process.getuid?.() !== 0) return `${CHROMIUM_PATH} is missing and installing it needs root (apt-get install chromium)`;
  apt(['update', '-qq']);
  const install = apt(['install', '-y', '-qq', 'chromium']);
  if (existsSync(CHROMIUM_PATH)) return undefined;
  return `apt-get install chromium failed (exit ${install.status ?? install.error?.message}); the playground browser test cannot run`;
}
