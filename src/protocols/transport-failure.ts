import { TransportError, type TransportFaultReason } from '../transport/transport';
import { failure, type Failure, type FailureCategory } from './outcome';

/**
 * Wire faults in the pipeline's terms. Every protocol meets the same TransportErrors, so they are
 * classified once, here, from the fault's reason; the code keeps the reason for logs and metrics.
 */

/** A transport fault becomes a failure whose retryability the transport decided. */
export function transportFailure(error: unknown): Failure {
  if (error instanceof TransportError) return failure(categoryOfTransportFault(error), `transport:${error.reason}`, error.message, error.retryable);
  return failure('failed', 'agent:unexpected', (error as Error)?.message ?? String(error), false);
}

/**
 * What a wire fault means for the user. Faults that an operator must fix (auth, a wrong address:
 * `rejected` is a 4xx from the host, not the agent refusing the input) read as "unavailable" too.
 */
const TRANSPORT_FAULT_CATEGORIES: Readonly<Record<TransportFaultReason, FailureCategory>> = {
  throttled: 'busy',
  'session-quota': 'busy',
  'session-busy': 'busy',
  timeout: 'timed-out',
  connection: 'unavailable',
  server: 'unavailable',
  runtime: 'unavailable',
  auth: 'unavailable',
  rejected: 'unavailable',
  'too-large': 'failed',
};

export function categoryOfTransportFault(error: TransportError): FailureCategory {
  // HTTP 413 is our request refused for its size: the input was too long for the agent.
  if (error.reason === 'too-large' && error.details.status === 413) return 'rejected';
  return TRANSPORT_FAULT_CATEGORIES[error.reason];
}
