import type { Node } from 'constructs';
import { z } from 'zod';
import { GUARDRAIL_ID_PATTERN, GUARDRAIL_KINDS, GUARDRAIL_VERSION_PATTERN } from '../src/guardrail/guardrail-config';
import { GUARDRAIL_MODES } from '../src/guardrail/guardrail';
import { PROTOCOL_NAMES } from '../src/protocols/factory';
import { AGENT_RUNTIME_ARN } from '../src/transport/arn';
import { AUTH_MODES, type AuthMode } from '../src/transport/config';
import { TRANSPORT_KINDS, type TransportKind } from '../src/transport/transport';
import { QUEUE_SETTINGS } from '../src/verification/pipeline-settings';
import { DEFAULT_POLL_SCHEDULE } from '../src/verification/poll-schedule';
import { EnvironmentMapSchema, environmentProblems } from './environment';
import { ExecutionAgentsError, planExecutionAgents, readExecutionAgents, sourceLabel, type ExecutionAgentPlan } from './execution-agents';

/**
 * The deployment, as CDK context describes it (`cdk.json`, or `-c key=value` on the command line).
 * Every key, its default and what it changes is listed in docs/deploy.md; this file is the one
 * place that reads context, so the stacks receive typed, validated props and never call
 * `tryGetContext` themselves.
 */
/** The transports a deployment can host (in-process is for local runs and tests). */
export type Transport = Exclude<TransportKind, 'in-process'>;
export const TRANSPORTS = TRANSPORT_KINDS.filter((kind): kind is Transport => kind !== 'in-process') as [Transport, ...Transport[]];

/** The defaults, also written out in cdk.json so operators see them (a test keeps both equal). */
export const CONTEXT_DEFAULTS = {
  appName: 'slack-zone-bridge',
  transport: 'agentcore',
  bedrockModelId: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
  syncBudgetMs: 5_000,
  taskTimeoutMs: 600_000,
  /** A session per Slack conversation, ended 5 min after its last request: docs/operations.md, "AgentCore sessions" (npm run model). */
  agentcoreIdleTimeoutSeconds: 300,
  agentcoreMaxLifetimeSeconds: 28_800,
  executionProtocol: 'execute-task',
  /** On unless a deployment opts out: ~US$7 a month buys per-IP blocking before API Gateway (docs/deploy.md). */
  waf: true,
  wafRateLimit: 2_000,
  apiRateLimit: 50,
  apiBurstLimit: 100,
  rateLimitPerMinute: 20,
  maxTextLength: 4_000,
  slackReactions: false,
  /** Replies in a thread the bot answered in are answered without a new mention (docs/architecture.md §10.1). */
  threadFollowUps: true,
  /** A sign of life at once and the answer shown as it is produced (docs/architecture.md §2.5). */
  streamReplies: true,
  /** Guardrails at the boundary (docs/operations.md, "Guardrails"): off unless chosen. */
  guardrail: 'off',
  logRetentionDays: 30,
} as const;

const text = z.string().trim().min(1);
/** `-c key=value` always gives strings; cdk.json may give typed values. Both are accepted. */
const bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
/** A list as a JSON array (cdk.json) or a comma-separated string (`-c a=x,y`). */
const list = <O>(item: z.ZodType<O, string>) =>
  z
    .union([z.array(z.string()), z.string()])
    .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((entry) => entry.trim()).filter(Boolean))
    .pipe(z.array(item));
const accountId = z.string().regex(/^\d{12}$/, 'must be a 12-digit AWS account id');
const region = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as us-east-1');
const roleName = z.string().regex(/^[\w+=,.@-]{1,64}$/, 'must be an IAM role name (1–64 characters of [\\w+=,.@-])');
const transport = z.enum(TRANSPORTS);
const vpcId = z.string().regex(/^vpc-[0-9a-f]{8,17}$/, 'must be a VPC id (vpc-…)');

