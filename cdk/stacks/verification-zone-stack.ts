import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { FUNCTION_TIMEOUT_SECONDS, QUEUE_SETTINGS, visibilityTimeoutSeconds, type PipelineQueue, type VerificationFunction } from '../../src/verification/pipeline-settings';
import { statePrefixesOf } from '../../src/verification/stores/state-keys';
import { DEFAULT_POLL_SCHEDULE } from '../../src/verification/poll-schedule';
import type { ExecutionTarget, Transport } from '../config';
import type { ExecutionAgentPlan } from '../execution-agents';
import { ExecutionAccess, type LinkedExecution } from '../constructs/execution-access';
import { OperationsAlarms } from '../constructs/operations-alarms';
import { OperationsDashboard } from '../constructs/operations-dashboard';
import { operatorSecret } from '../constructs/operator-secret';
import { PipelineAlarms } from '../constructs/pipeline-alarms';
import { QueueWithDlq } from '../constructs/queue-with-dlq';
import { SlackEventsApi } from '../constructs/slack-events-api';
import { SlackWebAcl } from '../constructs/slack-web-acl';
import { TtlTable } from '../constructs/ttl-table';
import { ZoneFunction } from '../constructs/zone-function';
import { KMS_GRANT_WILDCARDS, StrictGovernance, type StrictGovernanceProps } from '../constructs/zone-governance';
import { acknowledgeWildcards } from '../constructs/nag-acknowledgements';

export interface SlackSettings {
  /** Use existing secrets of these names instead of creating them. */
  readonly signingSecretName?: string;
  readonly botTokenSecretName?: string;
  readonly allowedTeamIds?: readonly string[];
  readonly allowedUserIds?: readonly string[];
  readonly allowedChannelIds?: readonly string[];
  /** The bot's own user id, so its messages are never answered (bot_id filtering covers most). */
  readonly botUserId?: string;
  readonly rateLimitPerMinute: number;
  readonly maxTextLength: number;
  /** Daily token budgets per user, per channel, for the team (docs/operations.md): unset, none. */
  readonly dailyTokenBudgets?: { readonly user?: number; readonly channel?: number; readonly team?: number };
  /** 👀 on receipt, ✅ on reply. */
  readonly reactions: boolean;
  /** THREAD_FOLLOW_UPS: answer replies in a thread the bot answered in without a mention. @default true */
  readonly threadFollowUps?: boolean;
  /** STREAM_REPLIES: a sign of life at once, and the answer shown while it is produced. @default true */
  readonly streamReplies?: boolean;
  /** EXECUTION_SEND_BOT_TOKEN: the invoker sends the bot token to the execution zone. @default false */
  readonly sendBotTokenToExecution?: boolean;
}

/** Guardrails at the boundary (docs/operations.md, "Guardrails"); the environment of the functions that check text. */
export interface GuardrailProps {
  readonly kind: 'off' | 'builtin' | 'bedrock';
  /** GUARDRAIL_MODE, and the per-direction overrides. */
  readonly mode?: string;
  readonly inputMode?: string;
  readonly outputMode?: string;
  /** bedrock: the guardrail's id (or ARN) and version; its functions may call ApplyGuardrail on it alone. */
  readonly id?: string;
  readonly version?: string;
}

export interface PollSettings {
  readonly firstDelaySeconds: number;
  /** @default DEFAULT_POLL_SCHEDULE.factor (2) */
  readonly backoffFactor?: number;
  readonly maxDelaySeconds: number;
  readonly deadlineSeconds: number;
}

export interface VerificationZoneStackProps extends StackProps {
  readonly transport: Transport;
  readonly executionTarget: ExecutionTarget;
  /** The ExecutionZone stack's endpoints, when the target is `linked`. */
  readonly linkedExecution?: LinkedExecution;
  /** @default 'execute-task' */
  readonly executionProtocol?: string;
  readonly a2aVersion?: string;
  /** Several execution agents (EXECUTION_AGENTS instead of TRANSPORT, …; cdk/execution-agents.ts). */
  readonly executionAgents?: readonly ExecutionAgentPlan[];
  /** Fixed names for the two roles that call the execution zone (another account names them). */
  readonly callerRoleNames?: { readonly invoker: string; readonly poller: string };
  readonly slack: SlackSettings;
  readonly poll: PollSettings;
  /** @default off */
  readonly guardrail?: GuardrailProps;
  readonly api: { readonly rateLimit: number; readonly burstLimit: number; readonly waf: boolean; readonly wafRateLimit: number };
  readonly logRetention: RetentionDays;
  readonly alarmEmail?: string;
  /**
   * Receives per queue before its DLQ, written on the queue and on its consumer alike (one
   * setting: the consumer replies to the user on that receive). @default QUEUE_SETTINGS
   */
  readonly maxReceiveCount?: Partial<Readonly<Record<PipelineQueue, number>>>;
  /**
   * More environment for every verification function: the variables with no context key of their
   * own (cdk/environment.ts), already checked by cdk/config.ts.
   */
  readonly extraEnvironment?: Readonly<Record<string, string>>;
  /** governance=strict: the zone's KMS key and VPC (cdk/constructs/zone-governance.ts). */
  readonly governance?: Omit<StrictGovernanceProps, 'zone'>;
}

