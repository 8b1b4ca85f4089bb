import { z } from 'zod';
import { withoutEmpty } from '../src/config/env';
import { ExecutionConfigSchema } from '../src/execution/config';
import { parseCustomPatterns } from '../src/guardrail/custom-patterns';
import { ENV_VARIABLES, transportConfigFrom } from '../src/transport/config';
import { agentPromptsOf } from '../src/verification/surface/suggested-prompts';
import { VerificationConfigSchema } from '../src/verification/config';
import { userMessages } from '../src/verification/messages/user-messages';

/**
 * How a deployment sets each environment variable the code reads — the one table the CDK app, the
 * operator docs (README.md, docs/operations.md: the "in a deployment" column) and the drift test
 * (test/docs/drift.test.ts) share:
 *
 * - `cdk`: CDK writes it from what it deploys (a queue URL, a secret ARN, the linked runtime), or
 *   from the context `keys` when given. An edit on the function vanishes at the next deploy.
 * - `context`: CDK writes it from these context keys only (`-c key=value`, cdk.json).
 * - `environment`: no key of its own; set it with `-c verificationEnvironment` /
 *   `-c executionEnvironment` (cdk.json: `{"NAME": value}`), which checks the value at synthesis with
 *   the same schema the function parses it with, and writes it on every function of that zone.
 * - `never`: CDK does not set it: a deployment does not use it, or Lambda sets it (`why` says which).
 */
export type Zone = 'verification' | 'execution';
export type EnvironmentRoute =
  | { readonly set: 'cdk'; readonly keys?: readonly string[] }
  | { readonly set: 'context'; readonly keys: readonly string[] }
  | { readonly set: 'environment'; readonly zones: readonly Zone[] }
  | { readonly set: 'never'; readonly why: string };

const cdk = (...keys: string[]): EnvironmentRoute => ({ set: 'cdk', ...(keys.length ? { keys } : {}) });
const context = (...keys: string[]): EnvironmentRoute => ({ set: 'context', keys });
const verification: EnvironmentRoute = { set: 'environment', zones: ['verification'] };
const execution: EnvironmentRoute = { set: 'environment', zones: ['execution'] };
const never = (why: string): EnvironmentRoute => ({ set: 'never', why });

