import { secretFromEnv, secretsManagerSecret, staticSecret, valueOfSecret } from '../../src/secrets/secret-source';
import { startFakeSecretsManager, type FakeSecretsManager } from '../support/fake-secrets-manager';
import { manualClock } from '../support/manual-clock';

/**
 * The one source of rotating secrets (signing secret, bot token, bearer token), with the real
 * Secrets Manager client talking to a loopback fake of GetSecretValue.
 */
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:slack-bot-token-AbCdEf';

describe('secretsManagerSecret', () => {
  let sm: FakeSecretsManager;
  beforeAll(async () => {
    sm = await startFakeSecretsManager();
  });
  afterAll(() => sm.close());
  beforeEach(() => {
    sm.requests.length = 0;
    sm.setSecret(ARN, 'value-1');
  });

  it('reads the secret once, in the region its ARN names, and serves it from the cache', async () => {
    const secret = secretsManagerSecret(ARN);

    const concurrent = await Promise.all([secret.get(), secret.get()]);
    const later = await secret.get();

    expect([...concurrent, later]).toEqual(['value-1', 'value-1', 'value-1']);
    // AWS_REGION is us-east-1 in tests: the secret is read where it lives, not where the caller runs.
    expect(sm.requests).toEqual([{ secretId: ARN, region: 'eu-west-1' }]);
  });

  it('reads a secret given by name in the caller’s region', async () => {
    sm.setSecret('plain-name', 'by-name');
    await expect(secretsManagerSecret('plain-name').get()).resolves.toBe('by-name');
    expect(sm.requests).toEqual([{ secretId: 'plain-name', region: process.env.AWS_REGION }]);
  });

  it('refresh reads again, and what it read is what get returns from then on (rotation)', async () => {
    const secret = secretsManagerSecret(ARN);
    expect(await secret.get()).toBe('value-1');

    sm.setSecret(ARN, 'value-2');
    expect(await secret.get()).toBe('value-1');
    expect(await secret.refresh()).toBe('value-2');
    expect(await secret.get()).toBe('value-2');

    expect(sm.requests).toHaveLength(2);
  });

  it('reads again on the first get after the max age, not before', async () => {
    const clock = manualClock(1_000_000);
    const secret = secretsManagerSecret(ARN, { maxAgeSeconds: 60, clock });
    expect(await secret.get()).toBe('value-1');
    sm.setSecret(ARN, 'value-2');

    clock.advance(59_999);
    const beforeMaxAge = await secret.get();
    clock.advance(1);
    const atMaxAge = await secret.get();
    clock.advance(59_999);
    const withinTheNewAge = await secret.get();

    expect([beforeMaxAge, atMaxAge, withinTheNewAge]).toEqual(['value-1', 'value-2', 'value-2']);
    expect(sm.requests).toHaveLength(2);
  });

  it('never caches a failed read: the next get reads again', async () => {
    const secret = secretsManagerSecret(ARN);
    sm.failNext({ type: 'AccessDeniedException', message: 'not allowed' });

    const failure = await secret.get().catch((error: Error) => error);
    const recovered = await secret.get();

    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe(`could not read secret ${ARN}: AccessDeniedException: not allowed`);
    expect(recovered).toBe('value-1');
    expect(sm.requests).toHaveLength(2);
  });

  it('a failed refresh leaves nothing cached either', async () => {
    const secret = secretsManagerSecret(ARN);
    await secret.get();
    sm.failNext({ type: 'ResourceNotFoundException' });

    await expect(secret.refresh()).rejects.toThrow(/ResourceNotFoundException/);
    sm.setSecret(ARN, 'value-2');
    await expect(secret.get()).resolves.toBe('value-2');
    expect(sm.requests).toHaveLength(3);
  });

  it('with jsonField, takes that field of a JSON secret, and a plain secret as it is', async () => {
    sm.setSecret(ARN, '{"token":"from-json","rotated_at":"2026-01-01"}');
    await expect(secretsManagerSecret(ARN, { jsonField: 'token' }).get()).resolves.toBe('from-json');
    // Without jsonField a JSON secret is the value itself (the signing secret is never JSON).
    await expect(secretsManagerSecret(ARN).get()).resolves.toBe('{"token":"from-json","rotated_at":"2026-01-01"}');

    sm.setSecret(ARN, ' plain-token \n');
    await expect(secretsManagerSecret(ARN, { jsonField: 'token' }).get()).resolves.toBe('plain-token');
  });

  it.each([
    ['JSON without the field', '{"password":"hunter2-leak"}', /is JSON without a string "token" field/],
    ['broken JSON', '{"token": hunter2-leak', /starts with "\{" but is not valid JSON/],
    ['only blanks', '  \n ', /has no string value/],
  ])('names the secret, never its value, when it holds %s', async (_label, value, expected) => {
    sm.setSecret(ARN, value);
    const error = await secretsManagerSecret(ARN, { jsonField: 'token' })
      .get()
      .catch((e: Error) => e);
    expect((error as Error).message).toMatch(expected);
    expect((error as Error).message).toContain(ARN);
    expect(JSON.stringify({ message: (error as Error).message, stack: (error as Error).stack })).not.toContain('hunter2');
  });
});

describe('staticSecret and secretFromEnv', () => {
  it('a value given directly is returned by get and refresh, and must not be empty', async () => {
    const secret = staticSecret('given');
    await expect(Promise.all([secret.get(), secret.refresh()])).resolves.toEqual(['given', 'given']);
    expect(() => staticSecret('')).toThrow('must not be empty');
  });

  it('secretFromEnv prefers the value, then the ARN, and says what is missing', async () => {
    await expect(secretFromEnv('direct', ARN, 'the bot token').get()).resolves.toBe('direct');
    expect(() => secretFromEnv(undefined, undefined, 'the Slack bot token')).toThrow(/^the Slack bot token is not configured/);
    expect(() => secretFromEnv('', '', 'the Slack bot token')).toThrow(/not configured/);
  });

  it('calls Secrets Manager only when a secret named by ARN is first read', async () => {
    const sm = await startFakeSecretsManager();
    try {
      sm.setSecret(ARN, 'from-secrets-manager');
      await secretFromEnv('direct', ARN, 'x').get();
      const fromArn = secretFromEnv(undefined, ARN, 'x');
      expect(sm.requests).toHaveLength(0);
      await expect(fromArn.get()).resolves.toBe('from-secrets-manager');
      expect(sm.requests).toHaveLength(1);
    } finally {
      await sm.close();
    }
  });
});

describe('valueOfSecret', () => {
  it('extracts the field only when asked to, and trims the value', () => {
    expect(valueOfSecret(' plain \n', 's')).toBe('plain');
    expect(valueOfSecret('{"token":"t"}', 's')).toBe('{"token":"t"}');
    expect(valueOfSecret('{"token":"t"}', 's', 'token')).toBe('t');
    expect(() => valueOfSecret(undefined, 's', 'token')).toThrow('secret s has no string value');
  });
});