/** `standard`: the defaults; `strict`: KMS, a year of logs, API Gateway logging and tracing, VPCs (docs/deploy.md, "Governed accounts"). */
export const GOVERNANCE_LEVELS = ['standard', 'strict'] as const;
export type GovernanceLevel = (typeof GOVERNANCE_LEVELS)[number];

/** CloudWatch Logs only accepts these retention periods. */
const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

export const ContextSchema = z
  .object({
    appName: z.string().regex(/^[a-z][a-z0-9-]{0,30}$/, 'must be lower-case letters, digits and dashes (max 31)').default(CONTEXT_DEFAULTS.appName),
    transport: transport.default(CONTEXT_DEFAULTS.transport),
    /** Hosts the execution zone runs; two while swapping transports (docs/deploy.md). */
    executionHosts: list(transport).optional(),
    /** The verification zone talks to an execution zone this app does not deploy. */
    externalExecution: bool.default(false),

    executionAccountId: accountId.optional(),
    verificationAccountId: accountId.optional(),
    region: region.optional(),
    executionRegion: region.optional(),
    verificationRegion: region.optional(),

    agentRuntimeArn: z.string().regex(AGENT_RUNTIME_ARN, 'must be an AgentCore runtime ARN (arn:aws:bedrock-agentcore:<region>:<account>:runtime/<id>)').optional(),
    agentRuntimeQualifier: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]{0,47}$/, 'must be an AgentCore endpoint name').optional(),
    executionUrl: z.url({ protocol: /^https$/, error: 'must be an https:// URL' }).optional(),
    executionAuth: z.enum(AUTH_MODES).optional(),
    executionBearerSecretName: text.optional(),
    executionFunctionArn: z.string().regex(/^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[\w-]+$/, 'must be a Lambda function ARN').optional(),
    executionProtocol: z.enum(PROTOCOL_NAMES).default(CONTEXT_DEFAULTS.executionProtocol),
    a2aVersion: z.enum(['1.0', '0.3']).optional(),
    /** The ExecutionZone's AgentCore runtime allow-lists A2A-Version: an A2A 1.0 agent is hosted there. */
    a2aVersionHeader: bool.default(false),
    /** Several execution agents (cdk/execution-agents.ts): a JSON file, relative to the project root… */
    executionAgentsFile: text.optional(),
    /** …or the list itself (cdk.json), or its JSON (`-c executionAgents='[…]'`). */
    executionAgents: z.union([z.string(), z.array(z.unknown())]).optional(),

    /** https, two accounts: the function URL admits the two caller roles; false admits their whole account. */
    pinVerificationRoles: bool.default(true),
    invokerRoleName: roleName.optional(),
    pollerRoleName: roleName.optional(),

    bedrockModelId: text.default(CONTEXT_DEFAULTS.bedrockModelId),
    bedrockModelRegions: list(region).optional(),
    bedrockMaxTokens: int(1).optional(),
    // AgentCore environment values are at most 2048 characters.
    bedrockSystemPrompt: text.max(2048).optional(),
    syncBudgetMs: int(0, 60_000).default(CONTEXT_DEFAULTS.syncBudgetMs),
    taskTimeoutMs: int(1_000).default(CONTEXT_DEFAULTS.taskTimeoutMs),
    agentcoreIdleTimeoutSeconds: int(60, 28_800).default(CONTEXT_DEFAULTS.agentcoreIdleTimeoutSeconds),
    agentcoreMaxLifetimeSeconds: int(60, 28_800).default(CONTEXT_DEFAULTS.agentcoreMaxLifetimeSeconds),

    waf: bool.default(CONTEXT_DEFAULTS.waf),
    wafRateLimit: int(10, 2_000_000_000).default(CONTEXT_DEFAULTS.wafRateLimit),
    apiRateLimit: int(1).default(CONTEXT_DEFAULTS.apiRateLimit),
    apiBurstLimit: int(1, 5_000).default(CONTEXT_DEFAULTS.apiBurstLimit),

    signingSecretName: text.optional(),
    botTokenSecretName: text.optional(),
    allowedTeamIds: list(text).optional(),
    allowedUserIds: list(text).optional(),
    allowedChannelIds: list(text).optional(),
    slackBotUserId: text.optional(),
    /** Daily token budgets (USER_/CHANNEL_/TEAM_DAILY_TOKEN_BUDGET; docs/operations.md): unset, no budget. */
    userDailyTokenBudget: int(1).optional(),
    channelDailyTokenBudget: int(1).optional(),
    teamDailyTokenBudget: int(1).optional(),
    rateLimitPerMinute: int(0).default(CONTEXT_DEFAULTS.rateLimitPerMinute),
    maxTextLength: int(1).default(CONTEXT_DEFAULTS.maxTextLength),
    slackReactions: bool.default(CONTEXT_DEFAULTS.slackReactions),
    /** EXECUTION_SEND_BOT_TOKEN: agent-invoker sends the bot token to the execution zone as `bot_token`. */
    executionSendBotToken: bool.default(false),
    threadFollowUps: bool.default(CONTEXT_DEFAULTS.threadFollowUps),
    streamReplies: bool.default(CONTEXT_DEFAULTS.streamReplies),
    /** GUARDRAIL and its mode(s); bedrock with the guardrail's id and version (docs/operations.md, "Guardrails"). */
    guardrail: z.enum(GUARDRAIL_KINDS).default(CONTEXT_DEFAULTS.guardrail),
    guardrailMode: z.enum(GUARDRAIL_MODES).optional(),
    guardrailInputMode: z.enum(GUARDRAIL_MODES).optional(),
    guardrailOutputMode: z.enum(GUARDRAIL_MODES).optional(),
    guardrailId: z.string().regex(GUARDRAIL_ID_PATTERN, 'must be a Bedrock guardrail id or its ARN').optional(),
    guardrailVersion: z.string().regex(GUARDRAIL_VERSION_PATTERN, 'must be a guardrail version number or DRAFT').optional(),
    pollFirstDelaySeconds: int(0, 900).default(DEFAULT_POLL_SCHEDULE.firstDelaySeconds),
    pollBackoffFactor: z.coerce.number().min(1).default(DEFAULT_POLL_SCHEDULE.factor),
    pollMaxDelaySeconds: int(0, 900).default(DEFAULT_POLL_SCHEDULE.maxDelaySeconds),
    pollDeadlineSeconds: int(1).default(DEFAULT_POLL_SCHEDULE.deadlineSeconds),
    /**
     * Receives before each queue's DLQ: one setting that CDK writes both on the queue (its
     * maxReceiveCount) and on its consumer (TASK_/POLL_/REPLY_MAX_RECEIVE_COUNT), which replies
     * to the user on that receive.
     */
    taskMaxReceiveCount: int(1, 1000).default(QUEUE_SETTINGS.tasks.maxReceiveCount),
    pollMaxReceiveCount: int(1, 1000).default(QUEUE_SETTINGS.polls.maxReceiveCount),
    replyMaxReceiveCount: int(1, 1000).default(QUEUE_SETTINGS.replies.maxReceiveCount),
    /** Variables with no key of their own, for every verification function (cdk/environment.ts). */
    verificationEnvironment: EnvironmentMapSchema.optional(),
    /** Variables with no key of their own, for the execution runtime (cdk/environment.ts). */
    executionEnvironment: EnvironmentMapSchema.optional(),

    logRetentionDays: z.coerce
      .number()
      .refine((days): days is (typeof LOG_RETENTION_DAYS)[number] => (LOG_RETENTION_DAYS as readonly number[]).includes(days), {
        message: `must be one of ${LOG_RETENTION_DAYS.join(', ')}`,
      })
      .default(CONTEXT_DEFAULTS.logRetentionDays),
    alarmEmail: z.email().optional(),

    /** `strict`: every AWS Control Tower proactive control the app can satisfy passes (cdk/governance.ts). */
    governance: z.enum(GOVERNANCE_LEVELS).default('standard'),
    /** strict: this customer-managed key instead of one created per zone. */
    kmsKeyArn: z.string().regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/, 'must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)').optional(),
    /** strict: an existing VPC (looked up at synthesis, which needs credentials once) instead of one created per zone. */
    vpcId: vpcId.optional(),
    executionVpcId: vpcId.optional(),
    verificationVpcId: vpcId.optional(),
    /**
     * strict: the id of the Region's AWS-managed DynamoDB prefix list (com.amazonaws.<region>.dynamodb),
     * the one egress the execution zone's security group allows besides the endpoints. Given, the
     * synthesis needs no lookup; left out, it is looked up (credentials once, cached in cdk.context.json).
     */
    dynamodbPrefixListId: z.string().regex(/^pl-[0-9a-f]{8,17}$/, 'must be a prefix list id (pl-…)').optional(),
  })
  .superRefine((c, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (c.agentcoreIdleTimeoutSeconds > c.agentcoreMaxLifetimeSeconds) issue('agentcoreIdleTimeoutSeconds', 'must not exceed agentcoreMaxLifetimeSeconds');
    if (c.pollFirstDelaySeconds > c.pollMaxDelaySeconds) issue('pollFirstDelaySeconds', 'must not exceed pollMaxDelaySeconds');
    if (c.guardrail === 'bedrock') {
      if (!c.guardrailId) issue('guardrailId', 'is required with guardrail=bedrock');
      if (!c.guardrailVersion) issue('guardrailVersion', 'is required with guardrail=bedrock');
    } else {
      for (const key of ['guardrailId', 'guardrailVersion'] as const) if (c[key]) issue(key, 'is used only with guardrail=bedrock');
    }
    if (c.guardrail === 'off') {
      for (const key of ['guardrailMode', 'guardrailInputMode', 'guardrailOutputMode'] as const) if (c[key]) issue(key, 'is used only with guardrail=builtin or guardrail=bedrock');
    }
    for (const [key, zone] of [['verificationEnvironment', 'verification'], ['executionEnvironment', 'execution']] as const) {
      for (const [variable, problem] of environmentProblems(zone, c[key] ?? {})) issue(`${key}.${variable}`, problem);
    }
    if (c.executionHosts && c.executionHosts.length === 0) issue('executionHosts', 'must name at least one of agentcore, https');
    if (c.executionHosts && !c.externalExecution && !c.executionHosts.includes(c.transport)) {
      issue('executionHosts', `must include the transport the verification zone uses (${c.transport})`);
    }
    // With a list, the context's address is needed only for an own entry (checked once the list is read).
    if (c.externalExecution && c.executionAgentsFile === undefined && c.executionAgents === undefined) {
      if (c.transport === 'agentcore' && !c.agentRuntimeArn) issue('agentRuntimeArn', 'is required with externalExecution=true and transport=agentcore');
      if (c.transport === 'https' && !c.executionUrl) issue('executionUrl', 'is required with externalExecution=true and transport=https');
    }
    if (c.transport === 'https' && c.executionUrl) {
      const auth = c.executionAuth ?? (c.executionBearerSecretName ? 'bearer' : 'sigv4');
      if (auth === 'bearer' && !c.executionBearerSecretName) issue('executionBearerSecretName', 'is required with executionAuth=bearer');
      if (auth === 'sigv4' && !c.executionFunctionArn) {
        issue('executionFunctionArn', 'is required for a SigV4-signed executionUrl: the invoker may call exactly that function URL, so its function must be named');
      }
    }
    if (c.governance !== 'strict') {
      for (const key of ['kmsKeyArn', 'vpcId', 'executionVpcId', 'verificationVpcId', 'dynamodbPrefixListId'] as const) if (c[key]) issue(key, 'is used only with governance=strict');
    }
    // A Lambda worker must finish a handed-off task within its 15-minute limit (plus margin).
    const hosts = c.executionHosts ?? [c.transport];
    if (!c.externalExecution && hosts.includes('https') && c.taskTimeoutMs > 840_000) issue('taskTimeoutMs', 'must be at most 840000 when the https host runs (Lambda stops at 15 minutes)');
  });

