import { errnoCode, faultMaker } from '../../src/transport/faults';
import { TransportError } from '../../src/transport/transport';

describe('faultMaker', () => {
  it('tags a TransportError with the transport that made it, and keeps the cause only when there is one', () => {
    const fault = faultMaker('agentcore');
    const cause = new Error('socket hang up');

    const withCause = fault('no answer', 'timeout', true, { status: 504 }, cause);
    const without = fault('refused', 'auth', false);

    expect(withCause).toBeInstanceOf(TransportError);
    expect(withCause).toMatchObject({ message: 'no answer', reason: 'timeout', retryable: true, details: { status: 504, transport: 'agentcore' }, cause });
    expect(without.details).toEqual({ transport: 'agentcore' });
    expect('cause' in without).toBe(false);
  });
});

describe('errnoCode', () => {
  const wrapped = (depth: number, code = 'ECONNRESET'): unknown => (depth === 0 ? Object.assign(new Error('read'), { code }) : new Error(`wrapper ${depth}`, { cause: wrapped(depth - 1, code) }));

  it.each([0, 1, 4])('finds the code %i causes deep', (depth) => {
    expect(errnoCode(wrapped(depth))).toBe('ECONNRESET');
  });

  it('stops looking after five levels, and answers undefined without a code', () => {
    expect(errnoCode(wrapped(5))).toBeUndefined();
    expect(errnoCode(new Error('no code here'))).toBeUndefined();
    expect(errnoCode(undefined)).toBeUndefined();
  });
});
