import { chromiumExecutable } from './chromium';

/**
 * Runs once before the test workers start. It says in one line what the run uses that differs
 * from a deployment, and unpacks the browser tests' Chromium once, so parallel suites never race
 * to unpack it into the same temp folder.
 */
export default async function globalSetup(): Promise<void> {
  const notes: string[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  // jest-env.ts silences the AWS SDK's per-process notice that its 2027 releases need Node 22;
  // this is the one line that says so.
  if (major < 22) notes.push(`Node ${process.version} (the Lambdas run nodejs22.x; the AWS SDK's Node 22 notice is silenced)`);
  try {
    const chromium = await chromiumExecutable();
    notes.push(`Chromium from ${chromium.from}`);
  } catch (error) {
    // The browser suites fail with this reason themselves; here it is only said once, up front.
    notes.push(`no Chromium: ${(error as Error).message}`);
  }
  process.stderr.write(`\n[tests] ${notes.join('; ')}\n`);
}
