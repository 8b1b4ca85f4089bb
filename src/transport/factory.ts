import { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { z } from 'zod';
import { ConfigError, envInt, parseEnv } from '../config/env';
import type { Log } from '../observability/logger';
import { AgentCoreTransport } from './agentcore';
import { AGENT_RUNTIME_ARN, regionOfArn } from './arn';
import { secretsManagerBearerToken, staticBearerToken, type BearerTokenProvider } from './bearer-token';
import { HTTPS_DEFAULTS, HttpsTransport, type HttpsAuth } from './https';
import { InProcessTransport, type BodyHandler } from './in-process';
import { isLoopbackUrl } from './loopback';
import type { Sleep } from './retry';
import type { SigV4Credentials } from './sigv4-signer';
import type { Transport } from './transport';

/**
 * Which transport, from configuration (ARCHITECTURE §4: swapping is configuration, never code).
 * `TransportConfig` is the parsed, validated form; `transportConfigFromEnv` reads it from the
 * environment variables an operator sets; `createTransport` builds the transport.
 */
const positiveInt = z.number().int().min(1);

export const TransportConfigSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('agentcore'),
    runtimeArn: z.string().regex(AGENT_RUNTIME_ARN, 'must be an AgentCore runtime ARN (arn:aws:bedrock-agentcore:<region>:<account>:runtime/<id>)'),
    qualifier: z.string().min(1).optional(),
    /** Used when the ARN names none (it always does); AWS_REGION. */
    region: z.string().min(1).optional(),
    /** The SDK's standard retry mode, attempts in all. */
    maxAttempts: positiveInt.max(10).default(3),
    timeoutMs: positiveInt.optional(),
    maxResponseBytes: positiveInt.default(10 * 1024 * 1024),
  }),
  z.object({
    kind: z.literal('https'),
    url: z.string().min(1),
    /** Unset: `none` for a loopback URL, `sigv4` otherwise. */
    auth: z.enum(['none', 'sigv4', 'bearer']).optional(),
    bearerToken: z.string().min(1).optional(),
    bearerSecretArn: z.string().min(1).optional(),
    sigv4Service: z.string().min(1).optional(),
    region: z.string().min(1).optional(),
    timeoutMs: positiveInt.default(HTTPS_DEFAULTS.timeoutMs),
    maxAttempts: positiveInt.max(10).default(HTTPS_DEFAULTS.maxAttempts),
    baseDelayMs: z.number().int().min(0).default(HTTPS_DEFAULTS.baseDelayMs),
    maxDelayMs: z.number().int().min(0).default(HTTPS_DEFAULTS.maxDelayMs),
    maxRetryAfterMs: z.number().int().min(0).default(HTTPS_DEFAULTS.maxRetryAfterMs),
    maxResponseBytes: positiveInt.default(HTTPS_DEFAULTS.maxResponseBytes),
  }),
  z.object({ kind: z.literal('in-process') }),
]);
export type TransportConfig = z.infer<typeof TransportConfigSchema>;
/** Before defaults are applied: what a caller writes by hand. */
export type TransportConfigInput = z.input<typeof TransportConfigSchema>;

const optionalInt = (min: number) => z.coerce.number().int().min(min).optional();

const TransportEnvSchema = z.object({
  TRANSPORT: z.enum(['agentcore', 'https', 'in-process']).default('agentcore'),
  AGENTCORE_RUNTIME_ARN: z.string().optional(),
  AGENTCORE_QUALIFIER: z.string().optional(),
  AGENTCORE_MAX_ATTEMPTS: envInt(3, 1, 10),
  AGENTCORE_TIMEOUT_MS: optionalInt(1),
  AGENTCORE_MAX_RESPONSE_BYTES: optionalInt(1),
  EXECUTION_URL: z.string().optional(),
  EXECUTION_AUTH: z.enum(['none', 'sigv4', 'bearer']).optional(),
  EXECUTION_BEARER_TOKEN: z.string().optional(),
  EXECUTION_BEARER_SECRET_ARN: z.string().optional(),
  EXECUTION_SIGV4_SERVICE: z.string().optional(),
  EXECUTION_TIMEOUT_MS: optionalInt(1),
  EXECUTION_MAX_ATTEMPTS: envInt(HTTPS_DEFAULTS.maxAttempts, 1, 10),
  EXECUTION_RETRY_BASE_DELAY_MS: optionalInt(0),
  EXECUTION_RETRY_MAX_DELAY_MS: optionalInt(0),
  EXECUTION_MAX_RETRY_AFTER_MS: optionalInt(0),
  EXECUTION_MAX_RESPONSE_BYTES: optionalInt(1),
  AWS_REGION: z.string().optional(),
});

