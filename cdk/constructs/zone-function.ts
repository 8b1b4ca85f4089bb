import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
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
    const environment = {
      // Stack traces point at the TypeScript sources through the bundled source map.
      NODE_OPTIONS: '--enable-source-maps',
      ...props.environment,
    };
    // Lambda refuses the deploy otherwise, after the other stacks have changed: refuse the synthesis.
    const size = environmentSize(this, environment);
    if (size > LAMBDA_ENVIRONMENT_LIMIT) {
      const [largest, largestSize] = Object.entries(environment)
        .map(([name, value]) => [name, environmentSize(this, { [name]: value })] as const)
        .sort((a, b) => b[1] - a[1])[0]!;
      const advice =
        largest === 'EXECUTION_AGENTS'
          ? ': shorten the execution agents list (leave out options equal to their defaults, set an option every agent shares once with -c verificationEnvironment, shorten displayNames)'
          : '';
      throw new Error(
        `${this.node.path} (${props.description.split(':')[0]}): its environment would take about ${size} bytes, over Lambda's limit of ${LAMBDA_ENVIRONMENT_LIMIT} for all names and values together; the largest, ${largest}, takes ${largestSize}${advice}`,
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
      environment,
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

/** Lambda's limit on a function's environment: 4 KB for every name and value together. */
export const LAMBDA_ENVIRONMENT_LIMIT = 4096;
/**
 * What one value CloudFormation fills in at deploy time may take (a queue URL, a secret or runtime
 * ARN, a table name): longer than most, so an estimate errs towards refusing at synthesis.
 */
const TOKEN_ESTIMATE = 128;

/** The bytes of an environment's names and values as CloudFormation will write them; each value it fills in counted at TOKEN_ESTIMATE. */
export function environmentSize(scope: IConstruct, environment: Readonly<Record<string, string>>): number {
  const stack = Stack.of(scope);
  return Object.entries(environment).reduce((size, [name, value]) => size + Buffer.byteLength(name) + resolvedSize(Token.isUnresolved(value) ? stack.resolve(value) : value), 0);
}

function resolvedSize(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value).length;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] } | null)?.['Fn::Join'];
  if (join) return join[1].reduce((sum: number, part) => sum + resolvedSize(part), 0) + join[0].length * Math.max(0, join[1].length - 1);
  return TOKEN_ESTIMATE;
}
