import { DEFAULT_USER_MESSAGES, fill, userMessages } from '../../src/verification/messages/user-messages';

describe('user messages', () => {
  it('lets operators override wording, and refuses unknown keys', () => {
    expect(userMessages('{"rateLimited":"Slow down, please."}').rateLimited).toBe('Slow down, please.');
    expect(userMessages('{"rateLimited":"x"}').notAllowed).toBe(DEFAULT_USER_MESSAGES.notAllowed);
    expect(() => userMessages('{"nope":"x"}')).toThrow();
  });

  it('fills placeholders', () => {
    expect(fill(DEFAULT_USER_MESSAGES.tooLong, { limit: 4000 })).toMatch(/4000 characters/);
  });

  it('never leaks protocol detail', () => {
    for (const text of Object.values(DEFAULT_USER_MESSAGES)) expect(text).not.toMatch(/json|rpc|-32\d\d\d|stack|exception|lambda|sqs/i);
  });
});
