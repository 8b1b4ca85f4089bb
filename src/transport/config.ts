import { z } from 'zod';
import { ConfigError, withoutEmpty } from '../config/env';
import { AGENT_RUNTIME_ARN } from './arn';
import { TRANSPORT_KINDS, type TransportKind } from './transport';

/**
 * A transport's configuration, parsed once into one typed value (docs/architecture.md §4.2).
 *
 * This file is the only place that knows a transport's options: their types and defaults
 * (`TransportConfigSchema`), the environment variable each one is read from (`ENV_VARIABLES`),
 * and how a deployment writes them back as environment (`transportEnvironment`, used by CDK). A
 * new transport option is a line in the schema and a line in the table — nothing else in the
 * repository lists them. Everything that needs a transport (the verification functions, the
 * local stack, `zone call`, CDK) goes through `transportConfigFrom`.
 */

export const AUTH_MODES = ['sigv4', 'bearer', 'none'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** The transport used when configuration names none: what a deployment uses by default. */
export const DEFAULT_TRANSPORT: TransportKind = 'agentcore';

// Numbers arrive as strings from the environment and as numbers from JSON; both are accepted.
const count = (max: number) => z.coerce.number().int().min(1).max(max);
const ms = () => z.coerce.number().int().min(0);
const positive = () => z.coerce.number().int().min(1);

/**
 * How long a streamed read holds by default, in seconds (docs/contract.md, "Streamed answers";
 * docs/architecture.md §2.5): 30 s of text as the model writes it, for about $0.00025 of a 512 MB
 * function; a task that writes nothing for STREAM_QUIET_S (5 s) is let go to polling (src/verification/live/stream-hold.ts).
 */
export const DEFAULT_STREAM_HOLD_S = 30;
/**
 * The longest a caller reads one stream (`hold_ms`), in seconds: 0 reads none (every answer is
 * polled, as before streams), at most 900 (a Lambda's longest run; the caller keeps it inside its
 * own remaining time). Every transport has it: a stream is read over any of them.
 */
const streamHoldS = () => z.coerce.number().int().min(0).max(900).default(DEFAULT_STREAM_HOLD_S);
/**
 * How long a held stream may go without new text before the caller lets it go to polling, in
 * seconds (src/verification/live/stream-hold.ts): 5 s, the reference runtime's sync budget
 * (SYNC_BUDGET_MS) — a quiet task holds the invoker no longer than the plain call that answers
 * `accepted` did, so following a ten-minute task stays ≥ 100× cheaper than waiting on it (bench
 * part 5) — and above most models' time to a first token. 1 to 900.
 */
export const DEFAULT_STREAM_QUIET_S = 5;
const streamQuietS = () => z.coerce.number().int().min(1).max(900).default(DEFAULT_STREAM_QUIET_S);

/** The https transport's defaults: 30 s an attempt (the body too), 3 attempts, backoff from 200 ms to 5 s, a Retry-After of at most 10 s, answers up to 10 MiB. */
export const HTTPS_DEFAULTS = { timeoutMs: 30_000, maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 10_000, maxResponseBytes: 10 * 1024 * 1024 } as const;
/** AgentCore's: the SDK's standard retries, 3 attempts; answers up to 10 MiB (AgentCore's response chunk). */
export const AGENTCORE_DEFAULTS = { maxAttempts: 3, maxResponseBytes: 10 * 1024 * 1024 } as const;

const AgentCoreConfigSchema = z
  .object({
    kind: z.literal('agentcore'),
    runtimeArn: z.string().regex(AGENT_RUNTIME_ARN, 'must be an AgentCore runtime ARN (arn:aws:bedrock-agentcore:<region>:<account>:runtime/<id>)'),
    /** Endpoint qualifier; AgentCore's default is DEFAULT. */
    qualifier: z.string().min(1).optional(),
    /** Used when the ARN names none (it always does). */
    region: z.string().min(1).optional(),
    /** The SDK's standard retry mode, attempts in all. */
    maxAttempts: count(10).default(AGENTCORE_DEFAULTS.maxAttempts),
    timeoutMs: positive().optional(),
    maxResponseBytes: positive().default(AGENTCORE_DEFAULTS.maxResponseBytes),
    streamHoldS: streamHoldS(),
    streamQuietS: streamQuietS(),
  })
  .strict();

const HttpsConfigSchema = z
  .object({
    kind: z.literal('https'),
    url: z.string().min(1),
    /** Unset: `none` for a loopback URL, `sigv4` otherwise. */
    auth: z.enum(AUTH_MODES).optional(),
    bearerToken: z.string().min(1).optional(),
    bearerSecretArn: z.string().min(1).optional(),
    sigv4Service: z.string().min(1).optional(),
    region: z.string().min(1).optional(),
    timeoutMs: positive().default(HTTPS_DEFAULTS.timeoutMs),
    maxAttempts: count(10).default(HTTPS_DEFAULTS.maxAttempts),
    baseDelayMs: ms().default(HTTPS_DEFAULTS.baseDelayMs),
    maxDelayMs: ms().default(HTTPS_DEFAULTS.maxDelayMs),
    maxRetryAfterMs: ms().default(HTTPS_DEFAULTS.maxRetryAfterMs),
    maxResponseBytes: positive().default(HTTPS_DEFAULTS.maxResponseBytes),
    streamHoldS: streamHoldS(),
    streamQuietS: streamQuietS(),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.auth === 'bearer' && !config.bearerToken && !config.bearerSecretArn) {
      ctx.addIssue({ code: 'custom', path: ['auth'], message: 'bearer needs a token (bearerToken) or a Secrets Manager secret (bearerSecretArn)' });
    }
  });

