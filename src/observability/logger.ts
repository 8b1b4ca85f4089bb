import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One structured JSON logger for every function and host (Powertools Logger), with secrets
 * redacted on the way out: a key that names a credential loses its value, and a Slack token or
 * bearer credential inside any string is masked, so nothing that slips into a log line leaks.
 */

const SECRET_KEY = /(^|[_-])(token|secret|signing_secret|authorization|password|signature|api_key|apikey|cookie)$/i;
const SLACK_TOKEN = /xox[a-z]-[A-Za-z0-9-]+/g;
const BEARER = /(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
const SIGV4_SIGNATURE = /(Signature=)[0-9a-f]{16,}/gi;
export const REDACTED = '[REDACTED]';

export function redactString(value: string): string {
  return value
    .replace(SLACK_TOKEN, (token) => `${token.slice(0, 5)}${REDACTED}`)
    .replace(BEARER, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(SIGV4_SIGNATURE, `$1${REDACTED}`);
}

/** A JSON.stringify replacer; exported so tests and other writers share the exact same rule. */
export function redactingReplacer(key: string, value: unknown): unknown {
  if (key && SECRET_KEY.test(key) && value !== undefined && value !== null && value !== '') return REDACTED;
  if (typeof value === 'string') return redactString(value);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) {
    return { name: value.name, message: redactString(value.message), ...(value.stack ? { stack: redactString(value.stack) } : {}) };
  }
  return value;
}

export type Log = Pick<Logger, 'debug' | 'info' | 'warn' | 'error' | 'appendKeys' | 'createChild'>;

export function createLogger(serviceName: string): Logger {
  return new Logger({ serviceName, jsonReplacerFn: redactingReplacer });
}

/** Keys every log line about one task carries (ARCHITECTURE §6, issue 4). */
export type TaskLogKeys = {
  correlation_id?: string;
  request_id?: string;
  task_id?: string;
  event_id?: string;
};

/** A child logger that stamps the task's ids on every line it writes. */
export function taskLogger(parent: Logger, keys: TaskLogKeys): Logger {
  const child = parent.createChild();
  const defined = Object.fromEntries(Object.entries(keys).filter(([, v]) => v !== undefined));
  child.appendPersistentKeys(defined);
  return child;
}
