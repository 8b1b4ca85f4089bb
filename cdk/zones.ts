import { Annotations, type App, Duration, Tags, Validations } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { type DeploymentConfig, deploymentConfigFrom } from './config';
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
 */
export function buildZones(app: App): Zones {
  const config = deploymentConfigFrom(app.node);
  const c = config.context;
  const logRetention = c.logRetentionDays as RetentionDays;
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
          ...(config.crossAccount && config.callerRoleNames
            ? { crossAccountCallers: { account: config.verificationEnv.account!, roleNames: config.callerRoleNames, pinRoles: c.pinVerificationRoles } }
            : {}),
        })
      : undefined;

  const target = config.executionTarget;
  if (target.kind === 'pending') {
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
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
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
      reactions: c.slackReactions,
      threadFollowUps: c.threadFollowUps,
      streamReplies: c.streamReplies,
      sendBotTokenToExecution: c.executionSendBotToken,
    },
    poll: { firstDelaySeconds: c.pollFirstDelaySeconds, backoffFactor: c.pollBackoffFactor, maxDelaySeconds: c.pollMaxDelaySeconds, deadlineSeconds: c.pollDeadlineSeconds },
    maxReceiveCount: { tasks: c.taskMaxReceiveCount, polls: c.pollMaxReceiveCount, replies: c.replyMaxReceiveCount },
    ...(c.verificationEnvironment ? { extraEnvironment: c.verificationEnvironment } : {}),
    api: { rateLimit: c.apiRateLimit, burstLimit: c.apiBurstLimit, waf: c.waf, wafRateLimit: c.wafRateLimit },
    logRetention,
    ...(c.alarmEmail ? { alarmEmail: c.alarmEmail } : {}),
  });

  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { config, ...(execution ? { execution } : {}), verification };
}
