import type { GetSecretValueCommandOutput } from '@aws-sdk/client-secrets-manager';
import { regionOfArn } from '../aws/arn';
import { AwsJsonClient, SECRETS_MANAGER } from '../aws/aws-json-client';
import { systemClock, type Clock } from '../clock';

/**
 * A secret that may rotate (the Slack signing secret, the bot token, the execution zone's bearer
 * token): read once, cached, and read again when its holder sees the cached value refused — a
 * signature that does not verify, a Slack `invalid_auth`, an HTTP 401 — which is what a rotation
 * looks like from the side that uses it.
 */
export interface SecretSource {
  /** The cached value, read first if there is none yet (or it is older than the source's max age). */
  get(): Promise<string>;
  /** Reads the value again and caches it; what `get` returns from then on. */
  refresh(): Promise<string>;
}

/** A value given directly (environment, tests): never changes, and calls nothing. */
export function staticSecret(value: string): SecretSource {
  if (!value) throw new Error('a secret given directly must not be empty');
  const read = async () => value;
  return { get: read, refresh: read };
}

export type SecretsManagerSecretOptions = {
  /** A cached value older than this is read again on the next `get`. @default 300 */
  maxAgeSeconds?: number;
  /**
   * When the secret is a JSON object, its value is this field (e.g. `token`, how rotation
   * templates store a bearer token); a secret that is not JSON is the value itself. Unset: the
   * secret string is the value, whatever it looks like.
   */
  jsonField?: string;
  /** The clock the max age is measured on; injected by tests. @default systemClock */
  clock?: Clock;
};

const DEFAULT_SECRET_MAX_AGE_SECONDS = 300;

/**
 * A Secrets Manager secret, read with GetSecretValue in the region its ARN names (a secret in
 * another region or account is read where it lives; a bare name is read in the caller's region).
 *
 * Concurrent reads share one request. A failed read is never cached: the call that made it fails,
 * and the next `get` reads again. Error messages name the secret, never its value.
 */
export function secretsManagerSecret(secretId: string, options: SecretsManagerSecretOptions = {}): SecretSource {
  const maxAgeMs = (options.maxAgeSeconds ?? DEFAULT_SECRET_MAX_AGE_SECONDS) * 1000;
  const clock = options.clock ?? systemClock;
  let client: AwsJsonClient | undefined;
  let cached: Promise<string> | undefined;
  /** When the cached value goes stale; Infinity while it is being read. */
  let staleAt = Infinity;

  const read = async (): Promise<string> => {
    const region = regionOfArn(secretId);
    client ??= new AwsJsonClient({ service: SECRETS_MANAGER, ...(region ? { region } : {}) });
    let secretString: string | undefined;
    try {
      ({ SecretString: secretString } = await client.call<GetSecretValueCommandOutput>('GetSecretValue', { SecretId: secretId }));
    } catch (error) {
      // AWS's errors say what went wrong (access denied, not found, throttled), never the value.
      const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new Error(`could not read secret ${secretId}: ${detail}`, { cause: error });
    }
    return valueOfSecret(secretString, secretId, options.jsonField);
  };

  const load = (): Promise<string> => {
    const reading: Promise<string> = read().then((value) => {
      if (cached === reading) staleAt = clock.now() + maxAgeMs;
      return value;
    });
    // A failed read must not poison the cache: the next call tries again.
    reading.catch(() => {
      if (cached === reading) cached = undefined;
    });
    cached = reading;
    staleAt = Infinity;
    return reading;
  };

  return {
    get: () => (cached && clock.now() < staleAt ? cached : load()),
    refresh: load,
  };
}

/** The value from the environment if set, else the secret named by the ARN variable. */
export function secretFromEnv(value: string | undefined, arn: string | undefined, what: string): SecretSource {
  if (value) return staticSecret(value);
  if (arn) return secretsManagerSecret(arn);
  throw new Error(`${what} is not configured: set it directly or give the ARN of a Secrets Manager secret`);
}

/** The secret's value: the string itself, or with `jsonField` that field of a JSON object. */
export function valueOfSecret(secretString: string | undefined, secretId: string, jsonField?: string): string {
  const text = secretString?.trim();
  if (!text) throw new Error(`secret ${secretId} has no string value`);
  if (!jsonField || !text.startsWith('{')) return text;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // V8 quotes the input in JSON syntax errors; the input is a secret.
    throw new Error(`secret ${secretId} starts with "{" but is not valid JSON`);
  }
  const field = parsed[jsonField];
  if (typeof field !== 'string' || !field) throw new Error(`secret ${secretId} is JSON without a string "${jsonField}" field`);
  return field;
}
