import { DEFAULT_EXECUTION_PORT, DEFAULT_VERIFICATION_PORT, executionPortOf, localStackBase, verificationPortOf } from '../../src/local/local-ports';

describe('where the local stack listens', () => {
  it('defaults to 3000 and 8080, and takes VERIFICATION_PORT / EXECUTION_PORT', () => {
    expect([verificationPortOf({}), executionPortOf({})]).toEqual([DEFAULT_VERIFICATION_PORT, DEFAULT_EXECUTION_PORT]);
    expect([verificationPortOf({ VERIFICATION_PORT: '3100' }), executionPortOf({ EXECUTION_PORT: '8180' })]).toEqual([3100, 8180]);
  });

  it('a command finds the stack at --url, else --verification-port, else VERIFICATION_PORT', () => {
    const env = { VERIFICATION_PORT: '3100' };
    expect(localStackBase({ url: 'http://10.0.0.1:9', 'verification-port': '3200' }, env)).toBe('http://10.0.0.1:9');
    expect(localStackBase({ 'verification-port': '3200' }, env)).toBe('http://127.0.0.1:3200');
    expect(localStackBase({}, env)).toBe('http://127.0.0.1:3100');
    expect(localStackBase({}, {})).toBe('http://127.0.0.1:3000');
  });
});
