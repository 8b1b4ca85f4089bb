import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '@slack/web-api';
import { systemClock } from '../../clock';
import type { Log } from '../../observability/logger';
import { SlackApiError } from '../slack-api-error';
import type { SlackCallOptions } from '../slack-port';
import { toSlackApiError } from './slack-errors';

export type SlackRepliesLog = Pick<Log, 'info' | 'warn'>;

/** Waits for a 429's `Retry-After` at most this many times in one call; then SQS redelivers. */
const MAX_RATE_LIMIT_WAITS = 2;
/** Repeats of a call within one call (250 ms, 500 ms, 1 s apart). */
const MAX_SERVER_ERROR_RETRIES = 3;
const SERVER_RETRY_BACKOFF_MS = 250;

/**
 * One Slack call within the caller's time. The client rejects rate-limited calls (it would wait
 * out any `Retry-After`, however long, deaf to the caller's signal); here a wait that ends before
 * the deadline is waited out, abortably, and a longer one ends the call as retryable, for SQS to
 * deliver again later. A call that may have taken effect — an answer that Slack failed inside (a
 * 5xx, `internal_error`, …: the post may have landed before it did), or no answer at all (a
 * timeout, a reset) — is tried again, quickly, only when `retry` says it is safe to repeat (a
 * status, an edit, a stop; a read or a reaction after a server error); a post, a stream's start or
 * append is never sent blindly again: its caller looks for it (a chunk's metadata) or takes it as
 * dirty. The caller's signal also ends the wait for Slack's answer, with the outcome unknown, and
 * is never followed by a retry.
 */
export async function boundedCall<T>(method: string, call: () => Promise<T>, options: SlackCallOptions, log: SlackRepliesLog | undefined, retry: CallRetry = {}): Promise<T> {
  let rateLimitWaits = 0;
  let serverRetries = 0;
  /** An earlier attempt got no answer, or a 5xx: it may have taken effect. */
  let mayHaveLanded = false;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      return await abortable(call(), options.signal, method);
    } catch (error) {
      const retryAfterMs = rateLimitWaitMs(error);
      if (retryAfterMs === undefined) {
        const failure = toSlackApiError(error, method);
        if (mayHaveLanded && retry.ambiguousAfterRetry?.has(failure.code)) {
          throw new SlackApiError(`${failure.message} (an earlier attempt may have landed)`, failure.code, failure.retryable, { cause: failure, outcome: 'unknown' });
        }
        // Slack refused it for a passing reason (not a 429: those wait above): nothing happened,
        // so try again soon, within the time left. It may have happened (no answer, a 5xx):
        // again only if the call is safe to repeat, and the caller is still waiting.
        const backoffMs = SERVER_RETRY_BACKOFF_MS * 2 ** serverRetries;
        const refusedForNow = failure.retryable && failure.outcome === 'refused' && failure.code !== 'ratelimited';
        const safeToRepeat = failure.code === 'request_error' ? retry.afterNoAnswer : retry.afterNoAnswer || retry.afterServerError;
        const repeatable = failure.retryable && failure.outcome === 'unknown' && safeToRepeat === true && !options.signal?.aborted;
        if (!(refusedForNow || repeatable) || serverRetries >= MAX_SERVER_ERROR_RETRIES || !fitsBefore(options.deadline, backoffMs)) throw failure;
        serverRetries += 1;
        if (failure.outcome === 'unknown') mayHaveLanded = true;
        log?.warn(
          failure.code === 'request_error'
            ? 'Slack did not answer a call that is safe to repeat; trying again'
            : failure.outcome === 'unknown'
              ? 'Slack answered a call that is safe to repeat with a server error; trying again'
              : 'Slack refused a call for now; trying again',
          { method, code: failure.code, attempt: serverRetries + 1 },
        );
        await sleep(backoffMs, undefined, options.signal ? { signal: options.signal } : {});
        continue;
      }
      if (!fitsBefore(options.deadline, retryAfterMs) || rateLimitWaits >= MAX_RATE_LIMIT_WAITS) {
        throw new SlackApiError(`${method} failed: rate limited for ${Math.ceil(retryAfterMs / 1000)} s`, 'ratelimited', true, { cause: error });
      }
      rateLimitWaits += 1;
      log?.warn('Slack rate-limited a call; waiting for Retry-After before retrying', { method, retry_after_seconds: retryAfterMs / 1000 });
      await sleep(retryAfterMs, undefined, options.signal ? { signal: options.signal } : {});
    }
  }
}

/** How a call may be repeated beyond what every call gets (429 waits, retries of passing refusals). */
export type CallRetry = {
  /**
   * Safe to repeat when it may have taken effect — after no answer (a timeout, a reset) or a server
   * error answer (a 5xx, `internal_error`, …): it cannot take effect twice (a status, an edit, a
   * stop). Without it (or `afterServerError`) such a call is never repeated here.
   */
  afterNoAnswer?: boolean;
  /**
   * Safe to repeat after a server error answer, but not worth a second wait after no answer (a
   * read, a reaction: Slack answered, the caller has its time left for the rest).
   */
  afterServerError?: boolean;
  /** Codes that, answered to a repeat of an attempt that may have landed, leave the outcome unknown. */
  ambiguousAfterRetry?: ReadonlySet<string>;
};

function fitsBefore(deadline: number | undefined, waitMs: number): boolean {
  return deadline === undefined || systemClock.now() + waitMs < deadline;
}

function rateLimitWaitMs(error: unknown): number | undefined {
  const sdk = error as { code?: unknown; retryAfter?: unknown } | undefined;
  if (sdk?.code !== ErrorCode.RateLimitedError) return undefined;
  return Math.max(0, Number(sdk.retryAfter) || 0) * 1000;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, method: string): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new SlackApiError(`${method}: no answer before the caller ran out of time`, 'request_error', true, { outcome: 'unknown', cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

