import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { regionOfArn } from './arn';

/**
 * Where the https transport's bearer token comes from. `forceRefresh` is asked for after a 401,
 * which is what a rotated secret looks like from the caller's side.
 */
export type BearerTokenProvider = (options?: { forceRefresh?: boolean }) => Promise<string>;

export function staticBearerToken(token: string): BearerTokenProvider {
  if (!token) throw new Error('the bearer token is empty');
  return async () => token;
}

/**
 * A token kept in Secrets Manager, read once and cached for the life of the process (a Lambda
 * container), and read again only when the endpoint refuses it. The secret is the token itself,
 * or a JSON object with a `token` field (how rotation templates usually store it).
 */
export function secretsManagerBearerToken(secretId: string, client?: SecretsManagerClient): BearerTokenProvider {
  let cached: Promise<string> | undefined;
  const read = async (): Promise<string> => {
    // Loaded lazily: deployments that use sigv4 or a static token never load this client.
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    // A secret in another region (or account) is read from the region its ARN names.
    const output = await (client ?? new SecretsManagerClient({ region: regionOfArn(secretId) })).send(new GetSecretValueCommand({ SecretId: secretId }));
    return tokenFromSecret(output.SecretString, secretId);
  };
  return (options) => {
    if (!cached || options?.forceRefresh) {
      const reading = read();
      // A failed read must not poison the cache: the next call tries again.
      reading.catch(() => {
        if (cached === reading) cached = undefined;
      });
      cached = reading;
    }
    return cached;
  };
}

export function tokenFromSecret(secretString: string | undefined, secretId: string): string {
  const text = secretString?.trim();
  if (!text) throw new Error(`secret ${secretId} has no string value`);
  if (text.startsWith('{')) {
    let parsed: { token?: unknown };
    try {
      parsed = JSON.parse(text) as { token?: unknown };
    } catch {
      // V8 quotes the input in JSON syntax errors; the input is a secret.
      throw new Error(`secret ${secretId} starts with "{" but is not valid JSON`);
    }
    if (typeof parsed.token !== 'string' || !parsed.token) throw new Error(`secret ${secretId} is JSON without a string "token" field`);
    return parsed.token;
  }
  return text;
}

