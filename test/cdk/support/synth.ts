import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CFN_GUARD_PLUGIN, CONTROL_TOWER_RULES } from '../../../cdk/constructs/nag-acknowledgements';
import { buildZones, type Zones } from '../../../cdk/zones';

/** cdk.json, as the CLI reads it: its context (defaults and feature flags) applies to every test app. */
export const CDK_JSON = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'cdk.json'), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};

export const EXECUTION_ACCOUNT = '111111111111';
export const VERIFICATION_ACCOUNT = '222222222222';
export const REGION = 'us-east-1';

export type Synthesized = {
  app: App;
  zones: Zones;
  execution?: Template;
  /** Absent only while a two-account deployment waits for the execution zone's address. */
  verification?: Template;
  outdir: string;
  /** Unacknowledged AwsSolutions findings, errors and warnings alike (the app is nag-clean when empty). */
  nagFindings: { rule: string; severity: string | undefined; paths: string[] }[];
  /** The Control Tower controls (cfn-guard) the synthesis reported: unacknowledged, and acknowledged with their reasons. */
  controls: ControlFindings;
  cleanup(): void;
};

/**
 * Builds and synthesizes the app the way `cdk synth` does (cdk.json context plus the overrides),
 * with the cdk-nag plugin the app registers: a finding nobody acknowledged makes `app.synth()`
 * throw. Bundling is skipped unless asked for (it is what makes a synth slow), exactly as the CLI
 * skips it for stacks a command does not touch.
 */
export function synthesize(context: Record<string, unknown> = {}, options: { bundling?: readonly string[] } = {}): Synthesized {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk-test-'));
  const app = new App({
    outdir,
    context: { ...CDK_JSON.context, 'aws:cdk:bundling-stacks': options.bundling ?? [], ...context },
  });
  // CDK prints the validation report of an app with warnings (a two-account app waiting for the
  // execution zone's address) to the console; the tests read that report from the file instead,
  // so it is kept out of the test output.
  const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const zones = buildZones(app);
    const assembly = app.synth();
    return {
      app,
      zones,
      ...(zones.execution ? { execution: Template.fromStack(zones.execution) } : {}),
      ...(zones.verification ? { verification: Template.fromStack(zones.verification) } : {}),
      outdir,
      nagFindings: nagFindingsOf(assembly.directory),
      controls: controlFindingsOf(assembly.directory),
      cleanup: () => fs.rmSync(outdir, { recursive: true, force: true }),
    };
  } catch (error) {
    fs.rmSync(outdir, { recursive: true, force: true });
    throw error;
  } finally {
    printed.mockRestore();
  }
}

/**
 * What the AwsSolutions plugin reported in the validation report CDK writes on every synth (an
 * acknowledged finding is not reported). Reading it, rather than running the checks again, keeps
 * the findings exactly those of `cdk synth`.
 */
function nagFindingsOf(assemblyDir: string): Synthesized['nagFindings'] {
  const file = path.join(assemblyDir, 'validation-report.json');
  if (!fs.existsSync(file)) throw new Error('no validation report: is the cdk-nag plugin registered?');
  const report = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    pluginReports: { pluginName: string; violations: { ruleName: string; severity?: string; violatingResources: { constructPath?: string }[] }[] }[];
  };
  return report.pluginReports
    .filter((plugin) => plugin.pluginName === 'AwsSolutions')
    .flatMap((plugin) => plugin.violations)
    .map((v) => ({ rule: v.ruleName, severity: v.severity, paths: v.violatingResources.map((r) => r.constructPath ?? '') }));
}

export type ControlFinding = { control: string; paths: string[]; reason?: string };
export type ControlFindings = { violations: ControlFinding[]; acknowledged: ControlFinding[] };

/** A cfn-guard rule name as the control id the docs use (ct-sqs-pr-1), or the name when unmapped. */
const controlIdOf = (ruleName: string) => Object.entries(CONTROL_TOWER_RULES).find(([, name]) => name === ruleName)?.[0] ?? ruleName;

/** The cfn-guard plugin's part of the same report: what no one acknowledged, and what was, with why. */
function controlFindingsOf(assemblyDir: string): ControlFindings {
  const report = JSON.parse(fs.readFileSync(path.join(assemblyDir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { pluginName: string; violations: Violation[]; suppressedViolations?: (Violation & { reason?: string })[] }[];
  };
  type Violation = { ruleName: string; violatingConstructs?: { constructPath?: string }[] };
  const plugin = report.pluginReports.find((p) => p.pluginName === CFN_GUARD_PLUGIN);
  const finding = (v: Violation & { reason?: string }): ControlFinding => ({
    control: controlIdOf(v.ruleName),
    paths: (v.violatingConstructs ?? []).map((c) => c.constructPath ?? ''),
    ...(v.reason ? { reason: v.reason } : {}),
  });
  return { violations: (plugin?.violations ?? []).map(finding), acknowledged: (plugin?.suppressedViolations ?? []).map(finding) };
}

/** Acknowledged control ids per stack (a construct path's first segment), sorted. */
export function acknowledgedByStack(controls: ControlFindings): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const finding of controls.acknowledged) for (const p of finding.paths) (out[p.split('/')[0]!] ??= new Set()).add(finding.control);
  return Object.fromEntries(Object.entries(out).map(([stack, ids]) => [stack, [...ids].sort()]));
}

/** Same-account deployment in a known environment (what most tests assert on). */
export const SINGLE_ACCOUNT = { executionAccountId: EXECUTION_ACCOUNT, region: REGION } as const;

/** The one resource of a type whose properties match, with its logical id (found, never hard-coded). */
export function onlyResource(template: Template, type: string, props: Record<string, unknown> = {}): { id: string; resource: { Properties: Record<string, any>; [key: string]: any } } {
  const found = Object.entries(template.findResources(type, props ? { Properties: props } : undefined));
  if (found.length !== 1) throw new Error(`expected exactly one ${type} matching ${JSON.stringify(props)}, found ${found.length}`);
  const [id, resource] = found[0]!;
  return { id, resource: resource as { Properties: Record<string, any> } };
}

/** The logical id of the function whose handler bundle came from `entry` (by description prefix). */
export function functionId(template: Template, descriptionPrefix: string): string {
  const found = Object.entries(template.findResources('AWS::Lambda::Function')).filter(([, r]) => String((r as any).Properties.Description).startsWith(descriptionPrefix));
  if (found.length !== 1) throw new Error(`expected one function described "${descriptionPrefix}…", found ${found.length}`);
  return found[0]![0];
}

/** Every statement of every IAM policy attached to the role of the given function. */
export function statementsOfFunction(template: Template, fnLogicalId: string): any[] {
  const fn = template.toJSON().Resources[fnLogicalId];
  const roleId = fn.Properties.Role['Fn::GetAtt'][0];
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p: any) => p.Properties.Roles.some((r: any) => r.Ref === roleId));
  return policies.flatMap((p: any) => p.Properties.PolicyDocument.Statement);
}

/** The statements granting any of these actions. */
export function statementsFor(statements: any[], action: string): any[] {
  return statements.filter((s) => [s.Action].flat().includes(action));
}
