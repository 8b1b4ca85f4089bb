import { formatRatio, formatSummary, median, pairedDifferences, pairedRatios, percentile, rotate, summarize } from '../../bench/stats';

describe('median', () => {
  it('takes the middle value of an odd sample and the mean of the two middle values of an even one', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('refuses an empty sample instead of inventing a figure', () => {
    expect(() => median([])).toThrow(RangeError);
  });
});

describe('percentile', () => {
  it('uses the nearest rank: p99 of 300 values is the 297th smallest', () => {
    // Prepare
    const values = Array.from({ length: 300 }, (_, i) => 300 - i);
    // Act
    const p99 = percentile(values, 99);
    // Assess
    expect(p99).toBe(297);
  });

  it('gives the median rank for p50 and the extremes for p0 and p100', () => {
    const values = [10, 20, 30, 40];
    expect(percentile(values, 50)).toBe(20);
    expect(percentile(values, 0)).toBe(10);
    expect(percentile(values, 100)).toBe(40);
  });

  it('refuses a percentile outside 0–100', () => {
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('reports median, min, max and the sample size', () => {
    expect(summarize([3, 9, 1, 4])).toEqual({ median: 3.5, min: 1, max: 9, n: 4 });
  });
});

describe('pairedRatios and pairedDifferences', () => {
  it('compare measurements taken in the same round, element by element', () => {
    expect(pairedRatios([10, 30], [5, 10])).toEqual([2, 3]);
    expect(pairedDifferences([10, 30], [5, 10])).toEqual([5, 20]);
  });

  it('refuse samples of different lengths', () => {
    expect(() => pairedRatios([1, 2], [1])).toThrow(RangeError);
  });
});

describe('formatSummary and formatRatio', () => {
  it('write the median with the range in brackets', () => {
    expect(formatSummary({ median: 12.34, min: 11.9, max: 13, n: 5 }, 'ms')).toBe('12.3 ms (11.9–13.0)');
    expect(formatRatio({ median: 0.42, min: 0.4, max: 0.45, n: 3 })).toBe('0.42× (0.40–0.45)');
  });

  it('write a single figure without a range', () => {
    expect(formatSummary({ median: 2500, min: 2500, max: 2500, n: 1 }, 'ns')).toBe('2,500 ns');
  });
});

describe('rotate', () => {
  it('starts each round with the next item, so no command always runs first', () => {
    expect(rotate(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a']);
  });
});
