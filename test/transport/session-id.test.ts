import { runtimeSessionId, SESSION_ID_MAX_LENGTH, SESSION_ID_MIN_LENGTH } from '../../src/transport/session-id';

describe('runtimeSessionId', () => {
  it('keeps a UUID request id readable, so an operator can match a session to a task', () => {
    expect(runtimeSessionId('f47ac10b-58cc-4372-a567-0e02b2c3d479')).toBe('slack-zone-f47ac10b-58cc-4372-a567-0e02b2c3d479');
  });

  it('is the same for the same key and different for different keys', () => {
    expect(runtimeSessionId('task-1')).toBe(runtimeSessionId('task-1'));
    expect(runtimeSessionId('task-1')).not.toBe(runtimeSessionId('task-2'));
  });

  it.each([
    ['a one-character key', 'x'],
    ['a key too long for the readable form', 'k'.repeat(300)],
    ['a key with characters unsafe in a header', 'task id with spaces/and:colons\n'],
    ['a non-ASCII key', 'タスク-0000-0000-0000-0000-0000-0000'],
  ])('always fits AgentCore (33–256 safe characters) for %s', (_label, key) => {
    const id = runtimeSessionId(key);
    expect(id.length).toBeGreaterThanOrEqual(SESSION_ID_MIN_LENGTH);
    expect(id.length).toBeLessThanOrEqual(SESSION_ID_MAX_LENGTH);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('the hashed and readable forms cannot collide', () => {
    const hashed = runtimeSessionId('x');
    const suffix = hashed.slice('slack-zone'.length + 1);
    expect(runtimeSessionId(suffix)).not.toBe(hashed);
  });

  it('refuses an empty key', () => {
    expect(() => runtimeSessionId('')).toThrow(RangeError);
  });
});
