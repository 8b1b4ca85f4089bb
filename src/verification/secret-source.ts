/**
 * A secret that may rotate: read once, cached, and re-read on demand (e.g. when a Slack signature
 * fails to verify with the cached signing secret, which is what a rotation looks like).
 */
export interface SecretSource {
  get(): Promise<string>;
  /** Drops the cached value and reads it again. */
  refresh(): Promise<string>;
}

export function staticSecret(value: string): SecretSource {
  return { get: async () => value, refresh: async () => value };
}

/** A Secrets Manager secret through Powertools Parameters (cached for `maxAgeSeconds`). */
export function secretsManagerSecret(secretId: string, maxAgeSeconds = 300): SecretSource {
  // Loaded lazily so functions that are given the value directly never pull in the SDK client.
  const read = async (forceFetch: boolean) => {
    const { getSecret } = await import('@aws-lambda-powertools/parameters/secrets');
    const value = await getSecret(secretId, { maxAge: maxAgeSeconds, forceFetch });
    if (typeof value !== 'string' || !value) throw new Error(`secret ${secretId} has no string value`);
    return value;
  };
  return { get: () => read(false), refresh: () => read(true) };
}

/** The value from the environment if set, else the secret named by the ARN variable. */
export function secretFromEnv(value: string | undefined, arn: string | undefined, what: string): SecretSource {
  if (value) return staticSecret(value);
  if (arn) return secretsManagerSecret(arn);
  throw new Error(`${what} is not configured: set it directly or give the ARN of a Secrets Manager secret`);
}
