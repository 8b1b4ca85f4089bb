import type { FailureCategory } from '../../protocols/outcome';
import type { UserMessageKey } from './user-messages';

/**
 * Which user message a failure earns, by its category alone: the protocol that read the answer
 * (or the transport fault) decided the category, so nothing here knows a code, a protocol or a
 * transport. The user never sees the code or the far side's message (those go to the logs);
 * only one of the table's safe texts.
 */
export const FAILURE_MESSAGES: Readonly<Record<FailureCategory, UserMessageKey>> = {
  busy: 'modelBusy',
  unavailable: 'unavailable',
  'timed-out': 'timedOut',
  cancelled: 'cancelled',
  rejected: 'requestRejected',
  failed: 'executionFailed',
};

export function userMessageForFailure(category: FailureCategory): UserMessageKey {
  return FAILURE_MESSAGES[category];
}
