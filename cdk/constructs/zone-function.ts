import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { PROJECT_ROOT } from '../project-root';
import { acknowledge, acknowledgeControl, acknowledgeWildcards } from './nag-acknowledgements';
import type { OperationsAlarms } from './operations-alarms';
import type { ResourceGovernance, StrictGovernance } from './zone-governance';

export interface ZoneFunctionProps {
  /** Handler file relative to the repository root, exporting `handler`, e.g. `lambdas/verification/slack-events.ts`. */
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  /** @default 256 */
  readonly memorySize?: number;
  readonly environment?: Record<string, string>;
  readonly logRetention: RetentionDays;
  /** Alarms on the function's errors. */
  readonly alarms: OperationsAlarms;
  /**
   * A fixed name for the execution role, for roles another account must name in a resource policy.
   * @default - a generated name
   */
  readonly roleName?: string;
  /** governance=strict: the zone's key (log group) and VPC (the function). */
  readonly governance?: StrictGovernance;
  /**
   * governance=strict, but the function must stay outside the VPC: why (acknowledges CT.LAMBDA.PR.3
   * for it). Its log group still uses the key.
   */
  readonly outsideVpcBecause?: string;
}

/**
 * A Lambda function of either zone: arm64, nodejs22.x, bundled by the local esbuild (never in
 * Docker), minified with external source maps, with its own log group and role.
 *
 * - `externalModules: []`: nodejs22.x ships an AWS SDK v3, but its version is whatever the runtime
 *   carries that week. Bundling the clients we import pins them to package-lock.json, so what was
 *   tested is what runs; esbuild includes only the clients a handler imports (lambdas/verification/shared/clients.ts
 *   is split so that each handler pulls in only its own), so the cost is a few hundred KB, not the SDK.
 * - The role is created here without the AWSLambdaBasicExecutionRole managed policy: the function
 *   may write to its own log group and nothing else, and every other permission is a grant.
 * - Explicit log group: retention is set, and the group is retained on stack deletion so logs of an
 *   incident survive a teardown (retention still expires them).
 */
export class ZoneFunction extends Construct {
  public readonly fn: NodejsFunction;
  public readonly role: Role;
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ZoneFunctionProps) {
    super(scope, id);
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: props.description,
      ...(props.roleName ? { roleName: props.roleName } : {}),
    });
    const governance = props.governance;
    this.logGroup = governance ? governance.logGroup(this, 'Logs') : new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });
    const network: ResourceGovernance | undefined = governance && !props.outsideVpcBecause ? governance : undefined;
    if (network) {
      // Lambda creates the function's network interfaces with its role (what the managed policy
      // AWSLambdaVPCAccessExecutionRole grants, without its logs:* on every group). EC2 authorizes
      // these actions on no narrower resource.
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
          resources: ['*'],
        }),
      );
    }
    this.fn = new NodejsFunction(this, 'Function', {
      entry: path.join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      ...(network ? { vpc: network.vpc, vpcSubnets: network.subnets, securityGroups: [network.securityGroup] } : {}),
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      projectRoot: PROJECT_ROOT,
      environment: {
        // Stack traces point at the TypeScript sources through the bundled source map.
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        forceDockerBundling: false,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        target: 'node22',
        format: OutputFormat.CJS,
        // Prefer the ESM builds of dependencies (the SDK's dist-es) so esbuild can drop unused code.
        mainFields: ['module', 'main'],
        externalModules: [],
      },
    });
    this.logGroup.grantWrite(this.role);
    if (network) {
      acknowledgeWildcards(this.role, [
        { pattern: /^Resource::\*$/, reason: 'Lambda creates and deletes the function\'s VPC network interfaces with its role; EC2 authorizes these actions only on all resources (the managed policy AWSLambdaVPCAccessExecutionRole grants the same).' },
      ]);
    }
    if (governance && props.outsideVpcBecause) acknowledgeControl(this.fn, 'ct-lambda-pr-3', props.outsideVpcBecause);
    props.alarms.functionErrors(this, 'ErrorsAlarm', this.fn, props.description);
    acknowledge(
      this.fn,
      'AwsSolutions-L1',
      'Pinned to nodejs22.x on purpose: the execution zone runs on the AgentCore NODE_22 runtime, and both zones share one Node version and one tested toolchain. Raise it for all functions and the runtime together.',
    );
  }
}
