import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The Lambda functions of a cloud assembly (cdk.out) as CloudFormation receives them: handler,
 * runtime, memory, timeout and environment from the stack templates, the code from the asset the
 * stack's asset manifest publishes under the function's S3 key. Nothing here is retyped from the
 * CDK code: a rename there shows up here as the template has it.
 */
export type Template = { Resources: Record<string, Resource>; Outputs?: Record<string, { Value: unknown }> };
export type Resource = { Type: string; Properties?: Record<string, any>; Metadata?: Record<string, unknown> };

export type Stack = { name: string; template: Template; region: string; account: string };

export type TemplateFunction = {
  stack: string;
  logicalId: string;
  /** The construct path below the stack, e.g. `SlackEvents` or `FunctionUrl/UrlHandler`. */
  name: string;
  physicalName: string;
  arn: string;
  handler: string;
  runtime: string;
  memorySize: number;
  timeoutSeconds: number;
  /** The template's variables, intrinsics unresolved. */
  environment: Record<string, unknown>;
  /** The staged asset directory that becomes the function's zip. */
  assetDir: string;
};

/** An SQS event source mapping: which queue feeds which function, in batches of how many. */
export type QueueSubscription = { stack: string; queueLogicalId: string; functionLogicalId: string; batchSize: number; reportsItemFailures: boolean };

export type Assembly = { dir: string; stacks: Stack[]; functions: TemplateFunction[]; subscriptions: QueueSubscription[] };

export function readAssembly(dir: string): Assembly {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { artifacts: Record<string, { type: string; environment?: string; properties?: { templateFile?: string } }> };
  const stacks: Stack[] = Object.entries(manifest.artifacts)
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
    .map(([name, artifact]) => {
      const [, account = '111111111111', region = 'us-east-1'] = /^aws:\/\/([^/]+)\/(.+)$/.exec(artifact.environment ?? '') ?? [];
      const template = JSON.parse(readFileSync(path.join(dir, artifact.properties?.templateFile ?? `${name}.template.json`), 'utf8')) as Template;
      return { name, template, account, region };
    });
  const functions = stacks.flatMap((stack) => functionsOf(dir, stack));
  const subscriptions = stacks.flatMap((stack) =>
    Object.values(stack.template.Resources)
      .filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties?.EventSourceArn?.['Fn::GetAtt'])
      .map((r) => ({
        stack: stack.name,
        queueLogicalId: r.Properties!.EventSourceArn['Fn::GetAtt'][0] as string,
        functionLogicalId: r.Properties!.FunctionName.Ref as string,
        batchSize: (r.Properties!.BatchSize as number | undefined) ?? 10,
        reportsItemFailures: ((r.Properties!.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
      })),
  );
  return { dir, stacks, functions, subscriptions };
}

function functionsOf(dir: string, stack: Stack): TemplateFunction[] {
  const assets = assetDirectories(dir, stack.name);
  return Object.entries(stack.template.Resources)
    .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    .map(([logicalId, r]) => {
      const p = r.Properties ?? {};
      const s3Key = p.Code?.S3Key as string | undefined;
      const assetDir = s3Key ? assets.get(s3Key) : undefined;
      const name = constructName(r, logicalId);
      if (!assetDir) throw new Error(`${name}: its code (${JSON.stringify(p.Code)}) is not a staged asset of ${stack.name} in ${dir}: was the stack synthesized with bundling?`);
      const physicalName = `${stack.name}-${logicalId}`.slice(0, 64);
      return {
        stack: stack.name,
        logicalId,
        name,
        physicalName,
        arn: `arn:aws:lambda:${stack.region}:${stack.account}:function:${physicalName}`,
        handler: String(p.Handler),
        runtime: String(p.Runtime),
        memorySize: (p.MemorySize as number | undefined) ?? 128,
        timeoutSeconds: (p.Timeout as number | undefined) ?? 3,
        environment: (p.Environment?.Variables as Record<string, unknown> | undefined) ?? {},
        assetDir,
      };
    });
}

/** S3 object key → the directory the asset manifest zips into it. */
function assetDirectories(dir: string, stackName: string): Map<string, string> {
  const file = readdirSync(dir).find((name) => name === `${stackName}.assets.json`);
  const map = new Map<string, string>();
  if (!file) return map;
  const assets = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { files: Record<string, { source: { path: string; packaging?: string }; destinations: Record<string, { objectKey: string }> }> };
  for (const asset of Object.values(assets.files)) {
    const source = path.join(dir, asset.source.path);
    if (asset.source.packaging !== 'zip' || !existsSync(source)) continue;
    for (const destination of Object.values(asset.destinations)) map.set(destination.objectKey, source);
  }
  return map;
}

/** `VerificationZone/SlackEvents/Function/Resource` → `SlackEvents`. */
function constructName(resource: Resource, logicalId: string): string {
  const cdkPath = resource.Metadata?.['aws:cdk:path'];
  if (typeof cdkPath !== 'string') return logicalId;
  return cdkPath.split('/').slice(1, -2).join('/') || logicalId;
}
