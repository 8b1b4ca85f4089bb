import { BuiltinGuardrail } from '../../src/guardrail/builtin-guardrail';
import { CORPUS_ENTITY_TYPES, guardrailCorpus } from '../support/guardrail-corpus';

const corpus = guardrailCorpus(37, 200);
const mask = new BuiltinGuardrail({ input: 'mask', output: 'mask' });

describe('GUARDRAIL=builtin on the seeded corpus (seed 37, 200 English + 200 Japanese messages)', () => {
  it('holds every entity type in both languages', () => {
    for (const language of ['en', 'ja'] as const) {
      const types = new Set(corpus.filter((message) => message.language === language).flatMap((message) => message.entities.map((entity) => entity.type)));
      expect([...types].sort()).toEqual([...CORPUS_ENTITY_TYPES].sort());
    }
    expect(corpus.filter((message) => message.language === 'ja')).toHaveLength(200);
  });

  it('lets no seeded entity through: each is replaced by a placeholder of its type', async () => {
    const survivors: string[] = [];
    for (const message of corpus) {
      const result = await mask.check(message.text, 'input');
      for (const entity of message.entities) {
        if (result.text.includes(entity.value) || !result.text.includes(`[${entity.type}-1]`)) survivors.push(`${entity.type} in: ${message.text}\n→ ${result.text}`);
      }
      expect(result.action).toBe('masked');
    }
    expect(survivors).toEqual([]);
  });

  it('counts look-alikes masked by mistake (order numbers, dates, versions, timestamps, ids) and keeps them under 1 %', async () => {
    let falsePositives = 0;
    let lookAlikes = 0;
    const examples: string[] = [];
    for (const message of corpus) {
      const result = await mask.check(message.text, 'input');
      for (const lookAlike of message.lookAlikes) {
        lookAlikes++;
        if (!result.text.includes(lookAlike)) {
          falsePositives++;
          examples.push(lookAlike);
        }
      }
    }
    // The figure the issue asks for, in the test's output.
    console.log(`guardrail corpus: ${falsePositives} of ${lookAlikes} look-alikes masked (${((100 * falsePositives) / lookAlikes).toFixed(2)} %)${examples.length ? `: ${examples.join(', ')}` : ''}`);
    expect(falsePositives / lookAlikes).toBeLessThan(0.01);
  });
});