const InProcessConfigSchema = z.object({ kind: z.literal('in-process'), streamHoldS: streamHoldS(), streamQuietS: streamQuietS() }).strict();

export const TransportConfigSchema = z.discriminatedUnion('kind', [AgentCoreConfigSchema, HttpsConfigSchema, InProcessConfigSchema]);
export type TransportConfig = z.infer<typeof TransportConfigSchema>;
/** Before defaults are applied: what a caller writes by hand. */
export type TransportConfigInput = z.input<typeof TransportConfigSchema>;
export type TransportConfigOf<K extends TransportKind> = Extract<TransportConfig, { kind: K }>;

/** One transport's options without its kind, as a caller may give some of them. */
export type TransportFields<K extends TransportKind> = Partial<Omit<Extract<TransportConfigInput, { kind: K }>, 'kind'>>;
/** Values per transport kind; `kind` picks the transport when configuration names none. */
export type TransportValues = { kind?: TransportKind } & { [K in TransportKind]?: TransportFields<K> };

const STREAM_HOLD_VARIABLE = 'STREAM_HOLD_S';
const STREAM_QUIET_VARIABLE = 'STREAM_QUIET_S';

/** The environment variable each option is read from, per transport. */
export const ENV_VARIABLES: { [K in TransportKind]: { [F in keyof TransportFields<K>]-?: string } } = {
  agentcore: {
    runtimeArn: 'AGENTCORE_RUNTIME_ARN',
    qualifier: 'AGENTCORE_QUALIFIER',
    region: 'AWS_REGION',
    maxAttempts: 'AGENTCORE_MAX_ATTEMPTS',
    timeoutMs: 'AGENTCORE_TIMEOUT_MS',
    maxResponseBytes: 'AGENTCORE_MAX_RESPONSE_BYTES',
    streamHoldS: STREAM_HOLD_VARIABLE,
    streamQuietS: STREAM_QUIET_VARIABLE,
  },
  https: {
    url: 'EXECUTION_URL',
    auth: 'EXECUTION_AUTH',
    bearerToken: 'EXECUTION_BEARER_TOKEN',
    bearerSecretArn: 'EXECUTION_BEARER_SECRET_ARN',
    sigv4Service: 'EXECUTION_SIGV4_SERVICE',
    region: 'AWS_REGION',
    timeoutMs: 'EXECUTION_TIMEOUT_MS',
    maxAttempts: 'EXECUTION_MAX_ATTEMPTS',
    baseDelayMs: 'EXECUTION_RETRY_BASE_DELAY_MS',
    maxDelayMs: 'EXECUTION_RETRY_MAX_DELAY_MS',
    maxRetryAfterMs: 'EXECUTION_MAX_RETRY_AFTER_MS',
    maxResponseBytes: 'EXECUTION_MAX_RESPONSE_BYTES',
    streamHoldS: STREAM_HOLD_VARIABLE,
    streamQuietS: STREAM_QUIET_VARIABLE,
  },
  'in-process': { streamHoldS: STREAM_HOLD_VARIABLE, streamQuietS: STREAM_QUIET_VARIABLE },
};
export const TRANSPORT_VARIABLE = 'TRANSPORT';