/** Receives per queue before the DLQ by default; the functions read the same numbers to reply on the last one. */
export const MAX_RECEIVE_COUNT = {
  tasks: QUEUE_SETTINGS.tasks.maxReceiveCount,
  polls: QUEUE_SETTINGS.polls.maxReceiveCount,
  replies: QUEUE_SETTINGS.replies.maxReceiveCount,
} as const;

/** Function timeouts, from the table the local pipeline simulates too. */
const TIMEOUT = {
  slackEvents: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.slackEvents),
  invoker: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.agentInvoker),
  poller: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.asyncResult),
  poster: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.slackPoster),
} as const;

/**
 * The verification zone: the only part Slack talks to. API Gateway → slack-events (verify,
 * filter, authorize, rate-limit, claim, enqueue, ack) → tasks → agent-invoker → the execution zone
 * → polls → async-result → replies → slack-poster → Slack. Holds the Slack secrets.
 */
export class VerificationZoneStack extends Stack {
  public readonly alarms: OperationsAlarms;
  public readonly stateTable: TtlTable;
  public readonly signingSecret: ISecret;
  public readonly botToken: ISecret;
  public readonly tasks: QueueWithDlq;
  public readonly polls: QueueWithDlq;
  public readonly replies: QueueWithDlq;
  public readonly slackEvents: ZoneFunction;
  public readonly invoker: ZoneFunction;
  public readonly poller: ZoneFunction;
  public readonly poster: ZoneFunction;
  public readonly execution: ExecutionAccess;
  public readonly api: SlackEventsApi;
  public readonly webAcl?: SlackWebAcl;
  public readonly governance?: StrictGovernance;

  constructor(scope: Construct, id: string, props: VerificationZoneStackProps) {
    super(scope, id, props);
    const logRetention = props.logRetention;
    const governance = props.governance ? new StrictGovernance(this, 'Governance', { ...props.governance, zone: 'verification' }) : undefined;
    this.governance = governance;
    const key = governance ? { encryptionKey: governance.key } : {};
    const inVpc = governance ? { governance } : {};
    this.alarms = new OperationsAlarms(this, 'Alarms', { ...(props.alarmEmail ? { email: props.alarmEmail } : {}) });
    // Slack API failures, replies lost and messages abandoned, from the functions' own metrics.
    new PipelineAlarms(this, 'PipelineAlarms', { alarms: this.alarms });
    // Event claims, rate counters and reply idempotency: all short-lived, nothing to keep.
    this.stateTable = new TtlTable(this, 'StateTable', { partitionKey: 'pk', removalPolicy: RemovalPolicy.DESTROY, ...key });
    this.signingSecret = operatorSecret(this, 'SigningSecret', {
      description: 'Slack signing secret (Slack app → Basic Information → App Credentials)',
      ...(props.slack.signingSecretName ? { existingName: props.slack.signingSecretName } : {}),
    });
    this.botToken = operatorSecret(this, 'BotToken', {
      description: 'Slack bot token xoxb-… (Slack app → OAuth & Permissions)',
      ...(props.slack.botTokenSecretName ? { existingName: props.slack.botTokenSecretName } : {}),
    });

    const receives: Record<PipelineQueue, number> = { ...MAX_RECEIVE_COUNT, ...props.maxReceiveCount };
    const queue = (id: string, name: PipelineQueue, purpose: string) =>
      new QueueWithDlq(this, id, { visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(name)), maxReceiveCount: receives[name], alarms: this.alarms, purpose, ...key });
    this.tasks = queue('Tasks', 'tasks', 'Tasks (agent-invoker)');
    this.polls = queue('Polls', 'polls', 'Polls (async-result)');
    this.replies = queue('Replies', 'replies', 'Replies (slack-poster)');

