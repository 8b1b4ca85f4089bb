import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AccountPrincipal, ArnPrincipal, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { Transport } from '../config';
import { AgentCoreExecutionHost } from '../constructs/agentcore-execution-host';
import { BedrockModelAccess } from '../constructs/bedrock-model-access';
import type { LinkedExecution } from '../constructs/execution-access';
import { FunctionUrlExecutionHost } from '../constructs/function-url-execution-host';
import { acknowledgeWildcards } from '../constructs/nag-acknowledgements';
import { OperationsAlarms } from '../constructs/operations-alarms';
import { TtlTable } from '../constructs/ttl-table';
import { KMS_GRANT_WILDCARDS, StrictGovernance, type StrictGovernanceProps } from '../constructs/zone-governance';

export interface ExecutionCallers {
  /** The verification zone's account. */
  readonly account: string;
  /** Names of its agent-invoker and async-result roles. */
  readonly roleNames: { readonly invoker: string; readonly poller: string };
  /**
   * The function URL's resource policy names the two roles (true), or admits their whole account
   * (false). Lambda refuses a role principal that does not exist yet, so the very first
   * ExecutionZone deploy, before the verification zone has created its roles, opts out with false
   * and the next deploy narrows it (docs/deploy.md, "Two accounts"). AgentCore needs neither: its
   * resource policy narrows the account to the roles by condition.
   * @default true
   */
  readonly pinRoles?: boolean;
}

export interface ExecutionZoneStackProps extends StackProps {
  /** The hosts to run: one normally, both while swapping transports. */
  readonly hosts: readonly Transport[];
  /** A Bedrock model id or cross-region inference profile id. */
  readonly bedrockModelId: string;
  /** Regions an inference profile routes to. @default the profile's geography (constructs/bedrock-model-access.ts) */
  readonly bedrockModelRegions?: readonly string[];
  readonly bedrockMaxTokens?: number;
  readonly bedrockSystemPrompt?: string;
  /** How long execute_task waits for the answer before it answers `accepted`. */
  readonly syncBudget: Duration;
  /** How long one task may run. */
  readonly taskTimeout: Duration;
  readonly agentcoreIdleTimeout?: Duration;
  readonly agentcoreMaxLifetime?: Duration;
  readonly logRetention: RetentionDays;
  readonly alarmEmail?: string;
  /** Callers in another account; same-account callers need nothing here. */
  readonly crossAccountCallers?: ExecutionCallers;
  /**
   * More environment for the execution runtime (every host): the variables with no context key of
   * their own (cdk/environment.ts), already checked by cdk/config.ts.
   */
  readonly extraEnvironment?: Readonly<Record<string, string>>;
  /** The AgentCore runtime allow-lists A2A-Version (an A2A 1.0 agent is hosted there). @default false */
  readonly a2aVersionHeader?: boolean;
  /** governance=strict: the zone's KMS key and VPC (cdk/constructs/zone-governance.ts). */
  readonly governance?: Omit<StrictGovernanceProps, 'zone'>;
}

/**
 * The execution zone: runs AI tasks behind one JSON-RPC endpoint, on AgentCore Runtime and/or a
 * Lambda function URL, with a DynamoDB task table and permission to call exactly one Bedrock
 * model. It holds no Slack secret.
 */
export class ExecutionZoneStack extends Stack {
  public readonly taskTable: TtlTable;
  public readonly alarms: OperationsAlarms;
  public readonly agentcore?: AgentCoreExecutionHost;
  public readonly https?: FunctionUrlExecutionHost;
  /** What a verification zone in the same account and region reads (as stack references). */
  public readonly linked: LinkedExecution;
  public readonly governance?: StrictGovernance;

