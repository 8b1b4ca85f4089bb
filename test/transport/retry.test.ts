import { backoffDelay, parseRetryAfter, sleep } from '../../src/transport/retry';

describe('backoffDelay', () => {
  const options = { baseDelayMs: 100, maxDelayMs: 1000 };

  it('doubles the ceiling per retry, up to the cap', () => {
    const ceiling = (retry: number) => backoffDelay(retry, options, () => 0.9999999);
    expect([1, 2, 3, 4, 5, 6].map(ceiling)).toEqual([99, 199, 399, 799, 999, 999]);
  });

  it('is full jitter: anywhere from 0 to the ceiling', () => {
    expect(backoffDelay(3, options, () => 0)).toBe(0);
    expect(backoffDelay(3, options, () => 0.5)).toBe(200);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');

  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
  });

  it('treats a date in the past as "now" and nonsense as absent', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('sleep', () => {
  it('stops waiting as soon as the signal aborts, with the signal\'s reason', async () => {
    const reason = new Error('caller gave up');
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 20);
    // An hour's wait: only the abort can end it within the test's bound.
    await expect(sleep(3_600_000, controller.signal)).rejects.toBe(reason);
    // A timeout signal's reason is its TimeoutError.
    await expect(sleep(3_600_000, AbortSignal.timeout(20))).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('does not start waiting on a signal that has already aborted', async () => {
    const reason = new Error('already out of time');
    await expect(sleep(3_600_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('resolves after the delay when nothing aborts it', async () => {
    const started = Date.now();
    await expect(sleep(30, new AbortController().signal)).resolves.toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});
