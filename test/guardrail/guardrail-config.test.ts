import { BuiltinGuardrail } from '../../src/guardrail/builtin-guardrail';
import { CustomPatternError, parseCustomPatterns } from '../../src/guardrail/custom-patterns';
import { parseGuardrailSettings } from '../../src/guardrail/guardrail-config';
import { guardrailFromSettings } from '../../src/guardrail/guardrail-from-settings';
import { StreamMasker } from '../../src/guardrail/stream-masker';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe('guardrail settings', () => {
  it('are off by default: no guardrail is built', async () => {
    const settings = parseGuardrailSettings({});
    expect(settings).toEqual({ kind: 'off' });
    expect(guardrailFromSettings(settings, { log })).toBeUndefined();
  });

  it('GUARDRAIL_MODE sets both directions; GUARDRAIL_INPUT_MODE / GUARDRAIL_OUTPUT_MODE override one', () => {
    expect(parseGuardrailSettings({ GUARDRAIL: 'builtin' })).toMatchObject({ modes: { input: 'mask', output: 'mask' } });
    expect(parseGuardrailSettings({ GUARDRAIL: 'builtin', GUARDRAIL_MODE: 'detect', GUARDRAIL_INPUT_MODE: 'block' })).toMatchObject({ modes: { input: 'block', output: 'detect' } });
  });

  it('refuse a bad value with one clear message naming it', () => {
    expect(() => parseGuardrailSettings({ GUARDRAIL: 'bedrok' })).toThrow(/GUARDRAIL/);
    expect(() => parseGuardrailSettings({ GUARDRAIL_MODE: 'redact' })).toThrow(/GUARDRAIL_MODE/);
    expect(() => parseGuardrailSettings({ GUARDRAIL: 'bedrock' })).toThrow(/GUARDRAIL=bedrock needs GUARDRAIL_ID and GUARDRAIL_VERSION/);
    expect(() => parseGuardrailSettings({ GUARDRAIL: 'bedrock', GUARDRAIL_ID: 'abc123', GUARDRAIL_VERSION: 'latest' })).toThrow(/GUARDRAIL_VERSION/);
    expect(() => parseGuardrailSettings({ GUARDRAIL: 'builtin', GUARDRAIL_PATTERNS_JSON: '[{"name":"X","pattern":"("}]' })).toThrow(/invalid guardrail configuration: GUARDRAIL_PATTERNS_JSON/);
  });
});

describe('GUARDRAIL_PATTERNS_JSON', () => {
  it('adds an organisation’s own entities, masked under their own names', async () => {
    const guardrail = new BuiltinGuardrail({ input: 'mask', output: 'mask' }, parseCustomPatterns('[{"name":"EMPLOYEE_ID","pattern":"EMP-\\\\d{6}"}]'));
    expect(await guardrail.check('ask EMP-123456 and EMP-654321, then EMP-123456', 'input')).toEqual({
      action: 'masked',
      text: 'ask [EMPLOYEE_ID-1] and [EMPLOYEE_ID-2], then [EMPLOYEE_ID-1]',
      findings: { EMPLOYEE_ID: 3 },
    });
  });

  it('holds back maxLength characters of a stream for a pattern that spans spaces', async () => {
    const guardrail = new BuiltinGuardrail({ input: 'mask', output: 'mask' }, parseCustomPatterns('[{"name":"PROJECT","pattern":"Project [A-Z][a-z]+ [A-Z][a-z]+","maxLength":30}]'));
    const masker = new StreamMasker(guardrail);
    const shown = [(await masker.push('We call it Project Blue ')).text, (await masker.push('Falcon internally.')).text, (await masker.end()).text];
    expect(shown.join('')).toBe('We call it [PROJECT-1] internally.');
    expect(shown[0]).not.toContain('Blue');
  });

  it('refuses what is not JSON, a bad name, a pattern that does not compile or matches nothing at all', () => {
    expect(() => parseCustomPatterns('[{')).toThrow(CustomPatternError);
    expect(() => parseCustomPatterns('[{"name":"lower","pattern":"x"}]')).toThrow(/name/);
    expect(() => parseCustomPatterns('[{"name":"BAD","pattern":"("}]')).toThrow(/BAD/);
    expect(() => parseCustomPatterns('[{"name":"EMPTY","pattern":"x*"}]')).toThrow(/empty/);
  });
});

describe('built-in detectors, one by one', () => {
  const guardrail = new BuiltinGuardrail({ input: 'mask', output: 'mask' });
  const masked = async (text: string) => (await guardrail.check(text, 'input')).text;

  it.each([
    ['4111 1111 1111 1111', '[CREDIT_DEBIT_CARD_NUMBER-1]'],
    ['4111 1111 1111 1112', '4111 1111 1111 1112'],
    ['GB82 WEST 1234 5698 7654 32', '[INTERNATIONAL_BANK_ACCOUNT_NUMBER-1]'],
    ['GB83 WEST 1234 5698 7654 32', 'GB83 WEST 1234 5698 7654 32'],
    ['電話は０３－１２３４－５６７８まで', '電話は[PHONE-1]まで'],
    ['メールはtaro@example.co.jpです', 'メールは[EMAIL-1]です'],
    ['commit 4c3a066774354b93f298cbb41feba1e1c96c519e', 'commit 4c3a066774354b93f298cbb41feba1e1c96c519e'],
    ['released 2024-05-01 as v1.10.0 at 10:30', 'released 2024-05-01 as v1.10.0 at 10:30'],
  ])('%s → %s', async (text, expected) => {
    expect(await masked(text)).toBe(expected);
  });
});
