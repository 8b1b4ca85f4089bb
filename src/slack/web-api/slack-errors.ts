import { ErrorCode } from '@slack/web-api';
import { redactString } from '../../observability/logger';
import { SlackApiError } from '../slack-api-error';

/** Slack errors that describe a passing state of Slack, not of the request. */
const TRANSIENT_PLATFORM_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);
/**
 * Slack's answers that say it failed somewhere inside, not that it refused: like a 5xx, the call
 * may have taken effect before Slack gave up on it (a post that landed, a stream that grew), so
 * its outcome is unknown — never a refusal that makes a repeat safe.
 */
const MAY_HAVE_LANDED_PLATFORM_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** Turns whatever `@slack/web-api` threw into a SlackApiError (the SDK's own messages carry no token). */
export function toSlackApiError(error: unknown, method: string): SlackApiError {
  if (error instanceof SlackApiError) return error;
  const sdk = error as { code?: unknown; data?: { error?: unknown }; statusCode?: unknown; original?: unknown } | undefined;
  switch (sdk?.code) {
    case ErrorCode.PlatformError: {
      const code = typeof sdk.data?.error === 'string' ? sdk.data.error : 'unknown_error';
      return new SlackApiError(`${method} failed: ${code}`, code, TRANSIENT_PLATFORM_ERRORS.has(code), { cause: error, outcome: MAY_HAVE_LANDED_PLATFORM_ERRORS.has(code) ? 'unknown' : 'refused' });
    }
    case ErrorCode.HTTPError: {
      const status = Number(sdk.statusCode);
      return new SlackApiError(`${method} failed with HTTP ${status}`, `http_${status}`, status >= 500 || status === 408 || status === 429, { cause: error, outcome: status >= 500 || status === 408 ? 'unknown' : 'refused' });
    }
    case ErrorCode.RequestError:
      // WebClient.makeRequest wraps its own "A rate limit was exceeded …" (a 429 that outlasted the retries) in this.
      if (isRateLimitMessage(sdk.original)) return new SlackApiError(`${method} failed: rate limited`, 'ratelimited', true, { cause: error });
      return new SlackApiError(`${method} failed: the request did not complete`, 'request_error', true, { cause: error, outcome: 'unknown' });
    case ErrorCode.RateLimitedError:
      return new SlackApiError(`${method} failed: rate limited`, 'ratelimited', true, { cause: error });
  }
  // A 429 whose Retry-After is unreadable surfaces as a plain Error ("Retry header did not contain …").
  if (isRateLimitMessage(error)) {
    return new SlackApiError(`${method} failed: rate limited`, 'ratelimited', true, { cause: error });
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new SlackApiError(`${method} failed: ${redactString(detail)}`, 'unknown_error', false, { cause: error });
}

function isRateLimitMessage(error: unknown): boolean {
  return error instanceof Error && /rate limit was exceeded|Retry header did not contain/i.test(error.message);
}

/** Slack errors that refuse the token itself; after a rotation, what the old token gets. */
export const TOKEN_REFUSED_ERRORS: ReadonlySet<string> = new Set(['invalid_auth', 'token_revoked', 'token_expired', 'not_authed', 'account_inactive']);