export type ContextValues = z.infer<typeof ContextSchema>;

export class DeploymentConfigError extends Error {
  override name = 'DeploymentConfigError';
}

/** Where one zone is deployed. `undefined` leaves it to the CLI's credentials (env-agnostic). */
export type ZoneEnv = { account?: string; region?: string };

/** How the verification zone reaches the execution zone. */
export type ExecutionTarget =
  /** The execution zone of this app, same account and region: values flow by stack reference. */
  | { kind: 'linked' }
  /** An AgentCore runtime named by ARN (another account or region, or not deployed by CDK). */
  | { kind: 'agentcore-arn'; runtimeArn: string; qualifier?: string }
  /** An HTTPS endpoint named by URL. */
  | { kind: 'https-url'; url: string; auth: AuthMode; functionArn?: string; bearerSecretName?: string }
  /**
   * Not known yet: the zones are in different accounts or regions and the execution zone's
   * address was not passed. Only the ExecutionZone stack can be built (the first step of a
   * two-account deployment); `missing` says which context to pass for the VerificationZone.
   */
  | { kind: 'pending'; missing: string };

export type DeploymentConfig = {
  appName: string;
  transport: Transport;
  /** The hosts the ExecutionZone stack runs; empty when the execution zone is external. */
  executionHosts: readonly Transport[];
  executionEnv: ZoneEnv;
  verificationEnv: ZoneEnv;
  /** The two zones live in different accounts (both account ids given and different). */
  crossAccount: boolean;
  executionTarget: ExecutionTarget;
  /**
   * Several execution agents (`-c executionAgentsFile`, `executionAgents`), checked, each with its
   * grant; unset for the one agent of the plain context.
   */
  executionAgents?: readonly ExecutionAgentPlan[];
  /** Names of the verification roles that call the execution zone; set when another account must name them. */
  callerRoleNames?: { invoker: string; poller: string };
  context: ContextValues;
};

