/**
 * Backoff for the transports that retry by themselves (the https transport; the agentcore
 * transport leaves retries to the AWS SDK's standard strategy).
 */
export type BackoffOptions = {
  /** The first retry waits up to this long; each further retry doubles the ceiling. */
  baseDelayMs: number;
  /** No single wait is longer than this. */
  maxDelayMs: number;
};

/**
 * Capped exponential backoff with full jitter: uniform in [0, min(max, base·2^(retry-1))].
 * Full jitter spreads the retries of many Lambdas that failed together, so they do not all
 * come back at the same instant and fail together again.
 */
export function backoffDelay(retry: number, options: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` in milliseconds from `now` (epoch ms): delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable, so the caller falls back to its own backoff.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // All three HTTP date formats start with a day name; Date.parse alone takes '-5' as a year.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
