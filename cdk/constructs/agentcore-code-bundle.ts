import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { AgentCoreRuntime, AgentRuntimeArtifact } from 'aws-cdk-lib/aws-bedrockagentcore';
import { buildSync } from 'esbuild';
import { PROJECT_ROOT } from '../project-root';

/** The runtime host the AgentCore code deploy starts: it listens on 0.0.0.0:8080 itself. */
export const AGENTCORE_ENTRY = 'src/execution/hosts/agentcore-main.ts';

/**
 * Builds the zip AgentCore's NODE_22 code deploy runs, without Docker: esbuild bundles the
 * runtime host into one CommonJS `main.js` at the zip root, beside a `package.json` of
 * `{"type":"commonjs"}` (the layout the official agentcore CLI produces).
 *
 * - Everything is bundled, the AWS SDK included: the AgentCore runtime, unlike Lambda, has no SDK
 *   preinstalled. The bundle is pure JavaScript, so it runs on AgentCore's arm64 hosts as is.
 * - It runs as CDK local bundling, so CDK stages it in cdk.out, hashes the output (same sources,
 *   same hash, no redeploy), and skips it for stacks a command does not need
 *   (`cdk deploy VerificationZone` does not build it).
 * - The source map has no sources content (the zip stays small; stack traces still name the
 *   TypeScript file and line, with NODE_OPTIONS=--enable-source-maps).
 */
export function agentCoreCodeArtifact(entry: string = AGENTCORE_ENTRY): AgentRuntimeArtifact {
  const entryPath = path.join(PROJECT_ROOT, entry);
  if (!fs.existsSync(entryPath)) throw new Error(`the AgentCore entry point ${entry} does not exist`);
  const local: ILocalBundling = {
    tryBundle(outputDir: string): boolean {
      const result = buildSync({
        entryPoints: [entryPath],
        outfile: path.join(outputDir, 'main.js'),
        absWorkingDir: PROJECT_ROOT,
        bundle: true,
        platform: 'node',
        target: 'node22',
        format: 'cjs',
        mainFields: ['module', 'main'],
        minify: true,
        sourcemap: 'linked',
        sourcesContent: false,
        logLevel: 'silent',
      });
      if (result.errors.length > 0) throw new Error(`esbuild failed for ${entry}: ${result.errors.map((e) => e.text).join('; ')}`);
      fs.writeFileSync(path.join(outputDir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
      return true;
    },
  };
  return AgentRuntimeArtifact.fromCodeAsset({
    path: path.dirname(entryPath),
    runtime: AgentCoreRuntime.NODE_22,
    entrypoint: ['main.js'],
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      local,
      // Required by the type; never pulled: local bundling either succeeds or throws.
      image: DockerImage.fromRegistry('dummy'),
    },
  });
}
