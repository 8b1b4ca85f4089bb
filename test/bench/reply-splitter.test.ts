import { SPLITTER_SHAPES, splitProblem } from '../../bench/reply-splitter';

describe('the reply splitter bench', () => {
  it('builds every shape at exactly the size asked, without a cut surrogate pair at its end', () => {
    for (const shape of SPLITTER_SHAPES) {
      for (const chars of [1_000, 100_000]) {
        const text = shape.build(chars);
        expect({ shape: shape.name, length: text.length }).toEqual({ shape: shape.name, length: chars });
        expect(text).not.toMatch(/[\uD800-\uDBFF]$/);
      }
    }
  });

  it('refuses a fast wrong answer: a long chunk, a blank one, half a surrogate pair or a lost character', () => {
    // Prepare
    const text = 'ab 😀 cd';
    // Act / Assess
    expect(splitProblem(text, ['ab', '😀', 'cd'], 64)).toBeUndefined();
    expect(splitProblem(text, ['ab 😀 cd'], 4)).toBe('chunk 0 has 8 units');
    expect(splitProblem(text, ['ab', ' ', '😀 cd'], 64)).toBe('chunk 1 is blank');
    expect(splitProblem(text, ['ab \uD83D', '\uDE00 cd'], 64)).toBe('chunk 0 has half a surrogate pair');
    expect(splitProblem(text, ['ab', 'cd'], 64)).toBe('the chunks do not add up to the text');
  });
});