export type TransportSources = {
  /** Operator configuration: TRANSPORT and the variables in ENV_VARIABLES. */
  env?: NodeJS.ProcessEnv;
  /**
   * One agent of several (an EXECUTION_AGENTS entry): its kind and its own options, which win
   * over the environment; options it leaves out (timeouts, retries, region…) come from the
   * environment as for a single agent. `label` names the entry in errors.
   */
  entry?: { kind: TransportKind; fields: Record<string, unknown>; label: string };
  /** Fills what neither the entry nor the environment sets (the local stack's loopback runtime). */
  defaults?: TransportValues;
  /** Wins over everything (command-line flags). */
  overrides?: TransportValues;
};

/**
 * The transport configuration: overrides, then the entry, then the environment, then defaults.
 * Throws a ConfigError naming each bad value by what the operator can change.
 */
export function transportConfigFrom(sources: TransportSources = {}): TransportConfig {
  const env = withoutEmpty(sources.env ?? {});
  const named = env[TRANSPORT_VARIABLE];
  if (named !== undefined && !isTransportKind(named)) {
    throw new ConfigError(`invalid transport configuration: ${TRANSPORT_VARIABLE} must be one of ${TRANSPORT_KINDS.join(', ')}, not ${JSON.stringify(named)}`);
  }
  const kind: TransportKind = sources.overrides?.kind ?? sources.entry?.kind ?? named ?? sources.defaults?.kind ?? DEFAULT_TRANSPORT;
  const fromEnv = Object.fromEntries(
    Object.entries(ENV_VARIABLES[kind] as Record<string, string>).flatMap(([field, variable]) => (env[variable] === undefined ? [] : [[field, env[variable]]])),
  );
  const input = { ...sources.defaults?.[kind], ...fromEnv, ...sources.entry?.fields, ...sources.overrides?.[kind], kind };
  const parsed = TransportConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const variables = ENV_VARIABLES[kind] as Record<string, string>;
  // Name each value by what the operator can change: the entry's field, else the variable.
  const where = (field: string) => {
    if (!field) return sources.entry?.label ?? 'transport';
    const fromEntry = sources.entry && (field in sources.entry.fields || !(field in fromEnv));
    return fromEntry ? `${sources.entry!.label}.${field}` : (variables[field] ?? field);
  };
  const issues = parsed.error.issues.map((issue) => {
    const field = String(issue.path[0] ?? '');
    if (issue.code === 'custom' && field === 'auth') return `${where('auth')}=bearer needs ${where('bearerToken')} or ${where('bearerSecretArn')}`;
    if (issue.code === 'invalid_type' && (input as Record<string, unknown>)[field] === undefined) {
      return sources.entry ? `${where(field)}: transport ${kind} needs ${field}` : `${TRANSPORT_VARIABLE}=${kind} needs ${where(field)}`;
    }
    return `${where(field)}: ${issue.message}`;
  });
  throw new ConfigError(`invalid transport configuration: ${issues.join('; ')}`);
}

export function isAuthMode(value: unknown): value is AuthMode {
  return (AUTH_MODES as readonly unknown[]).includes(value);
}

export function isTransportKind(value: unknown): value is TransportKind {
  return (TRANSPORT_KINDS as readonly unknown[]).includes(value);
}

/**
 * The environment that configures a transport — what a deployment (CDK) sets on the functions
 * that call the execution zone. The inverse of `transportConfigFrom({ env })`.
 */
export function transportEnvironment<K extends TransportKind>(kind: K, fields: TransportFields<K>): Record<string, string> {
  const variables = ENV_VARIABLES[kind] as Record<string, string>;
  const env: Record<string, string> = { [TRANSPORT_VARIABLE]: kind };
  for (const [field, value] of Object.entries(fields as Record<string, unknown>)) {
    if (value === undefined) continue;
    const variable = variables[field];
    if (!variable) throw new ConfigError(`transport ${kind} has no option ${field}`);
    env[variable] = String(value);
  }
  return env;
}