/** Which variable each config field comes from, so errors name what the operator can change. */
const ENV_NAME: Record<string, string> = {
  runtimeArn: 'AGENTCORE_RUNTIME_ARN',
  qualifier: 'AGENTCORE_QUALIFIER',
  url: 'EXECUTION_URL',
  auth: 'EXECUTION_AUTH',
};

/**
 * One agent's own address, for deployments with several agents (EXECUTION_AGENTS): it replaces
 * the matching variables, and everything else (timeouts, retries, bearer token source, region)
 * still comes from the environment.
 */
export type TransportAddress = {
  kind?: TransportConfig['kind'];
  url?: string;
  auth?: 'none' | 'sigv4' | 'bearer';
  runtimeArn?: string;
  qualifier?: string;
};

export function transportConfigFromEnv(env: NodeJS.ProcessEnv = process.env, address: TransportAddress = {}): TransportConfig {
  const addressed: NodeJS.ProcessEnv = {
    ...env,
    ...(address.kind ? { TRANSPORT: address.kind } : {}),
    ...(address.url ? { EXECUTION_URL: address.url } : {}),
    ...(address.auth ? { EXECUTION_AUTH: address.auth } : {}),
    ...(address.runtimeArn ? { AGENTCORE_RUNTIME_ARN: address.runtimeArn } : {}),
    ...(address.qualifier ? { AGENTCORE_QUALIFIER: address.qualifier } : {}),
  };
  const e = parseEnv(TransportEnvSchema, addressed, 'transport');
  let input: TransportConfigInput;
  switch (e.TRANSPORT) {
    case 'agentcore':
      if (!e.AGENTCORE_RUNTIME_ARN) throw new ConfigError('TRANSPORT=agentcore needs AGENTCORE_RUNTIME_ARN');
      input = {
        kind: 'agentcore',
        runtimeArn: e.AGENTCORE_RUNTIME_ARN,
        qualifier: e.AGENTCORE_QUALIFIER,
        region: e.AWS_REGION,
        maxAttempts: e.AGENTCORE_MAX_ATTEMPTS,
        timeoutMs: e.AGENTCORE_TIMEOUT_MS,
        maxResponseBytes: e.AGENTCORE_MAX_RESPONSE_BYTES,
      };
      break;
    case 'https':
      if (!e.EXECUTION_URL) throw new ConfigError('TRANSPORT=https needs EXECUTION_URL');
      input = {
        kind: 'https',
        url: e.EXECUTION_URL,
        auth: e.EXECUTION_AUTH,
        bearerToken: e.EXECUTION_BEARER_TOKEN,
        bearerSecretArn: e.EXECUTION_BEARER_SECRET_ARN,
        sigv4Service: e.EXECUTION_SIGV4_SERVICE,
        region: e.AWS_REGION,
        timeoutMs: e.EXECUTION_TIMEOUT_MS,
        maxAttempts: e.EXECUTION_MAX_ATTEMPTS,
        baseDelayMs: e.EXECUTION_RETRY_BASE_DELAY_MS,
        maxDelayMs: e.EXECUTION_RETRY_MAX_DELAY_MS,
        maxRetryAfterMs: e.EXECUTION_MAX_RETRY_AFTER_MS,
        maxResponseBytes: e.EXECUTION_MAX_RESPONSE_BYTES,
      };
      break;
    case 'in-process':
      input = { kind: 'in-process' };
      break;
  }
  return parseTransportConfig(input);
}

