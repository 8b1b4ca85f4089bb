import { DEFAULT_MAX_TASK_TOKENS, SuccessResultSchema, UsageSchema, boundedUsage, readUsage, totalTokens } from '../../src/contract';

describe('usage (docs/contract.md, "Usage")', () => {
  it('takes the counts and the model, and keeps only the known fields', () => {
    // Act
    const reading = readUsage({ input_tokens: 10, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 30, model: 'anthropic.claude-test-v1:0', reasoning_tokens: 5 });
    // Assess
    expect(reading).toEqual({ usage: { input_tokens: 10, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 30, model: 'anthropic.claude-test-v1:0' } });
  });

  it('needs only the input and output counts', () => {
    expect(readUsage({ input_tokens: 0, output_tokens: 0 })).toEqual({ usage: { input_tokens: 0, output_tokens: 0 } });
  });

  it('is nothing when absent (null counts as absent)', () => {
    expect(readUsage(undefined)).toEqual({});
    expect(readUsage(null)).toEqual({});
  });

  it.each([
    ['a count that is not a number', { input_tokens: '10', output_tokens: 2 }, /^input_tokens: input_tokens must be a number of tokens$/],
    ['a negative count', { input_tokens: 10, output_tokens: -2 }, /^output_tokens: output_tokens must not be negative$/],
    ['a fraction of a token', { input_tokens: 1.5, output_tokens: 2 }, /^input_tokens: input_tokens must be an integer$/],
    ['a count past what JSON numbers hold exactly', { input_tokens: 2 ** 60, output_tokens: 2 }, /input_tokens: input_tokens is too large$/],
    ['a missing output count', { input_tokens: 10 }, /^output_tokens: /],
    ['a bad cache count', { input_tokens: 1, output_tokens: 1, cache_read_tokens: -1 }, /^cache_read_tokens: cache_read_tokens must not be negative$/],
    ['an empty model', { input_tokens: 1, output_tokens: 1, model: '' }, /^model: model must not be empty$/],
    ['a model that is not a string', { input_tokens: 1, output_tokens: 1, model: 7 }, /^model: model must be a string$/],
    ['not an object', 'lots', /^usage: /],
    ['an array', [1, 2], /^usage: /],
  ])('drops %s, saying why', (_what, usage, why) => {
    // Act
    const reading = readUsage(usage);
    // Assess
    expect(reading).toEqual({ dropped: expect.stringMatching(why) });
    expect(UsageSchema.safeParse(usage).success).toBe(false);
  });

  it('never makes a success result break the contract: a malformed usage is the reader\'s to drop', () => {
    // Act
    const parsed = SuccessResultSchema.safeParse({ status: 'success', response_text: 'the answer', usage: { input_tokens: 'many' } });
    // Assess
    expect(parsed.success).toBe(true);
  });
});

describe('boundedUsage: a per-task ceiling on what an agent reports (MAX_TASK_TOKENS)', () => {
  it('keeps a usage within the ceiling as it is', () => {
    const usage = { input_tokens: 100, output_tokens: 50, cache_read_tokens: 10, model: 'm' };
    expect(boundedUsage(usage, 160)).toEqual({ usage });
  });

  it('scales a usage over the ceiling down to exactly the ceiling, each count in proportion, and says what was reported', () => {
    const { usage, clamped } = boundedUsage({ input_tokens: 6_000_000, output_tokens: 3_000_000, cache_read_tokens: 1_000_000, model: 'greedy' }, 1_000);
    expect(clamped).toEqual({ reported: 10_000_000 });
    expect(usage).toEqual({ input_tokens: 600, output_tokens: 300, cache_read_tokens: 100, model: 'greedy' });
    expect(totalTokens(usage)).toBe(1_000);
  });

  it('never charges more than the default ceiling, however large the report', () => {
    const { usage, clamped } = boundedUsage({ input_tokens: Number.MAX_SAFE_INTEGER, output_tokens: Number.MAX_SAFE_INTEGER, cache_write_tokens: 7 });
    expect(clamped?.reported).toBeGreaterThan(DEFAULT_MAX_TASK_TOKENS);
    expect(totalTokens(usage)).toBeLessThanOrEqual(DEFAULT_MAX_TASK_TOKENS);
    expect([usage.input_tokens, usage.output_tokens, usage.cache_write_tokens!].every((count) => Number.isInteger(count) && count >= 0)).toBe(true);
  });
});
