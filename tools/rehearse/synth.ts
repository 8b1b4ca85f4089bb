import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../cdk/project-root';

/**
 * `npx cdk synth` as an operator runs it before `cdk deploy` (cdk.json's app and context, bundling
 * by the local esbuild, no Docker and no AWS credentials), into a fresh directory. The rehearsal
 * deploys the function URL host (`transport=https`), so every part of both zones is a Lambda
 * function; the AgentCore host's bundle is started by test/cdk/bundling.test.ts.
 */
export const REHEARSAL_CONTEXT = {
  transport: 'https',
  executionAccountId: '111111111111',
  region: 'us-east-1',
} as const;

export async function synthesize(context: Record<string, string>, options: { timeoutMs?: number } = {}): Promise<string> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'rehearse-cdk-'));
  const args = ['cdk', 'synth', '--quiet', '--no-notices', '--output', outdir, ...Object.entries({ ...REHEARSAL_CONTEXT, ...context }).flatMap(([key, value]) => ['-c', `${key}=${value}`])];
  const child = spawn('npx', args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true' } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timeoutMs = options.timeoutMs ?? 240_000;
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  if (code !== 0) throw new Error(`npx ${args.join(' ')} failed (exit ${code ?? `killed after ${timeoutMs} ms`}):\n${output.trim().split('\n').slice(-20).join('\n')}`);
  return outdir;
}