/** Validates a hand-written config (e.g. one agent of several) the same way as the environment. */
export function parseTransportConfig(input: TransportConfigInput): TransportConfig {
  const parsed = TransportConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? '');
      return `${ENV_NAME[field] ?? field}: ${issue.message}`;
    });
    throw new ConfigError(`invalid transport configuration: ${issues.join('; ')}`);
  }
  const config = parsed.data;
  if (config.kind === 'https' && config.auth === 'bearer' && !config.bearerToken && !config.bearerSecretArn) {
    throw new ConfigError('EXECUTION_AUTH=bearer needs EXECUTION_BEARER_TOKEN or EXECUTION_BEARER_SECRET_ARN');
  }
  return config;
}

export type TransportDeps = {
  /** The execution dispatcher's body handler; only `in-process` uses it, and it needs it. */
  inProcess?: BodyHandler;
  agentCoreClient?: BedrockAgentCoreClient;
  fetch?: typeof fetch;
  /** For SigV4 (https) and for the AgentCore client built here; default: the SDK's chain. */
  credentials?: SigV4Credentials;
  /** Overrides EXECUTION_BEARER_TOKEN / EXECUTION_BEARER_SECRET_ARN. */
  bearerTokenProvider?: BearerTokenProvider;
  sleep?: Sleep;
  log?: Pick<Log, 'warn'>;
};

export function createTransport(config: TransportConfig, deps: TransportDeps = {}): Transport {
  switch (config.kind) {
    case 'agentcore': {
      const client =
        deps.agentCoreClient ??
        new BedrockAgentCoreClient({
          // The runtime is called in its own region, whatever region the caller runs in.
          region: regionOfArn(config.runtimeArn) ?? config.region,
          maxAttempts: config.maxAttempts,
          ...(deps.credentials ? { credentials: deps.credentials } : {}),
        });
      return new AgentCoreTransport({
        client,
        runtimeArn: config.runtimeArn,
        qualifier: config.qualifier,
        timeoutMs: config.timeoutMs,
        maxResponseBytes: config.maxResponseBytes,
      });
    }
    case 'https':
      return new HttpsTransport({
        url: config.url,
        auth: httpsAuth(config, deps),
        fetch: deps.fetch,
        sleep: deps.sleep,
        log: deps.log,
        timeoutMs: config.timeoutMs,
        maxAttempts: config.maxAttempts,
        baseDelayMs: config.baseDelayMs,
        maxDelayMs: config.maxDelayMs,
        maxRetryAfterMs: config.maxRetryAfterMs,
        maxResponseBytes: config.maxResponseBytes,
      });
    case 'in-process':
      if (!deps.inProcess) {
        throw new ConfigError('TRANSPORT=in-process runs the execution zone in this process; it is available in local runs and tests only (nothing wired a dispatcher in here)');
      }
      return new InProcessTransport(deps.inProcess);
  }
}

/** The https auth the config names; unset is `none` for a loopback URL and `sigv4` otherwise. */
function httpsAuth(config: Extract<TransportConfig, { kind: 'https' }>, deps: TransportDeps): HttpsAuth | undefined {
  const sigv4: HttpsAuth = { kind: 'sigv4', credentials: deps.credentials, service: config.sigv4Service, defaultRegion: config.region };
  switch (config.auth) {
    case undefined:
      // An unparsable URL is left to the transport, which reports it as a config error.
      return URL.canParse(config.url) && isLoopbackUrl(new URL(config.url)) ? { kind: 'none' } : sigv4;
    case 'none':
      return { kind: 'none' };
    case 'sigv4':
      return sigv4;
    case 'bearer': {
      const token =
        deps.bearerTokenProvider ??
        (config.bearerToken ? staticBearerToken(config.bearerToken) : secretsManagerBearerToken(config.bearerSecretArn as string));
      return { kind: 'bearer', token };
    }
  }
}