/** Parses raw context values; throws one error that names every bad key. */
export function parseDeploymentConfig(raw: Record<string, unknown>, defaults: { account?: string; region?: string } = {}): DeploymentConfig {
  const known = Object.fromEntries(Object.keys(ContextSchema.shape).map((key) => [key, emptyToUndefined(raw[key])]));
  const parsed = ContextSchema.safeParse(known);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'context'}: ${issue.message}`);
    throw new DeploymentConfigError(`invalid CDK context: ${issues.join('; ')}`);
  }
  const c = parsed.data;
  const executionEnv: ZoneEnv = {
    account: c.executionAccountId ?? c.verificationAccountId ?? defaults.account,
    region: c.executionRegion ?? c.region ?? defaults.region,
  };
  const verificationEnv: ZoneEnv = {
    account: c.verificationAccountId ?? c.executionAccountId ?? defaults.account,
    region: c.verificationRegion ?? c.region ?? defaults.region,
  };
  const crossAccount = Boolean(c.executionAccountId && c.verificationAccountId && c.executionAccountId !== c.verificationAccountId);
  if (crossAccount && (!executionEnv.region || !verificationEnv.region)) {
    // Resource policies name the other account's roles by ARN, whose partition follows the region.
    throw new DeploymentConfigError('invalid CDK context: region (or executionRegion and verificationRegion) is required when the zones are in different accounts');
  }
  const crossRegion = executionEnv.region !== verificationEnv.region;
  const executionTarget = resolveTarget(c, crossAccount || crossRegion);
  const executionAgents = agentsOf(c, verificationEnv);
  if (executionAgents?.some((agent) => agent.own) && c.externalExecution && executionTarget.kind !== 'agentcore-arn' && executionTarget.kind !== 'https-url') {
    throw new DeploymentConfigError(`invalid CDK context: ${sourceLabel(agentsSourceOf(c))}: an own agent of an external execution zone needs its address (${c.transport === 'agentcore' ? '-c agentRuntimeArn' : '-c executionUrl'})`);
  }
  return {
    appName: c.appName,
    transport: c.transport,
    executionHosts: c.externalExecution ? [] : [...new Set(c.executionHosts ?? [c.transport])],
    executionEnv,
    verificationEnv,
    crossAccount,
    executionTarget,
    ...(executionAgents ? { executionAgents } : {}),
    ...(crossAccount || c.invokerRoleName || c.pollerRoleName
      ? { callerRoleNames: { invoker: c.invokerRoleName ?? `${c.appName}-agent-invoker`, poller: c.pollerRoleName ?? `${c.appName}-async-result` } }
      : {}),
    context: c,
  };
}

function agentsSourceOf(c: ContextValues): { file?: string; inline?: unknown } {
  return { ...(c.executionAgentsFile !== undefined ? { file: c.executionAgentsFile } : {}), ...(c.executionAgents !== undefined ? { inline: c.executionAgents } : {}) };
}

/** The list of `-c executionAgentsFile` / `executionAgents`, checked as the functions check it, or undefined. */
function agentsOf(c: ContextValues, verificationEnv: ZoneEnv): ExecutionAgentPlan[] | undefined {
  const source = agentsSourceOf(c);
  try {
    const list = readExecutionAgents(source);
    if (list === undefined) return undefined;
    return planExecutionAgents(list, {
      transport: c.transport,
      ...(c.verificationEnvironment ? { verificationEnvironment: c.verificationEnvironment } : {}),
      ...(verificationEnv.account ? { account: verificationEnv.account } : {}),
      ...(verificationEnv.region ? { region: verificationEnv.region } : {}),
      sendBotToken: c.executionSendBotToken,
    }, sourceLabel(source));
  } catch (error) {
    if (error instanceof ExecutionAgentsError) throw new DeploymentConfigError(`invalid CDK context: ${error.message}`);
    throw error;
  }
}

function resolveTarget(c: ContextValues, separated: boolean): ExecutionTarget {
  if (c.transport === 'agentcore') {
    if (c.agentRuntimeArn) return { kind: 'agentcore-arn', runtimeArn: c.agentRuntimeArn, ...(c.agentRuntimeQualifier ? { qualifier: c.agentRuntimeQualifier } : {}) };
  } else if (c.executionUrl) {
    const auth = c.executionAuth ?? (c.executionBearerSecretName ? 'bearer' : 'sigv4');
    return {
      kind: 'https-url',
      url: c.executionUrl,
      auth,
      ...(c.executionFunctionArn ? { functionArn: c.executionFunctionArn } : {}),
      ...(c.executionBearerSecretName ? { bearerSecretName: c.executionBearerSecretName } : {}),
    };
  }
  if (separated) {
    return {
      kind: 'pending',
      missing:
        c.transport === 'agentcore'
          ? '-c agentRuntimeArn=<the ExecutionZone output RuntimeArn>'
          : '-c executionUrl=<the ExecutionZone output ExecutionUrl> -c executionFunctionArn=<the ExecutionZone output ExecutionFunctionArn>',
    };
  }
  return { kind: 'linked' };
}

/** Reads the context of an App (or any construct) into a validated DeploymentConfig. */
export function deploymentConfigFrom(node: Node): DeploymentConfig {
  const raw = Object.fromEntries(Object.keys(ContextSchema.shape).map((key) => [key, node.tryGetContext(key)]));
  return parseDeploymentConfig(raw, { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION });
}

function emptyToUndefined(value: unknown): unknown {
  return typeof value === 'string' && value.trim() === '' ? undefined : value;
}