export const ENVIRONMENT_ROUTES: Readonly<Record<string, EnvironmentRoute>> = {
  // Verification zone (src/verification/config.ts).
  SLACK_SIGNING_SECRET: never('a secret value would sit in the template: the deployment reads SLACK_SIGNING_SECRET_ARN'),
  SLACK_SIGNING_SECRET_ARN: cdk('signingSecretName'),
  SLACK_BOT_TOKEN: never('a secret value would sit in the template: the deployment reads SLACK_BOT_TOKEN_ARN'),
  SLACK_BOT_TOKEN_ARN: cdk('botTokenSecretName'),
  SLACK_API_URL: verification,
  SLACK_BOT_USER_ID: context('slackBotUserId'),
  ALLOWED_TEAM_IDS: context('allowedTeamIds'),
  ALLOWED_USER_IDS: context('allowedUserIds'),
  ALLOWED_CHANNEL_IDS: context('allowedChannelIds'),
  RATE_LIMIT_PER_MINUTE: context('rateLimitPerMinute'),
  MAX_TEXT_LENGTH: context('maxTextLength'),
  EVENT_CLAIM_TTL_SECONDS: verification,
  STATE_TABLE_NAME: cdk(),
  TASK_QUEUE_URL: cdk(),
  POLL_QUEUE_URL: cdk(),
  REPLY_QUEUE_URL: cdk(),
  // One setting each: the same key sets the queue's maxReceiveCount and the variable.
  TASK_MAX_RECEIVE_COUNT: context('taskMaxReceiveCount'),
  POLL_MAX_RECEIVE_COUNT: context('pollMaxReceiveCount'),
  REPLY_MAX_RECEIVE_COUNT: context('replyMaxReceiveCount'),
  POLL_FIRST_DELAY_S: context('pollFirstDelaySeconds'),
  POLL_BACKOFF_FACTOR: context('pollBackoffFactor'),
  POLL_MAX_DELAY_S: context('pollMaxDelaySeconds'),
  POLL_DEADLINE_S: context('pollDeadlineSeconds'),
  SLACK_REACTIONS: context('slackReactions'),
  EXECUTION_SEND_BOT_TOKEN: context('executionSendBotToken'),
  USER_MESSAGES_JSON: verification,
  THREAD_CONTEXT_MAX_MESSAGES: verification,
  THREAD_CONTEXT_MAX_CHARS: verification,
  THREAD_CONTEXT_MAX_PAGES: verification,
  THREAD_FOLLOW_UPS: context('threadFollowUps'),
  THREAD_MEMORY_TTL_SECONDS: verification,
  FILE_URL_ALLOWLIST: verification,
  FILE_URL_MAX_BYTES: verification,
  FILE_URL_TIMEOUT_MS: verification,
  ATTACHMENT_MAX_IMAGES: verification,
  ATTACHMENT_MAX_IMAGE_BYTES: verification,
  ATTACHMENT_MAX_DOCUMENTS: verification,
  ATTACHMENT_MAX_DOCUMENT_BYTES: verification,
  ATTACHMENT_MAX_TOTAL_BYTES: verification,
  STREAM_REPLIES: context('streamReplies'),
  STREAM_POLL_DELAY_S: verification,
  SLACK_READ_BUDGET_MS: verification,
  AGENT_SESSIONS: verification,
  STOP_ADMIN_USERS: verification,
  INPUT_TIMEOUT_S: verification,
  AGENT_PROMPTS_JSON: verification,
  FEEDBACK_BUTTONS: verification,
  FEEDBACK_RETENTION_DAYS: verification,
  USER_DAILY_TOKEN_BUDGET: context('userDailyTokenBudget'),
  CHANNEL_DAILY_TOKEN_BUDGET: context('channelDailyTokenBudget'),
  TEAM_DAILY_TOKEN_BUDGET: context('teamDailyTokenBudget'),
  USAGE_RETENTION_DAYS: verification,
  AUDIT_RETENTION_DAYS: verification,
  AUDIT_MESSAGE_TEXT: verification,
  MAX_TASK_TOKENS: verification,
  AGENTCORE_STOP_SESSION: verification,
  GUARDRAIL: context('guardrail'),
  GUARDRAIL_MODE: context('guardrailMode'),
  GUARDRAIL_INPUT_MODE: context('guardrailInputMode'),
  GUARDRAIL_OUTPUT_MODE: context('guardrailOutputMode'),
  GUARDRAIL_ID: context('guardrailId'),
  GUARDRAIL_VERSION: context('guardrailVersion'),
  GUARDRAIL_PATTERNS_JSON: verification,
  GUARDRAIL_TIMEOUT_MS: verification,
  VERIFICATION_PORT: never('`zone start` only: the deployment is served by API Gateway'),
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: never('the `zone` command only: a Lambda runtime picks its own Node version'),

  // The execution agent (src/protocols/agent-config.ts, src/transport/config.ts).
  EXECUTION_PROTOCOL: context('executionProtocol'),
  A2A_VERSION: context('a2aVersion'),
  // The list of -c executionAgentsFile / executionAgents, the own agent's address filled in (cdk/execution-agents.ts).
  EXECUTION_AGENTS: cdk('executionAgentsFile', 'executionAgents'),
  TRANSPORT: context('transport'),
  AGENTCORE_RUNTIME_ARN: cdk('agentRuntimeArn'),
  AGENTCORE_QUALIFIER: context('agentRuntimeQualifier'),
  AGENTCORE_MAX_ATTEMPTS: verification,
  AGENTCORE_TIMEOUT_MS: verification,
  AGENTCORE_MAX_RESPONSE_BYTES: verification,
  AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: verification,
  AWS_REGION: cdk(),
  AWS_DEFAULT_REGION: never('Lambda sets AWS_REGION'),
  AWS_ACCESS_KEY_ID: never("Lambda sets it from the function's role"),
  AWS_SECRET_ACCESS_KEY: never("Lambda sets it from the function's role"),
  AWS_SESSION_TOKEN: never("Lambda sets it from the function's role"),
  AWS_ENDPOINT_URL: never('AWS endpoints; an override is for a local or private endpoint'),
  AWS_ENDPOINT_URL_DYNAMODB: never('AWS endpoints; an override is for a local or private endpoint'),
  AWS_ENDPOINT_URL_SQS: never('AWS endpoints; an override is for a local or private endpoint'),
  AWS_ENDPOINT_URL_SECRETS_MANAGER: never('AWS endpoints; an override is for a local or private endpoint'),
  // Read as AWS's SDKs read them: the verification zone's own client (src/aws/aws-json-client.ts) and the SDK clients of both zones.
  AWS_USE_FIPS_ENDPOINT: { set: 'environment', zones: ['verification', 'execution'] },
  AWS_USE_DUALSTACK_ENDPOINT: { set: 'environment', zones: ['verification', 'execution'] },
  EXECUTION_URL: cdk('executionUrl'),
  EXECUTION_AUTH: cdk('executionAuth'),
  EXECUTION_SIGV4_SERVICE: verification,
  EXECUTION_BEARER_TOKEN: never('a secret value would sit in the template: the deployment reads EXECUTION_BEARER_SECRET_ARN'),
  EXECUTION_BEARER_SECRET_ARN: context('executionBearerSecretName'),
  EXECUTION_TIMEOUT_MS: verification,
  EXECUTION_MAX_ATTEMPTS: verification,
  EXECUTION_RETRY_BASE_DELAY_MS: verification,
  EXECUTION_RETRY_MAX_DELAY_MS: verification,
  EXECUTION_MAX_RETRY_AFTER_MS: verification,
  EXECUTION_MAX_RESPONSE_BYTES: verification,
  STREAM_HOLD_S: verification,
  STREAM_QUIET_S: verification,

  // Execution zone (src/execution/config.ts and its hosts).
  EXECUTOR: cdk(),
  ECHO_DELAY_MS: never('the deployment runs the bedrock executor'),
  ECHO_STREAM_MS: never('the deployment runs the bedrock executor'),
  BEDROCK_MODEL_ID: context('bedrockModelId'),
  BEDROCK_SYSTEM_PROMPT: context('bedrockSystemPrompt'),
  BEDROCK_MAX_TOKENS: context('bedrockMaxTokens'),
  SYNC_BUDGET_MS: context('syncBudgetMs'),
  STREAM_FIRST_TEXT_MS: execution,
  STREAM_MAX_MS: execution,
  TASK_TIMEOUT_MS: context('taskTimeoutMs'),
  TASK_TTL_SECONDS: execution,
  TASK_STORE: cdk(),
  TASK_TABLE_NAME: cdk(),
  TASK_STORE_MAX_BYTES: never('the deployment keeps tasks in DynamoDB (TASK_STORE=dynamodb): the bound is for the memory store'),
  MAX_BODY_BYTES: execution,
  MAX_BATCH_LENGTH: execution,
  MAX_CONCURRENT_TASKS: execution,
  AGENT_NAME: execution,
  EXECUTION_HOST: never('`zone serve` only: the AgentCore host listens on 0.0.0.0:8080, as AgentCore requires'),
  EXECUTION_PORT: never('`zone serve` only: the AgentCore host listens on 0.0.0.0:8080, as AgentCore requires'),
  WORKER_QUEUE_URL: cdk(),

  // Both zones.
  POWERTOOLS_LOG_LEVEL: { set: 'environment', zones: ['verification', 'execution'] },
};

