import type { FailureCategory } from '../../src/protocols/outcome';
import { transportFailure } from '../../src/protocols/transport-failure';
import { TransportError, type TransportFaultReason } from '../../src/transport/transport';

describe('transportFailure: a wire fault in the pipeline’s terms', () => {
  it.each<[TransportFaultReason, number | undefined, FailureCategory]>([
    ['throttled', 429, 'busy'],
    ['timeout', undefined, 'timed-out'],
    ['connection', undefined, 'unavailable'],
    ['server', 503, 'unavailable'],
    ['runtime', 424, 'unavailable'],
    ['auth', 403, 'unavailable'],
    ['rejected', 404, 'unavailable'],
    ['too-large', 413, 'rejected'],
    ['too-large', 200, 'failed'],
  ])('%s (HTTP %s) → %s, keeping the reason as the code and the transport’s verdict on retrying', (reason, status, category) => {
    const error = new TransportError('what happened', reason, reason === 'throttled', { ...(status ? { status } : {}), transport: 'https' });

    expect(transportFailure(error)).toEqual({ kind: 'failure', category, code: `transport:${reason}`, message: 'what happened', retryable: reason === 'throttled' });
  });

  it('anything else thrown is failed, not retryable', () => {
    expect(transportFailure(new Error('bug'))).toEqual({ kind: 'failure', category: 'failed', code: 'agent:unexpected', message: 'bug', retryable: false });
  });
});
