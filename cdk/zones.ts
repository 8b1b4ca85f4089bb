import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { Annotations, type App, Duration, type Stack, Tags, Validations } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { type DeploymentConfig, deploymentConfigFrom } from './config';
import { acknowledgeControl, type ControlTowerRule, STANDARD_ACKNOWLEDGEMENTS } from './constructs/nag-acknowledgements';
import type { EndpointService, StrictGovernanceProps } from './constructs/zone-governance';
import { ExecutionZoneStack } from './stacks/execution-zone-stack';
import { VerificationZoneStack } from './stacks/verification-zone-stack';

export type Zones = {
  config: DeploymentConfig;
  /** Absent when the verification zone uses an execution zone this app does not deploy. */
  execution?: ExecutionZoneStack;
  /** Absent until the execution zone's address is known (first step of a two-account deployment). */
  verification?: VerificationZoneStack;
};

/**
 * The whole app from its context: the two zone stacks and the cdk-nag AwsSolutions checks, which
 * run when the app synthesizes and fail it on any unacknowledged finding. cdk/bin/app.ts calls
 * this; the tests call it with their own context, so they check what `cdk synth` builds.
 *
 * The AWS Control Tower proactive controls (cfn-guard rules from @cdklabs/cdk-validator-cfnguard)
 * run on every synthesis too: a control a template fails and nobody acknowledged fails it.
 * `governance=strict` meets them (cdk/constructs/zone-governance.ts); the default acknowledges the
 * ones it leaves to strict, per stack (STANDARD_ACKNOWLEDGEMENTS).
 */
