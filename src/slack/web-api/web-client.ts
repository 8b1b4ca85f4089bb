import { LogLevel, WebClient, type Logger as SlackSdkLogger, type RetryOptions } from '@slack/web-api';
import { ConfigError } from '../../config/env';
import { redactString, type Log } from '../../observability/logger';
import { isLoopbackUrl } from '../../net/loopback';

export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

export type SlackWebClientOptions = {
  token: string;
  /** SLACK_API_URL: Slack's, or a local fake's. Method names are appended to it. */
  apiUrl?: string;
  /**
   * Retries of Slack 5xx and network faults within one call. @default 0: a post whose answer was
   * lost (a timeout, a reset) or was a 5xx may have landed, and the client would post it again at once; the
   * chunk's claim and SQS redelivery decide instead (docs/architecture.md §6). 429s are never
   * retried here: `boundedCall` waits them out when the wait fits.
   */
  retries?: number;
  /** Per-attempt HTTP timeout. @default 10000 */
  timeoutMs?: number;
  /** Where the SDK's own warnings and errors go; without it they are dropped. */
  log?: Pick<Log, 'warn' | 'error'>;
};

/**
 * A WebClient set up for a Lambda function. Verified against @slack/web-api 8.2.0
 * (`WebClient.makeRequest`): with `rejectRateLimitedCalls: false` (its default) a 429 pauses the
 * client for the whole `Retry-After`, however long and whatever time the Lambda has left — so here
 * a 429 is rejected and `boundedCall` decides whether the wait fits. `ok:false` answers are not
 * retried; non-200 answers and network faults are only if `retries` says so (by default not: a
 * retried post that had landed is a duplicate). The SDK's default policy (10 retries over about
 * 30 minutes) would outlive any Lambda; SQS redelivery covers outages.
 */
export function createSlackWebClient(options: SlackWebClientOptions): WebClient {
  const apiUrl = slackApiUrl(options.apiUrl ?? DEFAULT_SLACK_API_URL);
  const client = new WebClient(options.token, {
    slackApiUrl: apiUrl,
    logger: sdkLogger(options.log),
    retryConfig: lambdaRetryPolicy(options.retries ?? 0),
    timeout: options.timeoutMs ?? 10_000,
    // A 429 comes back to us (boundedCall): the client's own wait knows no deadline.
    rejectRateLimitedCalls: true,
    // The token goes with every call; never to a URL other than the configured API.
    allowAbsoluteUrls: false,
  });
  return client;
}

export function lambdaRetryPolicy(retries: number): RetryOptions {
  return { retries, factor: 2, minTimeout: 250, maxTimeout: 2_000, randomize: true };
}

/**
 * Refuses plain http:// except to loopback (the bot token travels with every call), and ends the
 * URL with '/' because the SDK appends method names to it.
 */
export function slackApiUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SLACK_API_URL is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    throw new ConfigError('SLACK_API_URL must use https:// (plain http:// is allowed only to a loopback host)');
  }
  if (url.search || url.hash) throw new ConfigError('SLACK_API_URL must not have a query or fragment');
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

/**
 * The SDK's logger interface over ours, at WARN: its debug and info lines (request bodies, "http
 * request url …") are dropped, and what is left goes through our redacting logger.
 */
function sdkLogger(log: Pick<Log, 'warn' | 'error'> | undefined): SlackSdkLogger {
  const text = (parts: unknown[]) => redactString(parts.map((part) => (typeof part === 'string' ? part : safeJson(part))).join(' '));
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...parts: unknown[]) => log?.warn(`@slack/web-api: ${text(parts)}`),
    error: (...parts: unknown[]) => log?.error(`@slack/web-api: ${text(parts)}`),
    setLevel: () => undefined,
    getLevel: () => LogLevel.WARN,
    setName: () => undefined,
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
