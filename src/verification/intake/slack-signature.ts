import { createHmac, timingSafeEqual } from 'node:crypto';
import { systemClock } from '../../clock';

/**
 * Slack request signing (v0): `v0=` + hex(HMAC-SHA256(secret, `v0:<timestamp>:<raw body>`)),
 * compared in constant time, with timestamps older or newer than five minutes refused.
 */
export const SIGNATURE_MAX_AGE_SECONDS = 300;

export type SignatureCheck = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

export function computeSlackSignature(secret: string, timestamp: string, rawBody: Buffer | string): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(rawBody);
  return `v0=${hmac.digest('hex')}`;
}

export function verifySlackSignature(input: {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  rawBody: Buffer | string;
  /** The verifier's time, epoch seconds. */
  nowSeconds: number;
}): SignatureCheck {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(timestamp) || !/^v0=[0-9a-f]{64}$/.test(signature)) return { ok: false, reason: 'malformed' };
  if (Math.abs(input.nowSeconds - Number(timestamp)) > SIGNATURE_MAX_AGE_SECONDS) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(computeSlackSignature(input.secret, timestamp, input.rawBody));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given) ? { ok: true } : { ok: false, reason: 'mismatch' };
}

/** Headers for a request signed as Slack would sign it (local CLI, playground, tests). */
export function slackSignatureHeaders(secret: string, rawBody: string, nowSeconds = Math.floor(systemClock.now() / 1000)): Record<string, string> {
  const timestamp = String(nowSeconds);
  return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': computeSlackSignature(secret, timestamp, rawBody) };
}
