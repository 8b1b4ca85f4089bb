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
/** Retries of a call Slack answered with a server error (250 ms, 500 ms, 1 s apart). */
const MAX_SERVER_ERROR_RETRIES = 3;
const SERVER_RETRY_BACKOFF_MS = 250;

/**
 * One Slack call within the caller's time. The client rejects rate-limited calls (it would wait
 * out any `Retry-After`, however long, deaf to the caller's signal); here a wait that ends before
 * the deadline is waited out, abortably, and a longer one ends the call as retryable, for SQS to
 * deliver again later. A server error Slack answered is tried again a few times, quickly; a call
 * with no answer (timeout, reset) is not, since it may have landed — unless `retry.afterNoAnswer`
 * says the call is safe to repeat (a status, an edit, a stop). The caller's signal also ends the
 * wait for Slack's answer, with the outcome unknown, and is never followed by a retry.
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
        // Slack answered that it failed (5xx, internal_error, …): try again soon, within the time
        // left. Never after no answer at all (a timeout, a reset): that post may have landed —
        // unless the call is safe to repeat, and the caller is still waiting.
        const backoffMs = SERVER_RETRY_BACKOFF_MS * 2 ** serverRetries;
        const answeredFailure = failure.retryable && failure.code !== 'request_error' && failure.code !== 'ratelimited';
        const unanswered = failure.code === 'request_error' && retry.afterNoAnswer === true && !options.signal?.aborted;
        if (!(answeredFailure || unanswered) || serverRetries >= MAX_SERVER_ERROR_RETRIES || !fitsBefore(options.deadline, backoffMs)) throw failure;
        serverRetries += 1;
        if (failure.outcome === 'unknown') mayHaveLanded = true;
        log?.warn(unanswered ? 'Slack did not answer a call that is safe to repeat; trying again' : 'Slack answered with a server error; trying again', { method, code: failure.code, attempt: serverRetries + 1 });
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

/** How a call may be repeated beyond what every call gets (429 waits, retries of answered server errors). */
export type CallRetry = {
  /** Safe to repeat after no answer (a timeout, a reset): it cannot take effect twice. */
  afterNoAnswer?: boolean;
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

