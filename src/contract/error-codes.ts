/**
 * The zone contract's error table (docs/contract.md, "Errors"). Codes -32768..-32000 are reserved by
 * JSON-RPC 2.0; -32099..-32000 is the server-defined range this contract uses for domain errors.
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  Timeout: -32001,
  TaskNotFound: -32002,
  TaskCancelled: -32003,
  /**
   * The execution runtime is at one of its limits (tasks running at once, a full task store, a
   * batch too long); nothing was started. `data.retryable` says whether sending the same request
   * again later can succeed (true when the limit is load, false for a batch over the length cap).
   */
  OverCapacity: -32004,
  /** An `execute_task` id came back with params other than those of the task it started; never retried. */
  RequestIdConflict: -32005,
  /** The model provider throttled the request; worth retrying later. */
  ModelThrottled: -32010,
  /** The model provider rejected the request (bad input, context too long, …). */
  ModelRejected: -32011,
  /** The model or its provider is unavailable (access denied, not ready, outage). */
  ModelUnavailable: -32012,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The canonical message for each code, used when a builder is given no message of its own. */
export const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  [ErrorCode.ParseError]: 'Parse error',
  [ErrorCode.InvalidRequest]: 'Invalid Request',
  [ErrorCode.MethodNotFound]: 'Method not found',
  [ErrorCode.InvalidParams]: 'Invalid params',
  [ErrorCode.InternalError]: 'Internal error',
  [ErrorCode.Timeout]: 'Timeout',
  [ErrorCode.TaskNotFound]: 'Task not found',
  [ErrorCode.TaskCancelled]: 'Task cancelled',
  [ErrorCode.OverCapacity]: 'Over capacity',
  [ErrorCode.RequestIdConflict]: 'Request id reused with different params',
  [ErrorCode.ModelThrottled]: 'Model throttled',
  [ErrorCode.ModelRejected]: 'Model rejected the request',
  [ErrorCode.ModelUnavailable]: 'Model unavailable',
};

export const SERVER_ERROR_MIN = -32099;
export const SERVER_ERROR_MAX = -32000;

/** True for codes in the server-defined range -32099..-32000. */
export function isServerErrorCode(code: number): boolean {
  return Number.isInteger(code) && code >= SERVER_ERROR_MIN && code <= SERVER_ERROR_MAX;
}

export function messageFor(code: number): string {
  return ERROR_MESSAGES[code] ?? (isServerErrorCode(code) ? 'Server error' : 'Error');
}
