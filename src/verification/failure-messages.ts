import { ErrorCode } from '../contract';
import type { UserMessageKey } from './user-messages';

/**
 * Which user message a failure earns. The user never sees the code or the execution zone's
 * message (those go to the logs); only one of the table's safe texts.
 */
export function userMessageForFailure(code: number | string): UserMessageKey {
  if (typeof code === 'string') return code.startsWith('transport:') ? 'unavailable' : 'executionFailed';
  switch (code) {
    case ErrorCode.ModelThrottled:
      return 'modelBusy';
    case ErrorCode.ModelUnavailable:
      return 'unavailable';
    case ErrorCode.Timeout:
      return 'timedOut';
    case ErrorCode.TaskCancelled:
      return 'cancelled';
    default:
      return 'executionFailed';
  }
}
