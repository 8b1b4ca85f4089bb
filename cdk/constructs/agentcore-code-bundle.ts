import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { AgentCoreRuntime, AgentRuntimeArtifact, type CfnRuntime, type Runtime } from 'aws-cdk-lib/aws-bedrockagentcore';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import type { Construct } from 'constructs';
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
 * - The runtime's role may read that one object (`CodeObjectArtifact`), not the assets bucket.
 */
export function agentCoreCodeArtifact(scope: Construct, id: string, entry: string = AGENTCORE_ENTRY): AgentRuntimeArtifact {
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
  const asset = new Asset(scope, id, {
    path: path.dirname(entryPath),
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      local,
      // Required by the type; never pulled: local bundling either succeeds or throws.
      image: DockerImage.fromRegistry('dummy'),
    },
  });
  return new CodeObjectArtifact(asset, AgentCoreRuntime.NODE_22, ['main.js']);
}

/**
 * The code zip as AgentCore's CodeConfiguration names it (bucket and key), with read access for the
 * runtime's role to exactly that object: `s3:GetObject` on `<assets bucket>/<hash>.zip`.
 *
 * `AgentRuntimeArtifact.fromCodeAsset` (and `fromS3`) grant `s3:GetObject*`, `s3:GetBucket*` and
 * `s3:List*` on the whole CDK assets bucket — every asset of every stack deployed to the account
 * and region. AgentCore reads the zip at CreateAgentRuntime / UpdateAgentRuntime with the
 * deploying principal's permissions (CloudFormation's, through the CDK deploy role); the runtime
 * role keeps read access to its own object, which is what the L2 gives it, minus the rest of the
 * bucket. The bootstrap bucket is encrypted with the AWS-managed key (or SSE-S3), which needs no
 * kms grant; a customer key (`cdk bootstrap --bootstrap-customer-key`) would.
 */
class CodeObjectArtifact extends AgentRuntimeArtifact {
  /** Renders the S3 location exactly as the L2 does; never bound, so it grants nothing. */
  private readonly location: AgentRuntimeArtifact;
  private granted = false;

  constructor(
    private readonly asset: Asset,
    runtime: AgentCoreRuntime,
    entrypoint: string[],
  ) {
    super();
    this.location = AgentRuntimeArtifact.fromS3({ bucketName: asset.s3BucketName, objectKey: asset.s3ObjectKey }, runtime, entrypoint);
  }

  /** The ARN of the one object the runtime runs. */
  get objectArn(): string {
    return this.asset.bucket.arnForObjects(this.asset.s3ObjectKey);
  }

  bind(_scope: Construct, runtime: Runtime): void {
    if (this.granted) return;
    Grant.addToPrincipal({ grantee: runtime.role, actions: ['s3:GetObject'], resourceArns: [this.objectArn] });
    this.granted = true;
  }

  _render(): CfnRuntime.AgentRuntimeArtifactProperty {
    return this.location._render();
  }
}
