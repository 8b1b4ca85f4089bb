import { BEDROCK_STREAM_WINDOW_CHARS } from '../../src/guardrail/sentence-hold';
import { LIVE_TEXT_LIMIT } from '../../src/verification/live/live-parts';
import { guardrailCostRows } from '../../tools/guardrail-cost';
import { PRICES } from '../../tools/prices';

/** GUARDRAIL=bedrock's price per message (tools/guardrail-cost.ts), as `npm run model` prints it beside the task. */
describe('guardrail cost', () => {
  const units = (outputTokens: number) => guardrailCostRows(outputTokens).map((row) => row.units);

  it('a short answer: one unit for its final check, one window of preview', () => {
    expect(units(20)).toEqual([3, 1, 1, 1]);
  });

  it('a long answer: a unit per 1,000 characters finally, a window per 500 characters of preview, up to what a preview shows', () => {
    // 400 tokens × 4 characters: 1,600 characters; the first sentence, then three windows of 500.
    expect(units(400)).toEqual([3, 2, 4, 1]);
    const longest = units(10_000);
    expect(longest[1]).toBe(40);
    expect(longest[2]).toBe(1 + Math.floor((LIVE_TEXT_LIMIT - 100) / BEDROCK_STREAM_WINDOW_CHARS));
  });

  it('priced at the sensitive-information filter’s price per text unit', () => {
    for (const row of guardrailCostRows(400)) expect(row.per1000).toBeCloseTo(1000 * row.units * PRICES.guardrailPiiTextUnit.usd, 10);
  });
});
