import { loadVerificationConfig } from '../../src/verification/config';
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

describe('the configuration reads the JSON settings once, at load', () => {
  it('a malformed USER_MESSAGES_JSON stops the function at its cold start, naming the variable; a good one is applied everywhere', () => {
    expect(() => loadVerificationConfig({ USER_MESSAGES_JSON: '{"notAKey": "x"}' })).toThrow(/USER_MESSAGES_JSON/);
    expect(() => loadVerificationConfig({ USER_MESSAGES_JSON: 'not json' })).toThrow(/USER_MESSAGES_JSON/);
    const config = loadVerificationConfig({ USER_MESSAGES_JSON: '{"stopped": "Halted."}', USER_DAILY_TOKEN_BUDGET: '500', AGENTCORE_STOP_SESSION: 'quiet-2m' });
    expect(config.messages.stopped).toBe('Halted.');
    expect(config.budgets).toEqual({ user: 500 });
    expect(config.sessionStop).toEqual({ kind: 'quiet', seconds: 120 });
  });
});