/** The variables `-c <zone>Environment` may set. */
export function environmentVariablesOf(zone: Zone): string[] {
  return Object.entries(ENVIRONMENT_ROUTES)
    .filter(([, route]) => route.set === 'environment' && route.zones.includes(zone))
    .map(([name]) => name);
}

/** AgentCore takes environment values of at most 2048 characters; Lambda all of a function's in 4 KB. */
const AGENTCORE_VALUE_LIMIT = 2048;
const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

/**
 * `-c verificationEnvironment` / `-c executionEnvironment`: a JSON object (cdk.json) or its text
 * (`-c 'verificationEnvironment={"SLACK_READ_BUDGET_MS":5000}'`). Values may be strings, numbers or
 * booleans; an object or array (USER_MESSAGES_JSON) is written as its JSON.
 */
export const EnvironmentMapSchema = z
  .union([z.string(), z.record(z.string(), z.unknown())])
  .transform((value, ctx) => {
    if (typeof value !== 'string') return value;
    try {
      const parsed: unknown = JSON.parse(value);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object of variable names and values' });
    return z.NEVER;
  })
  .transform((value, ctx) => {
    const env: Record<string, string> = {};
    for (const [name, raw] of Object.entries(value)) {
      if (raw === null || raw === undefined) continue;
      if (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') env[name] = String(raw);
      else if (typeof raw === 'object') env[name] = JSON.stringify(raw);
      else ctx.addIssue({ code: 'custom', path: [name], message: 'must be a string, number, boolean or JSON value' });
    }
    return env;
  });

/**
 * What is wrong with an extra environment for one zone, as `[variable, problem]` pairs: a variable
 * the zone does not read, one CDK sets itself (its key is named), or a value the function would
 * refuse at start-up. Empty when it is fine.
 */
export function environmentProblems(zone: Zone, env: Record<string, string>): Array<[string, string]> {
  const problems: Array<[string, string]> = [];
  const allowed = new Set(environmentVariablesOf(zone));
  for (const name of Object.keys(env)) {
    if (allowed.has(name)) continue;
    const route = ENVIRONMENT_ROUTES[name];
    if (!route) problems.push([name, `is not a variable the ${zone} zone reads`]);
    else if (route.set === 'context') problems.push([name, `is set by CDK from ${route.keys.map((key) => `-c ${key}`).join(', ')}`]);
    else if (route.set === 'cdk') problems.push([name, `is set by CDK${route.keys ? ` (or from ${route.keys.map((key) => `-c ${key}`).join(', ')})` : ''}`]);
    else if (route.set === 'never') problems.push([name, `is not used by a deployment: ${route.why}`]);
    else problems.push([name, `is not a variable of the ${zone} zone`]);
  }
  const own = Object.fromEntries(Object.entries(env).filter(([name]) => allowed.has(name)));
  const schemaIssues = (schema: z.core.$ZodObject, values: Record<string, string>) => {
    const parsed = z.safeParse(schema, withoutEmpty(values));
    if (!parsed.success) for (const issue of parsed.error.issues) problems.push([String(issue.path[0]), issue.message]);
  };
  if (own.POWERTOOLS_LOG_LEVEL !== undefined && !(LOG_LEVELS as readonly string[]).includes(own.POWERTOOLS_LOG_LEVEL)) {
    problems.push(['POWERTOOLS_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`]);
  }
  for (const name of ['AWS_USE_FIPS_ENDPOINT', 'AWS_USE_DUALSTACK_ENDPOINT'] as const) {
    if (own[name] !== undefined && own[name] !== 'true' && own[name] !== 'false') problems.push([name, 'must be true or false']);
  }
  if (zone === 'verification') {
    schemaIssues(VerificationConfigSchema, pick(own, Object.keys(VerificationConfigSchema.shape)));
    if (own.USER_MESSAGES_JSON !== undefined) {
      try {
        userMessages(own.USER_MESSAGES_JSON);
      } catch (error) {
        problems.push(['USER_MESSAGES_JSON', `must be a JSON object of message keys and texts (${(error as Error).message.split('\n')[0]})`]);
      }
    }
    if (own.AGENT_PROMPTS_JSON !== undefined) {
      try {
        agentPromptsOf(own.AGENT_PROMPTS_JSON);
      } catch (error) {
        problems.push(['AGENT_PROMPTS_JSON', (error as Error).message.replace(/^AGENT_PROMPTS_JSON /, '')]);
      }
    }
    if (own.GUARDRAIL_PATTERNS_JSON !== undefined) {
      try {
        parseCustomPatterns(own.GUARDRAIL_PATTERNS_JSON);
      } catch (error) {
        problems.push(['GUARDRAIL_PATTERNS_JSON', (error as Error).message.replace(/^GUARDRAIL_PATTERNS_JSON:? /, '')]);
      }
    }
    if (own.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE !== undefined && !z.url().safeParse(own.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE).success) {
      problems.push(['AWS_ENDPOINT_URL_BEDROCK_AGENTCORE', 'must be a URL']);
    }
    // The transport options, read the way the invoker and the poller read them (an address is
    // given so that only the options are judged).
    const addresses = { agentcore: { AGENTCORE_RUNTIME_ARN: 'arn:aws:bedrock-agentcore:us-east-1:111111111111:runtime/check-AbCdEf1234' }, https: { EXECUTION_URL: 'https://example.com/' } } as const;
    for (const kind of ['agentcore', 'https'] as const) {
      const options = pick(own, Object.values(ENV_VARIABLES[kind] as Record<string, string>).filter((name) => name !== 'AWS_REGION'));
      if (Object.keys(options).length === 0) continue;
      try {
        transportConfigFrom({ env: { TRANSPORT: kind, ...addresses[kind], ...options } });
      } catch (error) {
        const message = (error as Error).message.replace(/^invalid transport configuration: /, '');
        for (const part of message.split('; ')) problems.push([part.split(':')[0]!.trim(), part.slice(part.indexOf(':') + 1).trim()]);
      }
    }
  } else {
    schemaIssues(ExecutionConfigSchema, pick(own, Object.keys(ExecutionConfigSchema.shape)));
    for (const [name, value] of Object.entries(own)) {
      if (value.length > AGENTCORE_VALUE_LIMIT) problems.push([name, `must be at most ${AGENTCORE_VALUE_LIMIT} characters (AgentCore's limit)`]);
    }
  }
  return problems;
}

function pick(env: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => names.includes(name)));
}