export function buildZones(app: App): Zones {
  const config = deploymentConfigFrom(app.node);
  const c = config.context;
  const strict = c.governance === 'strict';
  // strict keeps logs at least a year (CT.CLOUDWATCH.PR.2): a longer logRetentionDays is kept.
  const logRetention = (strict ? Math.max(c.logRetentionDays, RetentionDays.ONE_YEAR) : c.logRetentionDays) as RetentionDays;
  const governanceOf = governancePlanner(config, logRetention);
  const stackName = (id: string) => (c.appName === 'slack-zone-bridge' ? id : `${c.appName}-${id}`);
  Tags.of(app).add('app', c.appName);

  const execution =
    config.executionHosts.length > 0
      ? new ExecutionZoneStack(app, 'ExecutionZone', {
          stackName: stackName('ExecutionZone'),
          description: `Slack zone bridge: execution zone (${config.executionHosts.join(' + ')})`,
          env: config.executionEnv,
          hosts: config.executionHosts,
          bedrockModelId: c.bedrockModelId,
          ...(c.bedrockModelRegions ? { bedrockModelRegions: c.bedrockModelRegions } : {}),
          ...(c.bedrockMaxTokens ? { bedrockMaxTokens: c.bedrockMaxTokens } : {}),
          ...(c.bedrockSystemPrompt ? { bedrockSystemPrompt: c.bedrockSystemPrompt } : {}),
          syncBudget: Duration.millis(c.syncBudgetMs),
          taskTimeout: Duration.millis(c.taskTimeoutMs),
          agentcoreIdleTimeout: Duration.seconds(c.agentcoreIdleTimeoutSeconds),
          agentcoreMaxLifetime: Duration.seconds(c.agentcoreMaxLifetimeSeconds),
          logRetention,
          ...(c.alarmEmail ? { alarmEmail: c.alarmEmail } : {}),
          ...(c.executionEnvironment ? { extraEnvironment: c.executionEnvironment } : {}),
          ...(c.a2aVersionHeader ? { a2aVersionHeader: true } : {}),
          ...(strict ? { governance: governanceOf('execution') } : {}),
          ...(config.crossAccount && config.callerRoleNames
            ? { crossAccountCallers: { account: config.verificationEnv.account!, roleNames: config.callerRoleNames, pinRoles: c.pinVerificationRoles } }
            : {}),
        })
      : undefined;

  const target = config.executionTarget;
  // A list without this deployment's own agent never calls the execution zone: its address is not needed.
  const needsTarget = !config.executionAgents || config.executionAgents.some((agent) => agent.own);
  if (target.kind === 'pending' && needsTarget) {
    // Lambda refuses a role principal that does not exist yet: say so before the deploy fails.
    const roles = config.callerRoleNames;
    const pinnedRoles =
      config.crossAccount && roles && c.pinVerificationRoles && config.executionHosts.includes('https')
        ? ` The function URL admits the roles ${roles.invoker} and ${roles.poller}, which must exist: on the first deploy, before VerificationZone has created them, add -c pinVerificationRoles=false (their account), and deploy ExecutionZone again without it afterwards.`
        : '';
    Annotations.of(execution ?? app).addWarningV2(
      'slack-zone-bridge:VerificationZonePending',
      `VerificationZone is not synthesized: the zones are in different accounts or regions, so it needs the execution zone's address. Deploy ExecutionZone, then pass ${target.missing} (docs/deploy.md, "Two accounts").${pinnedRoles}`,
    );
    addChecks(app, strict, [execution]);
    return { config, ...(execution ? { execution } : {}) };
  }

  const verification = new VerificationZoneStack(app, 'VerificationZone', {
    stackName: stackName('VerificationZone'),
    description: `Slack zone bridge: verification zone (transport ${config.transport})`,
    env: config.verificationEnv,
    transport: config.transport,
    executionTarget: target,
    ...(execution && config.executionTarget.kind === 'linked' ? { linkedExecution: execution.linked } : {}),
    executionProtocol: c.executionProtocol,
    ...(c.a2aVersion ? { a2aVersion: c.a2aVersion } : {}),
    ...(config.executionAgents ? { executionAgents: config.executionAgents } : {}),
    ...(config.callerRoleNames ? { callerRoleNames: config.callerRoleNames } : {}),
    slack: {
      ...(c.signingSecretName ? { signingSecretName: c.signingSecretName } : {}),
      ...(c.botTokenSecretName ? { botTokenSecretName: c.botTokenSecretName } : {}),
      ...(c.allowedTeamIds ? { allowedTeamIds: c.allowedTeamIds } : {}),
      ...(c.allowedUserIds ? { allowedUserIds: c.allowedUserIds } : {}),
      ...(c.allowedChannelIds ? { allowedChannelIds: c.allowedChannelIds } : {}),
      ...(c.slackBotUserId ? { botUserId: c.slackBotUserId } : {}),
      rateLimitPerMinute: c.rateLimitPerMinute,
      maxTextLength: c.maxTextLength,
      dailyTokenBudgets: {
        ...(c.userDailyTokenBudget ? { user: c.userDailyTokenBudget } : {}),
        ...(c.channelDailyTokenBudget ? { channel: c.channelDailyTokenBudget } : {}),
        ...(c.teamDailyTokenBudget ? { team: c.teamDailyTokenBudget } : {}),
      },
      reactions: c.slackReactions,
      threadFollowUps: c.threadFollowUps,
      streamReplies: c.streamReplies,
      sendBotTokenToExecution: c.executionSendBotToken,
    },
    guardrail: {
      kind: c.guardrail,
      ...(c.guardrailMode ? { mode: c.guardrailMode } : {}),
      ...(c.guardrailInputMode ? { inputMode: c.guardrailInputMode } : {}),
      ...(c.guardrailOutputMode ? { outputMode: c.guardrailOutputMode } : {}),
      ...(c.guardrailId ? { id: c.guardrailId } : {}),
      ...(c.guardrailVersion ? { version: c.guardrailVersion } : {}),
    },
    poll: { firstDelaySeconds: c.pollFirstDelaySeconds, backoffFactor: c.pollBackoffFactor, maxDelaySeconds: c.pollMaxDelaySeconds, deadlineSeconds: c.pollDeadlineSeconds },
    maxReceiveCount: { tasks: c.taskMaxReceiveCount, polls: c.pollMaxReceiveCount, replies: c.replyMaxReceiveCount },
    ...(c.verificationEnvironment ? { extraEnvironment: c.verificationEnvironment } : {}),
    api: { rateLimit: c.apiRateLimit, burstLimit: c.apiBurstLimit, waf: c.waf, wafRateLimit: c.wafRateLimit },
    logRetention,
    ...(c.alarmEmail ? { alarmEmail: c.alarmEmail } : {}),
    ...(strict ? { governance: governanceOf('verification') } : {}),
  });

  addChecks(app, strict, [execution, verification]);
  return { config, ...(execution ? { execution } : {}), verification };
}

