import { cpSync, rmSync } from 'node:fs';
import { startFakeSlackApi, type FakeSlackApi } from '../../test/support/fake-slack-api';
import { deploy, type Deployment } from './deployment';
import { rehearsalRuntime, type RehearsalRuntime } from './node22';
import { runProofs, type Proof } from './proofs';
import { synthesize } from './synth';
import { readAssembly, type Assembly } from './template-functions';

/**
 * `npm run rehearse`: synthesize the stacks as `cdk deploy` would, start every Lambda bundle of
 * the assembly under AWS's Runtime Interface Client on Node 22 against loopback AWS and the fake
 * Slack API, and run the proofs (tools/rehearse/proofs.ts): a Slack message becomes one reply in
 * Slack, through API Gateway, SQS event source mappings, the function URL's response stream and
 * the worker. docs/deploy.md, "Rehearse before you deploy", says what it covers and what not.
 */
export type RehearsalReport = {
  node: string;
  ric: string;
  /** Each function's init duration (spawn to its first /next), in the order they started. */
  initDurations: Array<{ name: string; ms: number }>;
  proofs: Proof[];
};

export const SIGNING_SECRET = 'rehearsal-signing-secret-0b7c2e';

/** The context the rehearsal adds to cdk.json's: where Slack is, and how to sign for a function URL on a loopback host. */
export function rehearsalContext(slack: Pick<FakeSlackApi, 'apiUrl'>): Record<string, string> {
  return {
    // A loopback host does not say which service it is (lambda-url.<region>.on.aws does): named here.
    verificationEnvironment: JSON.stringify({ SLACK_API_URL: slack.apiUrl, EXECUTION_SIGV4_SERVICE: 'lambda' }),
  };
}

export type Rehearsal = { runtime: RehearsalRuntime; slack: FakeSlackApi; assembly: Assembly; deployment: Deployment; close(): Promise<void> };

/** Synthesizes the app for a fake Slack API started here and starts every function of the assembly on loopback. */
export async function startRehearsal(options: { maxWaitMs: number; log?: (line: string) => void }): Promise<Rehearsal> {
  const log = options.log ?? (() => undefined);
  const runtime = rehearsalRuntime();
  log(`Node ${runtime.nodeVersion}, aws-lambda-ric ${runtime.ricVersion}`);
  log('synthesizing: npx cdk synth (transport=https, bundling with the local esbuild)…');
  const slack = await startFakeSlackApi();
  let outdir: string | undefined;
  const release = async () => {
    await slack.close();
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  };
  try {
    outdir = await synthesize(rehearsalContext(slack));
    const assembly = readAssembly(outdir);
    log(`starting ${assembly.functions.length} functions: ${assembly.functions.map((fn) => fn.name).join(', ')}`);
    const deployment = await deploy(assembly, {
      runtime,
      maxWaitMs: options.maxWaitMs,
      secretValues: (variable) => ({ SLACK_SIGNING_SECRET_ARN: SIGNING_SECRET, SLACK_BOT_TOKEN_ARN: slack.token })[variable],
    });
    return {
      runtime,
      slack,
      assembly,
      deployment,
      close: async () => {
        await deployment.close();
        await release();
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}

export async function rehearse(options: { maxWaitMs: number; log?: (line: string) => void; keepAssemblyIn?: string }): Promise<RehearsalReport> {
  const log = options.log ?? (() => undefined);
  const rehearsal = await startRehearsal(options);
  try {
    if (options.keepAssemblyIn) cpSync(rehearsal.assembly.dir, options.keepAssemblyIn, { recursive: true });
    const initDurations = [...rehearsal.deployment.functions.values()].map((fn) => ({ name: fn.name, ms: fn.initDurationMs }));
    for (const { name, ms } of initDurations) log(`  ${name}: init ${ms} ms`);
    const proofs = await runProofs({ ...rehearsal, signingSecret: SIGNING_SECRET }, { maxWaitMs: options.maxWaitMs, log });
    return { node: rehearsal.runtime.nodeVersion, ric: rehearsal.runtime.ricVersion, initDurations, proofs };
  } finally {
    await rehearsal.close();
  }
}