    this.execution = new ExecutionAccess(this, 'Execution', {
      transport: props.transport,
      target: props.executionTarget,
      ...(props.linkedExecution ? { linked: props.linkedExecution } : {}),
      protocol: props.executionProtocol ?? 'execute-task',
      ...(props.a2aVersion ? { a2aVersion: props.a2aVersion } : {}),
      ...(props.executionAgents ? { agents: props.executionAgents } : {}),
    });

    const slack = props.slack;
    const secretId = (secret: ISecret) => secret.secretFullArn ?? secret.secretName;
    const pollSchedule = {
      POLL_FIRST_DELAY_S: String(props.poll.firstDelaySeconds),
      POLL_BACKOFF_FACTOR: String(props.poll.backoffFactor ?? DEFAULT_POLL_SCHEDULE.factor),
      POLL_MAX_DELAY_S: String(props.poll.maxDelaySeconds),
      POLL_DEADLINE_S: String(props.poll.deadlineSeconds),
    };
    const list = (values?: readonly string[]) => (values && values.length > 0 ? values.join(',') : undefined);
    // Checked by agent-invoker before a task reaches its agent, settled by whichever function ends the task.
    const budgets = slack.dailyTokenBudgets ?? {};
    const budgetEnvironment = {
      USER_DAILY_TOKEN_BUDGET: budgets.user === undefined ? undefined : String(budgets.user),
      CHANNEL_DAILY_TOKEN_BUDGET: budgets.channel === undefined ? undefined : String(budgets.channel),
      TEAM_DAILY_TOKEN_BUDGET: budgets.team === undefined ? undefined : String(budgets.team),
    };
    // Checked where text crosses: the invoker (the task's input; a first streamed answer), the poller
    // (streamed answers) and the poster (every reply) — not slack-events, which only queues.
    const guardrail = props.guardrail ?? { kind: 'off' };
    const guardrailEnvironment =
      guardrail.kind === 'off'
        ? {}
        : {
            GUARDRAIL: guardrail.kind,
            GUARDRAIL_MODE: guardrail.mode,
            GUARDRAIL_INPUT_MODE: guardrail.inputMode,
            GUARDRAIL_OUTPUT_MODE: guardrail.outputMode,
            GUARDRAIL_ID: guardrail.id,
            GUARDRAIL_VERSION: guardrail.version,
          };
    // The operator's extra variables go on every function; CDK's own values are never among them.
    const defined = (env: Record<string, string | undefined>) => ({
      ...Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
      ...props.extraEnvironment,
    });

