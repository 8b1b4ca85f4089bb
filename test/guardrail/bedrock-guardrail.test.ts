import type { Guardrail } from '../../src/guardrail/guardrail';
import { GuardrailUnavailableError } from '../../src/guardrail/guardrail';
import { guardrailFromSettings } from '../../src/guardrail/guardrail-from-settings';
import { parseGuardrailSettings } from '../../src/guardrail/guardrail-config';
import type { Log, LogExtra } from '../../src/observability/logger';
import { CORPUS_ENTITY_TYPES, guardrailCorpus } from '../support/guardrail-corpus';
import { applyGuardrailEnv, startApplyGuardrailStandIn, type ApplyGuardrailStandIn } from '../support/apply-guardrail-stand-in';

let standIn: ApplyGuardrailStandIn;
const lines: Array<{ message: string; extra: LogExtra[] }> = [];
const log: Log = { debug: () => {}, info: (message, ...extra) => lines.push({ message, extra }), warn: (message, ...extra) => lines.push({ message, extra }), error: () => {} };
const findings: Array<{ direction: string; action: string; findings: Record<string, number> }> = [];
const units: number[] = [];
const failures: string[] = [];
const metrics = {
  guardrailFindings: (direction: string, action: string, found: Record<string, number>) => void findings.push({ direction, action, findings: found }),
  guardrailTextUnits: (_direction: string, count: number) => void units.push(count),
  guardrailFailed: (direction: string) => void failures.push(direction),
};
const savedEnv = { ...process.env };

/** The guardrail GUARDRAIL=bedrock builds from these settings, with the SDK pointed at the stand-in by AWS_ENDPOINT_URL_BEDROCK_RUNTIME. */
async function bedrock(settings: Record<string, string>): Promise<Guardrail> {
  const parsed = parseGuardrailSettings({ GUARDRAIL: 'bedrock', GUARDRAIL_ID: standIn.guardrailId, GUARDRAIL_VERSION: standIn.guardrailVersion, ...settings });
  return guardrailFromSettings(parsed, { log, metrics })!;
}

beforeAll(async () => {
  standIn = await startApplyGuardrailStandIn(Object.fromEntries(CORPUS_ENTITY_TYPES.map((type) => [type, 'ANONYMIZE' as const])));
  Object.assign(process.env, applyGuardrailEnv(standIn));
});
afterAll(async () => {
  process.env = savedEnv;
  await standIn.close();
});
beforeEach(() => {
  standIn.actions = Object.fromEntries(CORPUS_ENTITY_TYPES.map((type) => [type, 'ANONYMIZE' as const]));
  standIn.failWith = undefined;
  standIn.stall = false;
  lines.length = 0;
  findings.length = 0;
});

describe('GUARDRAIL=bedrock through a loopback ApplyGuardrail', () => {
  it('mask: the seeded corpus reaches nobody with an entity in it; placeholders are numbered like the built-in ones', async () => {
    const guardrail = await bedrock({ GUARDRAIL_MODE: 'mask' });
    const corpus = guardrailCorpus(37, 200);
    for (const message of corpus) {
      const result = await guardrail.check(message.text, 'input');
      expect(result.action).toBe('masked');
      for (const entity of message.entities) {
        expect(result.text).not.toContain(entity.value);
        expect(result.text).toContain(`[${entity.type}-1]`);
      }
    }
    expect(standIn.requests.slice(-corpus.length).every((request) => request.source === 'INPUT')).toBe(true);
  });

  it('reads each entity: GUARDRAIL_INTERVENED with a BLOCKED entity blocks, even where others were only anonymized', async () => {
    standIn.actions = { EMAIL: 'ANONYMIZE', AWS_ACCESS_KEY: 'BLOCK' };
    const guardrail = await bedrock({ GUARDRAIL_MODE: 'mask' });
    expect(await guardrail.check('mail a@example.com', 'output')).toMatchObject({ action: 'masked', text: 'mail [EMAIL-1]' });
    const blocked = await guardrail.check('mail a@example.com key AKIAABCDEFGHIJKLMNOP', 'output');
    expect(blocked).toMatchObject({ action: 'blocked', text: '', findings: { EMAIL: 1, AWS_ACCESS_KEY: 1 } });
    expect(standIn.requests.at(-1)?.source).toBe('OUTPUT');
  });

  it('block mode blocks what the guardrail only anonymizes or only detects; detect mode changes nothing, even a BLOCK', async () => {
    standIn.actions = { EMAIL: 'NONE', PHONE: 'ANONYMIZE', AWS_ACCESS_KEY: 'BLOCK' };
    const blocking = await bedrock({ GUARDRAIL_MODE: 'block' });
    expect((await blocking.check('write to a@example.com', 'input')).action).toBe('blocked');
    expect((await blocking.check('no entity here, order ORD-2024-000123', 'input')).action).toBe('none');
    const detecting = await bedrock({ GUARDRAIL_MODE: 'detect' });
    const text = 'a@example.com, 090-1234-5678, AKIAABCDEFGHIJKLMNOP';
    expect(await detecting.check(text, 'input')).toMatchObject({ action: 'detected', text, findings: { EMAIL: 1, PHONE: 1, AWS_ACCESS_KEY: 1 } });
  });

  it('modes per direction: GUARDRAIL_OUTPUT_MODE=detect while input masks', async () => {
    const guardrail = await bedrock({ GUARDRAIL_MODE: 'mask', GUARDRAIL_OUTPUT_MODE: 'detect' });
    expect((await guardrail.check('a@example.com', 'input')).action).toBe('masked');
    expect((await guardrail.check('a@example.com', 'output')).action).toBe('detected');
  });

  it('counts and logs each intervention by type and text units, never the matched text', async () => {
    const guardrail = await bedrock({ GUARDRAIL_MODE: 'mask' });
    await guardrail.check('call 090-1234-5678 or mail a@example.com and b@example.com', 'input');
    expect(findings).toEqual([{ direction: 'input', action: 'masked', findings: { PHONE: 1, EMAIL: 2 } }]);
    expect(units.at(-1)).toBe(1);
    expect(lines).toHaveLength(1);
    const written = JSON.stringify(lines);
    expect(written).toContain('guardrail intervened');
    expect(written).not.toMatch(/example\.com|1234/);
  });

  it('a refused call is not retryable, a throttled one is; both are counted and the text is not passed', async () => {
    const guardrail = await bedrock({});
    standIn.failWith = { status: 400, errorType: 'ValidationException' };
    await expect(guardrail.check('a@example.com', 'input')).rejects.toMatchObject({ name: 'GuardrailUnavailableError', retryable: false });
    standIn.failWith = { status: 429, errorType: 'ThrottlingException' };
    await expect(guardrail.check('a@example.com', 'input')).rejects.toMatchObject({ name: 'GuardrailUnavailableError', retryable: true });
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(lines)).not.toContain('a@example.com');
  });

  it('a stalled ApplyGuardrail is given up within GUARDRAIL_TIMEOUT_MS, and a caller with too little time left does not call at all', async () => {
    const guardrail = await bedrock({ GUARDRAIL_TIMEOUT_MS: '300' });
    standIn.stall = true;
    const stalled = await guardrail.check('a@example.com', 'input').catch((error: unknown) => error);
    expect(stalled).toBeInstanceOf(GuardrailUnavailableError);
    expect((stalled as GuardrailUnavailableError).retryable).toBe(true);
    standIn.stall = false;
    const before = standIn.requests.length;
    await expect(guardrail.check('a@example.com', 'input', { remainingMs: 400 })).rejects.toMatchObject({ retryable: true });
    expect(standIn.requests.length).toBe(before);
  });
});
