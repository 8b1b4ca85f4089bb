import { accessSync, constants } from 'node:fs';

/** Debian's Chromium; `CHROMIUM_PATH` points the browser tests at another Chromium build. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

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

/** `CI` set to anything but `false` or `0` (GitHub Actions, GitLab and .ci/run set `CI=true`). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * Why Debian's Chromium cannot be used here, or undefined when it can. Nothing is installed from a
 * test: `.ci/run` installs it (`apt-get install chromium`), and so can a developer.
 */
export function chromiumUnavailable(): string | undefined {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return undefined;
  } catch {
    return `${CHROMIUM_PATH} is missing: install Debian's Chromium (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH to run the browser tests`;
  }
}

/**
 * A describe block that needs Chromium. With it, the tests run. Without it, the block is one
 * failing test that says what is missing: a browser test that does not run is never a pass, nor a
 * silent skip (`.ci/run` installs Debian's Chromium; elsewhere, `apt-get install chromium` or
 * CHROMIUM_PATH).
 */
export function describeWithChromium(name: string, body: () => void): void {
  const unavailable = chromiumUnavailable();
  if (!unavailable) return describe(name, body);
  describe(name, () => {
    it('has Chromium to run in', () => {
      throw new Error(`${unavailable}. The browser tests must run, so their absence fails here${inCi() ? ' (CI)' : ''}.`);
    });
  });
}
