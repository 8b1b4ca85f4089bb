import { Duration, Lazy, Stack, type IResolveContext } from 'aws-cdk-lib';
import { CfnResourcePolicy, ProtocolType, Runtime, RuntimeNetworkConfiguration } from 'aws-cdk-lib/aws-bedrockagentcore';
import { MathExpression } from 'aws-cdk-lib/aws-cloudwatch';
import { AccountPrincipal, CfnPolicy, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { A2A_VERSION_HEADER } from '../../src/protocols/a2a-dialects';
import { agentCoreCodeArtifact } from './agentcore-code-bundle';
import { acknowledgeWildcards } from './nag-acknowledgements';
import type { OperationsAlarms } from './operations-alarms';
import type { ResourceGovernance } from './zone-governance';
import { AGENTCORE_INVOKE_ACTIONS } from './agentcore-invoke-actions';

/**
 * Request headers the verification zone's protocols send that a hosted A2A 1.0 agent needs
 * (context a2aVersionHeader). Not allow-listed by default: the reference runtime needs none, and
 * CloudFormation's published schema for the runtime has accepted only `Authorization` and
 * `X-Amzn-Bedrock-AgentCore-Runtime-Custom-…` names (docs/operations.md, "A2A agents behind AgentCore").
 */
export const AGENT_REQUEST_HEADERS = [A2A_VERSION_HEADER] as const;

/** The endpoint an unqualified InvokeAgentRuntime reaches; AgentCore creates it with the runtime. */
export const DEFAULT_ENDPOINT = 'DEFAULT';

/** The ARN of a runtime endpoint: IAM checks it as well as the runtime's on every invocation. */
export function runtimeEndpointArn(runtimeArn: string, endpointName: string = DEFAULT_ENDPOINT): string {
  return `${runtimeArn}/runtime-endpoint/${endpointName}`;
}

/** AgentCore's live-session count (AWS/Bedrock-AgentCore): the dashboard shows it, an alarm watches it near the quota. */
export const ACTIVE_SESSIONS_METRIC = 'ActiveSessionCount';

/**
 * The account's live AgentCore sessions in the Region, as one series: AgentCore reports
 * `ActiveSessionCount` for the account, so a Metrics Insights query reads it whatever dimensions
 * it carries (the runtime's own metric() would pin this runtime's).
 */
export function activeSessions(): MathExpression {
  return new MathExpression({ expression: `SELECT MAX(${ACTIVE_SESSIONS_METRIC}) FROM "AWS/Bedrock-AgentCore"`, usingMetrics: {}, period: Duration.minutes(1), label: 'AgentCore active sessions' });
}

/**
 * The default quota of active session workloads per account (docs/operations.md, "AgentCore
 * sessions"): 5,000 in us-east-1 and us-west-2, 2,500 elsewhere — and where the Region is not known
 * at synthesis, the lower one, so the alarm comes early rather than late.
 */
export function activeSessionQuota(region: string): number {
  return ['us-east-1', 'us-west-2'].includes(region) ? 5_000 : 2_500;
}

export interface AgentCoreExecutionHostProps {
  /** The execution runtime's environment (executor, model, task store, budgets). */
  readonly environment: Record<string, string>;
  /** @default 15 minutes (AgentCore's default) */
  readonly idleRuntimeSessionTimeout?: Duration;
  /** @default 8 hours (AgentCore's default and maximum on microVMs) */
  readonly maxLifetime?: Duration;
  readonly alarms: OperationsAlarms;
  /** Allow-list AGENT_REQUEST_HEADERS (an A2A 1.0 agent is hosted here). @default false */
  readonly allowA2aVersionHeader?: boolean;
  /** governance=strict: the runtime runs in the zone's VPC (network mode VPC). */
  readonly governance?: ResourceGovernance;
}

/**
 * The execution zone on Amazon Bedrock AgentCore Runtime: the runtime host (src/execution/hosts/
 * agentcore-main.ts) deployed from code as NODE_22, HTTP protocol, IAM (SigV4) inbound auth, public
 * network (or the zone's VPC under governance=strict). Callers in the same account need only an identity policy; `allowCallersFromAccount`
 * adds the resource policies a caller in another account needs as well.
 */
export class AgentCoreExecutionHost extends Construct {
  public readonly runtime: Runtime;

  constructor(scope: Construct, id: string, props: AgentCoreExecutionHostProps) {
    super(scope, id);
    const artifact = agentCoreCodeArtifact(this, 'Code');
    this.runtime = new Runtime(this, 'Runtime', {
      agentRuntimeArtifact: artifact,
      protocolConfiguration: ProtocolType.HTTP,
      description: 'Slack zone bridge execution zone: JSON-RPC execute_task / get_task_result / cancel_task',
      environmentVariables: {
        NODE_OPTIONS: '--enable-source-maps',
        // The SDK clients read their region from AWS_REGION; set it rather than rely on the platform.
        AWS_REGION: Stack.of(this).region,
        ...props.environment,
      },
      // AgentCore passes the agent only the request headers a runtime allow-lists: A2A-Version lets
      // an A2A 1.0 agent hosted here answer the verification zone's a2a protocol (docs/operations.md,
      // "A2A agents behind AgentCore"). The reference runtime needs none.
      ...(props.allowA2aVersionHeader ? { requestHeaderConfiguration: { allowlistedHeaders: [...AGENT_REQUEST_HEADERS] } } : {}),
      ...(props.governance
        ? {
            networkConfiguration: RuntimeNetworkConfiguration.usingVpc(this, {
              vpc: props.governance.vpc,
              vpcSubnets: props.governance.subnets,
              securityGroups: [props.governance.securityGroup],
            }),
          }
        : {}),
      lifecycleConfiguration: {
        idleRuntimeSessionTimeout: props.idleRuntimeSessionTimeout ?? Duration.minutes(15),
        maxLifetime: props.maxLifetime ?? Duration.hours(8),
      },
    });
    // The Runtime binds its artifact lazily, at synthesis; binding now (bind is idempotent) makes the
    // S3 read grant (that one object) exist while the construct tree is built, like every other grant.
    artifact.bind(this.runtime, this.runtime);
    scopeWorkloadIdentityToOwn(this.runtime);
    props.alarms.alarm(this, 'SystemErrorsAlarm', this.runtime.metricSystemErrors({ period: Duration.minutes(5), statistic: 'Sum' }), 'AgentCore runtime: system errors');
    // Before new conversations are refused (ServiceQuotaExceededException): 80 % of the Region's active-session quota.
    const quota = activeSessionQuota(Stack.of(this).region);
    props.alarms.alarm(
      this,
      'ActiveSessionsAlarm',
      activeSessions(),
      `AgentCore runtime: ${ACTIVE_SESSIONS_METRIC} at 80 % of the ${quota} active sessions the account may have in the Region (raise the quota in Service Quotas, or shorten the idle timeout / set AGENTCORE_STOP_SESSION)`,
      Math.floor(quota * 0.8),
    );
  }

  get runtimeArn(): string {
    return this.runtime.agentRuntimeArn;
  }

  /** Where the runtime's DEFAULT endpoint logs: a group AgentCore creates, named after the runtime id. */
  get logGroupName(): string {
    return `/aws/bedrock-agentcore/runtimes/${this.runtime.agentRuntimeId}-${DEFAULT_ENDPOINT}`;
  }

  /**
   * Lets exactly these roles of another account invoke the runtime. AgentCore authorizes an
   * invocation against the runtime and against the endpoint it reaches, so both get a policy.
   * The principal is the account, narrowed to the roles by `aws:PrincipalArn`: a role ARN as
   * principal must exist when the policy is written (it would force deploying the verification
   * zone first, which needs this runtime's ARN) and silently breaks if the role is recreated; the
   * condition has neither problem and admits the same two roles.
   */
  allowCallersFromAccount(account: string, roleArns: readonly string[]): void {
    const policyFor = (resourceArn: string) =>
      Stack.of(this).toJsonString(
        new PolicyDocument({
          statements: [
            new PolicyStatement({
              sid: 'VerificationZoneCallers',
              principals: [new AccountPrincipal(account)],
              actions: AGENTCORE_INVOKE_ACTIONS,
              resources: [resourceArn],
              conditions: { ArnEquals: { 'aws:PrincipalArn': [...roleArns] } },
            }),
          ],
        }).toJSON(),
      );
    new CfnResourcePolicy(this, 'RuntimePolicy', { resourceArn: this.runtimeArn, policy: policyFor(this.runtimeArn) });
    const endpoint = runtimeEndpointArn(this.runtimeArn);
    new CfnResourcePolicy(this, 'EndpointPolicy', { resourceArn: endpoint, policy: policyFor(endpoint) });
  }

  /** Explains the wildcards the Runtime construct grants its own role; call after all grants. */
  acknowledgeRoleWildcards(): void {
    // An ARN segment is a literal (known environment) or a pseudo parameter (env-agnostic stack).
    const seg = '(?:<AWS::[A-Za-z]+>|[^:<>]+)';
    const arn = (service: string, resource: string) => new RegExp(`^Resource::arn:${seg}:${service}:${seg}:${seg}:${resource}$`);
    acknowledgeWildcards(this.runtime, [
      {
        pattern: arn('logs', String.raw`log-group:/aws/bedrock-agentcore/runtimes/\*(:log-stream:\*)?`),
        reason: 'Added by the AgentCore Runtime construct: the runtime writes its logs to /aws/bedrock-agentcore/runtimes/<id>-<endpoint>, a name that includes the runtime id, which exists only after creation.',
      },
      {
        pattern: arn('logs', String.raw`log-group:\*`),
        reason: 'Added by the AgentCore Runtime construct: logs:DescribeLogGroups is a list action that IAM only authorizes on all log groups.',
      },
      {
        pattern: /^Resource::\*$/,
        reason: 'Added by the AgentCore Runtime construct: X-Ray PutTraceSegments/PutTelemetryRecords/GetSampling* and CloudWatch PutMetricData (limited to the bedrock-agentcore namespace by condition) do not support resource-level permissions.',
      },
      {
        pattern: /^Action::bedrock-agentcore:GetWorkloadAccessToken\*$/,
        reason: "Added by the AgentCore Runtime construct: GetWorkloadAccessToken, …ForJWT and …ForUserId, on the default workload identity directory and the runtime's own workload identity only (scopeWorkloadIdentityToOwn).",
      },
    ]);
  }
}

/** The Sid of the statement the Runtime construct grants its role the workload access tokens with. */
const WORKLOAD_TOKEN_STATEMENT_SID = 'GetAgentAccessToken';

/**
 * The runtime's own workload identity: AgentCore creates one per runtime, named after it, in the
 * account's default directory (docs/deploy.md, "Least privilege").
 */
function ownWorkloadIdentityArn(runtime: Runtime): string {
  return `${workloadIdentityDirectoryArn(runtime)}/workload-identity/${runtime.agentRuntimeName}`;
}

function workloadIdentityDirectoryArn(scope: Construct): string {
  return Stack.of(scope).formatArn({ service: 'bedrock-agentcore', resource: 'workload-identity-directory', resourceName: 'default' });
}

/**
 * The Runtime construct lets its role get access tokens for every workload identity of the
 * directory (`workload-identity/*`): the agent could then act as any other agent of the account
 * towards AgentCore Identity's token vault. Its statement keeps the directory and names the
 * runtime's own identity instead. The policy document is replaced, not overridden, so cdk-nag
 * checks what is deployed; a construct that no longer grants that statement fails the synthesis
 * rather than pass unscoped.
 */
function scopeWorkloadIdentityToOwn(runtime: Runtime): void {
  const policy = runtime.role.node.tryFindChild('DefaultPolicy')?.node.defaultChild;
  if (!(policy instanceof CfnPolicy)) throw new Error('The AgentCore runtime role has no default policy to scope its workload identity in');
  const document: unknown = policy.policyDocument;
  const resources = [workloadIdentityDirectoryArn(runtime), ownWorkloadIdentityArn(runtime)];
  policy.policyDocument = Lazy.uncachedAny({
    produce: (context: IResolveContext) => {
      const resolved = context.resolve(document) as { Statement: Array<{ Sid?: string }> };
      if (!resolved.Statement.some((statement) => statement.Sid === WORKLOAD_TOKEN_STATEMENT_SID)) {
        throw new Error(`The AgentCore Runtime construct no longer grants its role the statement ${WORKLOAD_TOKEN_STATEMENT_SID}: scope its workload identity anew`);
      }
      return { ...resolved, Statement: resolved.Statement.map((statement) => (statement.Sid === WORKLOAD_TOKEN_STATEMENT_SID ? { ...statement, Resource: resources } : statement)) };
    },
  });
}
