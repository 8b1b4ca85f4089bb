import { ErrorCode } from '../../src/contract';
import { isRetryableRpcError } from '../../src/protocols/retry-policy';

describe('isRetryableRpcError', () => {
  const throttled = { code: ErrorCode.ModelThrottled, message: 'busy' };

  it('retries a transient model error only where a retry can re-run the task: execute_task', () => {
    expect(isRetryableRpcError(throttled, { protocol: 'execute-task', method: 'execute_task' })).toBe(true);
    expect(isRetryableRpcError(throttled, { protocol: 'execute-task', method: 'get_task_result' })).toBe(false);
    expect(isRetryableRpcError(throttled, { protocol: 'execute-task', method: 'cancel_task' })).toBe(false);
  });

  it('lets the execution zone mark a transient code permanent, and only with a real boolean', () => {
    const origin = { protocol: 'execute-task', method: 'execute_task' } as const;

    expect(isRetryableRpcError({ ...throttled, data: { retryable: false } }, origin)).toBe(false);
    expect(isRetryableRpcError({ ...throttled, data: { retryable: 'false' } }, origin)).toBe(true);
    expect(isRetryableRpcError({ ...throttled, data: [{ retryable: false }] }, origin)).toBe(true);
  });

  it('never retries an A2A error, whatever its code or data say', () => {
    for (const code of [-32603, -32001, -32002, -32004, -32009, ErrorCode.ModelThrottled]) {
      expect(isRetryableRpcError({ code, message: 'x', data: { retryable: true } }, { protocol: 'a2a', method: 'SendMessage' })).toBe(false);
    }
  });
});