/** cdk-nag's AwsSolutions and the Control Tower controls; the default acknowledges what it leaves to strict. */
function addChecks(app: App, strict: boolean, stacks: readonly (Stack | undefined)[]): void {
  if (!strict) {
    for (const stack of stacks) {
      if (!stack) continue;
      for (const [rule, reason] of Object.entries(STANDARD_ACKNOWLEDGEMENTS)) acknowledgeControl(stack, rule as ControlTowerRule, reason);
    }
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new CfnGuardValidator({ controlTowerRulesEnabled: true }));
}

/**
 * governance=strict, per zone: the key and VPC context, and the endpoints each zone needs.
 *
 * - verification: SQS (its queues), Secrets Manager (the Slack secrets), CloudWatch Logs, and
 *   AgentCore when it calls a runtime; Slack and a function URL go through the NAT gateway.
 * - execution: CloudWatch Logs, Bedrock runtime (the model), AgentCore (the runtime's own calls,
 *   e.g. its workload identity), SQS with the https host (its worker queue).
 * - Both: a DynamoDB gateway endpoint (free).
 *
 * Two zones in one VPC (the same vpcId, account and region) share its endpoints: private DNS
 * allows one endpoint per service a VPC, so the execution zone (deployed first) creates those both
 * need and the verification zone none; its functions reach DynamoDB through the NAT gateway unless
 * the execution zone's gateway route serves their subnets too.
 */
export function governancePlanner(config: DeploymentConfig, logRetention: RetentionDays): (zone: 'execution' | 'verification') => Omit<StrictGovernanceProps, 'zone'> {
  const c = config.context;
  const hosts = config.executionHosts;
  const needs: Record<'execution' | 'verification', EndpointService[]> = {
    execution: ['logs', 'bedrock-runtime', ...(hosts.includes('agentcore') ? (['bedrock-agentcore'] as const) : []), ...(hosts.includes('https') ? (['sqs'] as const) : [])],
    verification: ['sqs', 'secretsmanager', 'logs', ...(callsAgentCore(config) ? (['bedrock-agentcore'] as const) : [])],
  };
  const vpcIds = { execution: c.executionVpcId ?? c.vpcId, verification: c.verificationVpcId ?? c.vpcId };
  const sameEnv = config.executionEnv.account === config.verificationEnv.account && config.executionEnv.region === config.verificationEnv.region;
  const shared = hosts.length > 0 && sameEnv && vpcIds.execution !== undefined && vpcIds.execution === vpcIds.verification;
  return (zone) => {
    const interfaceEndpoints = shared ? (zone === 'execution' ? [...new Set([...needs.execution, ...needs.verification])] : []) : needs[zone];
    return {
      ...(c.kmsKeyArn ? { kmsKeyArn: c.kmsKeyArn } : {}),
      ...(vpcIds[zone] ? { vpcId: vpcIds[zone] } : {}),
      ...(c.dynamodbPrefixListId ? { dynamodbPrefixListId: c.dynamodbPrefixListId } : {}),
      interfaceEndpoints,
      dynamodbGateway: !(shared && zone === 'verification'),
      logRetention,
    };
  };
}

/** Whether the verification zone calls an AgentCore runtime: the one of -c transport, or an agent of the list. */
function callsAgentCore(config: DeploymentConfig): boolean {
  return config.executionAgents ? config.executionAgents.some((agent) => agent.transport === 'agentcore') : config.transport === 'agentcore';
}