    this.slackEvents = new ZoneFunction(this, 'SlackEvents', {
      entry: 'lambdas/verification/slack-events.ts',
      description: 'slack-events: verify, filter, authorize, rate-limit, claim, enqueue, ack',
      timeout: TIMEOUT.slackEvents,
      // More memory is more CPU: a cold start must still ack within Slack's 3 seconds.
      memorySize: 512,
      logRetention,
      alarms: this.alarms,
      ...inVpc,
      environment: defined({
        SLACK_SIGNING_SECRET_ARN: secretId(this.signingSecret),
        STATE_TABLE_NAME: this.stateTable.table.tableName,
        TASK_QUEUE_URL: this.tasks.queue.queueUrl,
        REPLY_QUEUE_URL: this.replies.queue.queueUrl,
        ALLOWED_TEAM_IDS: list(slack.allowedTeamIds),
        ALLOWED_USER_IDS: list(slack.allowedUserIds),
        ALLOWED_CHANNEL_IDS: list(slack.allowedChannelIds),
        SLACK_BOT_USER_ID: slack.botUserId,
        RATE_LIMIT_PER_MINUTE: String(slack.rateLimitPerMinute),
        MAX_TEXT_LENGTH: String(slack.maxTextLength),
        THREAD_FOLLOW_UPS: String(slack.threadFollowUps ?? true),
        // Routes each task to its agent; unset (one agent), every task goes to the default.
        EXECUTION_AGENTS: this.execution.environment.EXECUTION_AGENTS,
      }),
    });
    this.invoker = new ZoneFunction(this, 'AgentInvoker', {
      entry: 'lambdas/verification/agent-invoker.ts',
      description: 'agent-invoker: reads the thread and files from Slack, sends each task to the execution zone (execute_task)',
      timeout: TIMEOUT.invoker,
      // A batch of tasks may each carry files (up to 32 MB, held raw, in base64 and in the request
      // body at once): room for that, and more CPU for the base64 work.
      memorySize: 1024,
      logRetention,
      alarms: this.alarms,
      ...inVpc,
      ...(props.callerRoleNames ? { roleName: props.callerRoleNames.invoker } : {}),
      environment: defined({
        ...this.execution.environment,
        POLL_QUEUE_URL: this.polls.queue.queueUrl,
        REPLY_QUEUE_URL: this.replies.queue.queueUrl,
        // A task whose AgentCore session is busy goes back on its own queue.
        TASK_QUEUE_URL: this.tasks.queue.queueUrl,
        TASK_MAX_RECEIVE_COUNT: String(receives.tasks),
        ...pollSchedule,
        ...budgetEnvironment,
        SLACK_REACTIONS: String(slack.reactions),
        EXECUTION_SEND_BOT_TOKEN: String(slack.sendBotTokenToExecution ?? false),
        // Always: the invoker reads the thread's earlier messages and downloads shared files, and
        // shows the answer live (status, stream) with the state table's record of it.
        SLACK_BOT_TOKEN_ARN: secretId(this.botToken),
        STATE_TABLE_NAME: this.stateTable.table.tableName,
        STREAM_REPLIES: String(slack.streamReplies ?? true),
        ...guardrailEnvironment,
      }),
    });
    this.poller = new ZoneFunction(this, 'AsyncResult', {
      entry: 'lambdas/verification/async-result.ts',
      description: 'async-result: polls pending tasks (get_task_result) with backoff',
      timeout: TIMEOUT.poller,
      logRetention,
      alarms: this.alarms,
      ...inVpc,
      ...(props.callerRoleNames ? { roleName: props.callerRoleNames.poller } : {}),
      environment: defined({
        ...this.execution.environment,
        POLL_QUEUE_URL: this.polls.queue.queueUrl,
        REPLY_QUEUE_URL: this.replies.queue.queueUrl,
        POLL_MAX_RECEIVE_COUNT: String(receives.polls),
        ...pollSchedule,
        ...budgetEnvironment,
        // Live answers: each poll shows the task's new text in Slack.
        SLACK_BOT_TOKEN_ARN: secretId(this.botToken),
        STATE_TABLE_NAME: this.stateTable.table.tableName,
        STREAM_REPLIES: String(slack.streamReplies ?? true),
        ...guardrailEnvironment,
      }),
    });
    this.poster = new ZoneFunction(this, 'SlackPoster', {
      entry: 'lambdas/verification/slack-poster.ts',
      description: 'slack-poster: posts replies in the thread (chat.postMessage)',
      timeout: TIMEOUT.poster,
      logRetention,
      alarms: this.alarms,
      ...inVpc,
      environment: defined({
        SLACK_BOT_TOKEN_ARN: secretId(this.botToken),
        STATE_TABLE_NAME: this.stateTable.table.tableName,
        REPLY_MAX_RECEIVE_COUNT: String(receives.replies),
        SLACK_REACTIONS: String(slack.reactions),
        THREAD_FOLLOW_UPS: String(slack.threadFollowUps ?? true),
        STREAM_REPLIES: String(slack.streamReplies ?? true),
        ...guardrailEnvironment,
      }),
    });

    // Wiring: each function consumes one queue and may send exactly where its handler sends.
    // One task per invocation: a task may carry up to 32 MB of files (raw, base64 and the request
    // body at once, ~200–280 MB), so five in parallel could exhaust the function's memory and take
    // the whole batch — and its last-receive apologies — down with it.
    this.invoker.fn.addEventSource(new SqsEventSource(this.tasks.queue, { batchSize: 1, reportBatchItemFailures: true }));
    this.poller.fn.addEventSource(new SqsEventSource(this.polls.queue, { batchSize: 10, reportBatchItemFailures: true }));
    this.poster.fn.addEventSource(new SqsEventSource(this.replies.queue, { batchSize: 5, reportBatchItemFailures: true }));

    this.signingSecret.grantRead(this.slackEvents.role);
    this.tasks.queue.grantSendMessages(this.slackEvents.role);
    // A task whose AgentCore session is busy is put back (src/verification/invoke/session-busy.ts).
    this.tasks.queue.grantSendMessages(this.invoker.role);
    this.replies.queue.grantSendMessages(this.slackEvents.role);
    // The state table: each function only the key prefixes it uses (src/verification/stores/state-keys.ts).
    this.grantStateKeys(this.slackEvents.role, 'slackEvents');

