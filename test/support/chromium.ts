import { accessSync, constants } from 'node:fs';

/**
 * Where the browser tests get Chromium. `CHROMIUM_PATH` names a system Chromium (Debian's
 * `/usr/bin/chromium`, say); without it they use the Chromium that `npm ci` installed:
 * `@sparticuz/chromium` carries a headless Chromium build inside its npm package and unpacks it
 * into the temp folder on first use (about 1.5 s, then cached there), so a bare machine with only
 * Node runs them too (README, "Dependencies").
 */
export type ChromiumSource = { path: string; from: 'CHROMIUM_PATH' | '@sparticuz/chromium' };

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
 * The Chromium to drive: the configured one, else the npm package's (unpacked on first use; jest's
 * global setup does that once, before the workers start, so two suites never unpack it at once).
 * Throws with what is missing — a browser test that cannot run fails, it is never skipped.
 */
export async function chromiumExecutable(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumSource> {
  const configured = env.CHROMIUM_PATH?.trim();
  if (configured) {
    try {
      accessSync(configured, constants.X_OK);
    } catch {
      throw new Error(`CHROMIUM_PATH=${configured} is not an executable file: point it at a Chromium build, or unset it to use the Chromium npm ci installed (@sparticuz/chromium)`);
    }
    return { path: configured, from: 'CHROMIUM_PATH' };
  }
  try {
    // Loaded only here: the package sets up its library path when it loads.
    const { default: packaged } = await import('@sparticuz/chromium');
    return { path: await packaged.executablePath(), from: '@sparticuz/chromium' };
  } catch (error) {
    throw new Error(`the Chromium from @sparticuz/chromium could not be unpacked (${(error as Error).message}); run npm ci, or set CHROMIUM_PATH to a system Chromium`);
  }
}
