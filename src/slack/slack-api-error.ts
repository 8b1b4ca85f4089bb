/*
 * Its own file, free of @slack/web-api: the functions that only classify Slack failures (the
 * poster, and through the one wiring module the ack path) must not bundle the Web API client.
 */

/** A Slack Web API call that failed; `code` is Slack's error string (or a transport-level code). */
export class SlackApiError extends Error {
  override name = 'SlackApiError';
  constructor(
    message: string,
    /** Slack's `error` (e.g. `channel_not_found`), `ratelimited`, `http_<status>` or `request_error`. */
    readonly code: string,
    /** True when the same call may succeed later: rate limits, Slack 5xx, network faults. */
    readonly retryable: boolean,
    options?: { cause?: unknown; outcome?: 'refused' | 'unknown' },
  ) {
    super(message, options);
    this.outcome = options?.outcome ?? 'refused';
  }

  /**
   * `refused`: Slack answered and did not do it. `unknown`: no answer (a timeout, a dropped
   * connection, a 5xx, the caller's abort) — the call may have taken effect.
   */
  readonly outcome: 'refused' | 'unknown';
}