    // Only when AGENTCORE_STOP_SESSION ends sessions (the default, never, leaves it to the idle timeout).
    const stopsSessions = (props.extraEnvironment?.AGENTCORE_STOP_SESSION ?? 'never') !== 'never';
    for (const caller of [this.invoker, this.poller]) {
      this.execution.grantCall(caller.role);
      if (stopsSessions) this.execution.grantStopSessions(caller.role);
      this.polls.queue.grantSendMessages(caller.role);
      this.replies.queue.grantSendMessages(caller.role);
    }
    // Thread context, files and live answers (invoker); live answers (poller).
    for (const reader of [this.invoker, this.poller]) this.botToken.grantRead(reader.role);
    this.grantStateKeys(this.invoker.role, 'agentInvoker');
    this.grantStateKeys(this.poller.role, 'asyncResult');

    // GUARDRAIL=bedrock: ApplyGuardrail on that one guardrail, for the three functions that check text.
    if (guardrail.kind === 'bedrock' && guardrail.id) {
      const guardrailArn = guardrail.id.startsWith('arn:') ? guardrail.id : this.formatArn({ service: 'bedrock', resource: 'guardrail', resourceName: guardrail.id });
      for (const checker of [this.invoker, this.poller, this.poster]) {
        checker.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['bedrock:ApplyGuardrail'], resources: [guardrailArn] }));
      }
    }

    this.botToken.grantRead(this.poster.role);
    this.grantStateKeys(this.poster.role, 'slackPoster');

    this.api = new SlackEventsApi(this, 'SlackEventsApi', {
      handler: this.slackEvents.fn,
      rateLimit: props.api.rateLimit,
      burstLimit: props.api.burstLimit,
      logRetention,
      webAclAttached: props.api.waf,
      ...inVpc,
    });
    if (governance) acknowledgeWildcards(this, KMS_GRANT_WILDCARDS);
    if (props.api.waf) this.webAcl = new SlackWebAcl(this, 'WebAcl', { stageArn: this.api.api.deploymentStage.stageArn, rateLimit: props.api.wafRateLimit });

    new OperationsDashboard(this, 'Dashboard', {
      deadLetterQueues: [
        { label: 'tasks DLQ', queue: this.tasks.deadLetterQueue },
        { label: 'polls DLQ', queue: this.polls.deadLetterQueue },
        { label: 'replies DLQ', queue: this.replies.deadLetterQueue },
      ],
    });

    new CfnOutput(this, 'SlackRequestUrl', { value: this.api.requestUrl, description: 'Request URL for the Slack app (Event Subscriptions)' });
    new CfnOutput(this, 'SigningSecretArn', { value: this.signingSecret.secretArn, description: 'Put the Slack signing secret here' });
    new CfnOutput(this, 'BotTokenSecretArn', { value: this.botToken.secretArn, description: 'Put the Slack bot token (xoxb-…) here' });
    new CfnOutput(this, 'InvokerRoleArn', { value: this.invoker.role.roleArn, description: 'Role that calls the execution zone (execute_task)' });
    new CfnOutput(this, 'PollerRoleArn', { value: this.poller.role.roleArn, description: 'Role that calls the execution zone (get_task_result)' });
    new CfnOutput(this, 'StateTableName', { value: this.stateTable.table.tableName, description: 'State table: usage counters and audit records (zone usage --table)' });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'SNS topic every verification-zone alarm notifies' });
    // For day-2 work (docs/operations.md): the DLQs to redrive, the log groups to query.
    new CfnOutput(this, 'TasksDlqArn', { value: this.tasks.deadLetterQueue.queueArn, description: 'Tasks DLQ (aws sqs start-message-move-task --source-arn)' });
    new CfnOutput(this, 'PollsDlqArn', { value: this.polls.deadLetterQueue.queueArn, description: 'Polls DLQ (aws sqs start-message-move-task --source-arn)' });
    new CfnOutput(this, 'RepliesDlqArn', { value: this.replies.deadLetterQueue.queueArn, description: 'Replies DLQ: answers the user has not had (redrive, never purge)' });
    new CfnOutput(this, 'VerificationLogGroups', {
      value: Fn.join(' ', [this.slackEvents, this.invoker, this.poller, this.poster].map((fn) => fn.logGroup.logGroupName)),
      description: 'The four functions\' log groups, space-separated (aws logs start-query --log-group-names)',
    });
  }

  /** Claims, counters, markers, records: read and written, never deleted (TTL removes them), under the function's own key prefixes only. */
  private grantStateKeys(grantee: IGrantable, fn: VerificationFunction): void {
    this.stateTable.grantItemsUnder(grantee, statePrefixesOf(fn), 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem');
  }
}
