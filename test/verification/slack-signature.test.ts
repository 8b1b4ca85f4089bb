import { computeSlackSignature, slackSignatureHeaders, verifySlackSignature } from '../../src/verification/intake/slack-signature';

// Slack's published test vector (docs/architecture.md §10.1).
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const TIMESTAMP = '1531420618';
const BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const EXPECTED = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

describe('Slack request signatures', () => {
  const check = (overrides: Partial<Parameters<typeof verifySlackSignature>[0]>) =>
    verifySlackSignature({ secret: SECRET, timestamp: TIMESTAMP, signature: EXPECTED, rawBody: BODY, nowSeconds: Number(TIMESTAMP) + 10, ...overrides });

  it('computes Slack\'s published test vector', () => {
    expect(computeSlackSignature(SECRET, TIMESTAMP, BODY)).toBe(EXPECTED);
    expect(computeSlackSignature(SECRET, TIMESTAMP, Buffer.from(BODY))).toBe(EXPECTED);
  });

  it('accepts the vector within five minutes, either side', () => {
    expect(check({})).toEqual({ ok: true });
    expect(check({ nowSeconds: Number(TIMESTAMP) - 300 })).toEqual({ ok: true });
    expect(check({ nowSeconds: Number(TIMESTAMP) + 300 })).toEqual({ ok: true });
  });

  it('refuses stale, missing, malformed and wrong signatures', () => {
    expect(check({ nowSeconds: Number(TIMESTAMP) + 301 })).toEqual({ ok: false, reason: 'stale' });
    expect(check({ signature: undefined })).toEqual({ ok: false, reason: 'missing' });
    expect(check({ timestamp: undefined })).toEqual({ ok: false, reason: 'missing' });
    expect(check({ signature: 'v1=abc' })).toEqual({ ok: false, reason: 'malformed' });
    expect(check({ timestamp: '12ab' })).toEqual({ ok: false, reason: 'malformed' });
    expect(check({ rawBody: `${BODY}&x=1` })).toEqual({ ok: false, reason: 'mismatch' });
    expect(check({ secret: 'another-secret' })).toEqual({ ok: false, reason: 'mismatch' });
    expect(check({ signature: EXPECTED.replace(/.$/, '0') })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('signs requests the way it verifies them', () => {
    const headers = slackSignatureHeaders('s3cret', '{"a":1}', 1_700_000_000);
    expect(verifySlackSignature({ secret: 's3cret', timestamp: headers['x-slack-request-timestamp'], signature: headers['x-slack-signature'], rawBody: '{"a":1}', nowSeconds: 1_700_000_001 })).toEqual({ ok: true });
  });
});
