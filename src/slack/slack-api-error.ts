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
   * connection, the caller's abort) or an answer that Slack failed inside (a 5xx, `internal_error`,
   * `fatal_error`, `service_unavailable`, `request_timeout`) — the call may have taken effect.
   */
  readonly outcome: 'refused' | 'unknown';
}

/**
 * Slack's refusals of a live reply (a status, a stream) that mean "not here, not now": fall back
 * to a plain post (or to `chat.update`) rather than try again. `message_not_in_streaming_state`:
 * the stream was stopped or expired; `missing_recipient_*`: a stream outside a DM without the
 * recipient; `user_not_found`: a Slack Connect recipient (seen on `chat.stopStream`);
 * `msg_too_long`: more markdown than one call takes. Not retryable (Slack answered; the same call
 * gets the same answer).
 */
export const STREAM_REFUSED_ERRORS: ReadonlySet<string> = new Set([
  'message_not_in_streaming_state',
  'missing_recipient_team_id',
  'missing_recipient_user_id',
  'user_not_found',
  'msg_too_long',
]);

/**
 * Whether a live-reply call failed because Slack will not do it here: any refusal that is not a
 * passing state (rate limit, server error, no answer). For `assistant.threads.setStatus` every
 * such refusal (`not_allowed_token_type`, `invalid_thread_ts`, `channel_not_found`, …) means
 * "not an assistant thread"; for streams see STREAM_REFUSED_ERRORS.
 */
export function isLiveReplyRefusal(error: unknown): error is SlackApiError {
  return error instanceof SlackApiError && !error.retryable && (error.outcome === 'refused' || STREAM_REFUSED_ERRORS.has(error.code));
}
