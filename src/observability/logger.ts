import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import type { LogItemExtraInput, LogItemMessage } from '@aws-lambda-powertools/logger/types';

/**
 * One structured JSON logger for every function and host (Powertools Logger), with secrets
 * redacted on the way out: a key that names a credential loses its value, and a Slack token,
 * bearer credential or signed-URL credential inside any string is masked, so nothing that slips
 * into a log line leaks.
 */

/** snake_case, kebab-case or whole keys: `bot_token`, `SLACK_SIGNING_SECRET`, `X-Slack-Signature`, `x-api-key`, `aws_secret_access_key`. */
const SECRET_KEY = /(?:^|[_.-])(?:token|secret|password|passwd|passphrase|signature|authorization|cookie|credentials?|api[_-]?key|access[_-]key|private[_-]key)$|^secret(?:string|binary)$/i;
/** camelCase and PascalCase keys: `botToken`, `signingSecret`, `sessionToken`, `secretAccessKey`, `xApiKey`. Case-sensitive, so `maxTokens` and `tokenCount` stay. */
const SECRET_CAMEL_KEY = /[A-Za-z0-9](?:Token|Secret|Password|Passwd|Passphrase|Signature|Authorization|Cookie|Credentials?|ApiKey|APIKey|AccessKey|PrivateKey)$/;
/** Pagination cursors that merely end in "token". */
const NOT_SECRET_KEY = /^(?:next|continuation|pagination|page)[_-]?token$/i;
/** Slack tokens: bot, user, app-level (`xapp-`), refresh and rotating (`xoxe-`, `xoxe.xoxp-`), configuration, workflow. */
const SLACK_TOKEN = /(?:xox[a-z]|xapp|xwf[a-z])-[A-Za-z0-9%+/=-]+/g;
const BEARER = /(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
const SIGV4_SIGNATURE = /(Signature=)[0-9a-f]{16,}/gi;
/** A presigned URL's or a header dump's temporary credentials and signature, URL-encoded or not. */
const AMZ_CREDENTIAL = /(X-Amz-(?:Security-Token|Credential|Signature)["']?\s*[:=]\s*["']?)[^\s&#"',;]+/gi;
/** Any URL query parameter whose name is a secret key by the rules above (`?token=…`, `&access_token=…`). */
const QUERY_PARAM = /([?&])([^=&#\s?]+)=([^&#\s"'<>]+)/g;

/** Cheap first look: a string none of the rules below could touch is returned as it is. */
const MAY_HOLD_SECRET = /=|xox[a-z]|xapp|xwf[a-z]|bearer|basic|x-amz-/i;
export const REDACTED = '[REDACTED]';

/** Keys repeat on every line (the same few dozen field names), so each is judged once. */
const keyVerdicts = new Map<string, boolean>();
const MAX_KEY_VERDICTS = 2_000;

/** True for a key (object key, header or query parameter name) whose value is a credential. */
export function isSecretKey(key: string): boolean {
  let secret = keyVerdicts.get(key);
  if (secret === undefined) {
    secret = (SECRET_KEY.test(key) || SECRET_CAMEL_KEY.test(key)) && !NOT_SECRET_KEY.test(key);
    if (keyVerdicts.size < MAX_KEY_VERDICTS) keyVerdicts.set(key, secret);
  }
  return secret;
}

export function redactString(value: string): string {
  if (!MAY_HOLD_SECRET.test(value)) return value;
  return value
    .replace(SLACK_TOKEN, (token) => `${token.slice(0, 5)}${REDACTED}`)
    .replace(BEARER, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(SIGV4_SIGNATURE, `$1${REDACTED}`)
    .replace(AMZ_CREDENTIAL, `$1${REDACTED}`)
    .replace(QUERY_PARAM, (match, separator: string, name: string) => (isSecretKey(name) ? `${separator}${name}=${REDACTED}` : match));
}

/** A JSON.stringify replacer; exported so tests and other writers share the exact same rule. */
export function redactingReplacer(key: string, value: unknown): unknown {
  if (key && value !== undefined && value !== null && value !== '' && isSecretKey(key)) return REDACTED;
  if (typeof value === 'string') return redactString(value);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) {
    return { name: value.name, message: redactString(value.message), ...(value.stack ? { stack: redactString(value.stack) } : {}) };
  }
  return value;
}

/**
 * The keys Powertools Logger writes itself (its `ReservedKeys`): an extra under one of these names
 * is dropped, so a failure's text logged as `message` never reached the log. Failure text goes
 * under `error_message`; the type below refuses these keys at compile time, and the logger from
 * createLogger keeps a value that gets through anyway under `extra_<key>`.
 */
export const RESERVED_LOG_KEYS = ['level', 'message', 'sampling_rate', 'service', 'timestamp'] as const;
export type ReservedLogKey = (typeof RESERVED_LOG_KEYS)[number];

/** What code needs of a logger; Powertools' Logger is one, and so is a task logger. */
export type LogExtra = Record<string, unknown> & { readonly [key in ReservedLogKey]?: never };
export interface Log {
  debug(message: string, ...extra: LogExtra[]): void;
  info(message: string, ...extra: LogExtra[]): void;
  warn(message: string, ...extra: LogExtra[]): void;
  error(message: string, ...extra: LogExtra[]): void;
}

export function createLogger(serviceName: string): Logger {
  return new ProjectLogger({ serviceName, jsonReplacerFn: redactingReplacer });
}

const isAttributes = (item: unknown): item is Record<string, unknown> => typeof item === 'object' && item !== null && !(item instanceof Error);
const hasReservedKey = (attributes: Record<string, unknown>) => RESERVED_LOG_KEYS.some((key) => key in attributes);

/** Renames reserved keys in the extras (rare) rather than letting Powertools drop their values. */
function keepReserved(extra: LogItemExtraInput): LogItemExtraInput {
  // On every line written: five `in` checks per extra object, no allocation unless one hits.
  if (!extra.some((item) => isAttributes(item) && hasReservedKey(item))) return extra;
  return extra.map((item) => (isAttributes(item) ? renameReserved(item) : item)) as LogItemExtraInput;
}

function renameReserved(attributes: Record<string, unknown>): Record<string, unknown> {
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attributes)) renamed[(RESERVED_LOG_KEYS as readonly string[]).includes(key) ? `extra_${key}` : key] = value;
  return renamed;
}

/** Powertools' Logger, except that an extra under a reserved key keeps its value (as `extra_<key>`). */
class ProjectLogger extends Logger {
  // Every level goes through here, and only for a line that will be written.
  protected override createAndPopulateLogItem(logLevel: number, input: LogItemMessage, extra: LogItemExtraInput): LogItem {
    return super.createAndPopulateLogItem(logLevel, input, keepReserved(extra));
  }
  // Children (createChild) are ProjectLoggers too.
  protected override createLogger(options?: ConstructorParameters<typeof Logger>[0]): Logger {
    return new ProjectLogger(options);
  }
}

/** Keys every log line about one task carries (docs/operations.md, "Reading the logs by request id"). */
export type TaskLogKeys = {
  correlation_id?: string;
  request_id?: string;
  task_id?: string;
  event_id?: string;
  /** The execution agent a task went to. */
  agent?: string;
};

/**
 * A logger that stamps the task's ids on every line it writes. A thin wrapper rather than
 * Powertools' createChild, which builds a new Console per call: once per task, that cost the
 * execution runtime over a third of its CPU under load.
 */
export function taskLogger(parent: Log, keys: TaskLogKeys): Log {
  const defined: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(keys)) if (value !== undefined) defined[key] = value;
  return {
    debug: (message, ...extra) => parent.debug(message, defined, ...extra),
    info: (message, ...extra) => parent.info(message, defined, ...extra),
    warn: (message, ...extra) => parent.warn(message, defined, ...extra),
    error: (message, ...extra) => parent.error(message, defined, ...extra),
  };
}