  constructor(scope: Construct, id: string, props: ExecutionZoneStackProps) {
    super(scope, id, props);
    if (props.hosts.length === 0) throw new Error('ExecutionZone needs at least one host (agentcore or https)');
    this.alarms = new OperationsAlarms(this, 'Alarms', { ...(props.alarmEmail ? { email: props.alarmEmail } : {}) });
    const governance = props.governance ? new StrictGovernance(this, 'Governance', { ...props.governance, zone: 'execution' }) : undefined;
    this.governance = governance;
    // Task results must outlive a deletion of the stack by mistake; TTL expires them anyway.
    this.taskTable = new TtlTable(this, 'TaskTable', { partitionKey: 'task_id', removalPolicy: RemovalPolicy.RETAIN, ...(governance ? { encryptionKey: governance.key } : {}) });
    const model = new BedrockModelAccess(props.bedrockModelId, props.bedrockModelRegions);

    const environment: Record<string, string> = {
      EXECUTOR: 'bedrock',
      BEDROCK_MODEL_ID: props.bedrockModelId,
      TASK_STORE: 'dynamodb',
      TASK_TABLE_NAME: this.taskTable.table.tableName,
      SYNC_BUDGET_MS: String(props.syncBudget.toMilliseconds()),
      TASK_TIMEOUT_MS: String(props.taskTimeout.toMilliseconds()),
      ...(props.bedrockMaxTokens ? { BEDROCK_MAX_TOKENS: String(props.bedrockMaxTokens) } : {}),
      ...(props.bedrockSystemPrompt ? { BEDROCK_SYSTEM_PROMPT: props.bedrockSystemPrompt } : {}),
      ...props.extraEnvironment,
    };
    const runTasks = (grantee: IGrantable) => {
      this.taskTable.grantItems(grantee, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
      model.grantInvoke(grantee, this);
    };
    const callers = props.crossAccountCallers;
    const callerRoleArns = callers
      ? [callers.roleNames.invoker, callers.roleNames.poller].map((name) => `arn:${this.partition}:iam::${callers.account}:role/${name}`)
      : [];

    let linked: { -readonly [K in keyof LinkedExecution]: LinkedExecution[K] } = {};
    const logGroups: string[] = [];
    if (props.hosts.includes('agentcore')) {
      const host = new AgentCoreExecutionHost(this, 'AgentCore', {
        environment,
        alarms: this.alarms,
        ...(props.a2aVersionHeader ? { allowA2aVersionHeader: true } : {}),
        ...(governance ? { governance } : {}),
        ...(props.agentcoreIdleTimeout ? { idleRuntimeSessionTimeout: props.agentcoreIdleTimeout } : {}),
        ...(props.agentcoreMaxLifetime ? { maxLifetime: props.agentcoreMaxLifetime } : {}),
      });
      runTasks(host.runtime);
      if (callers) host.allowCallersFromAccount(callers.account, callerRoleArns);
      host.acknowledgeRoleWildcards();
      this.agentcore = host;
      linked = { ...linked, agentcore: { runtimeArn: host.runtimeArn } };
      logGroups.push(host.logGroupName);
      new CfnOutput(this, 'RuntimeArn', { value: host.runtimeArn, description: 'AgentCore runtime ARN (context agentRuntimeArn for a verification zone in another account or region)' });
    }
    if (props.hosts.includes('https')) {
      const host = new FunctionUrlExecutionHost(this, 'FunctionUrl', {
        environment,
        taskTimeout: props.taskTimeout,
        logRetention: props.logRetention,
        alarms: this.alarms,
        ...(governance ? { governance } : {}),
      });
      for (const runner of host.taskRunners) runTasks(runner.role);
      if (callers) {
        const principals = callers.pinRoles === false ? [new AccountPrincipal(callers.account)] : callerRoleArns.map((arn) => new ArnPrincipal(arn));
        for (const principal of principals) host.allowCaller(principal);
      }
      this.https = host;
      linked = { ...linked, https: { url: host.url.url, function: host.handler.fn } };
      logGroups.push(...host.taskRunners.map((runner) => runner.logGroup.logGroupName));
      new CfnOutput(this, 'ExecutionUrl', { value: host.url.url, description: 'Function URL (context executionUrl for a verification zone in another account or region)' });
      new CfnOutput(this, 'ExecutionFunctionArn', { value: host.handler.fn.functionArn, description: 'Function behind the URL (context executionFunctionArn)' });
      new CfnOutput(this, 'WorkerDlqArn', { value: host.workerQueue.deadLetterQueue.queueArn, description: 'Execution worker DLQ (aws sqs start-message-move-task --source-arn)' });
    }
    this.linked = linked;
    acknowledgeWildcards(this, [...model.expectedWildcards, ...(governance ? KMS_GRANT_WILDCARDS : [])]);

    new CfnOutput(this, 'TaskTableName', { value: this.taskTable.table.tableName, description: 'Task table (retained on stack deletion)' });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'SNS topic every execution-zone alarm notifies' });
    new CfnOutput(this, 'ExecutionLogGroups', { value: Fn.join(' ', logGroups), description: 'Every execution host\'s log group, space-separated (aws logs start-query --log-group-names)' });
  }
}
