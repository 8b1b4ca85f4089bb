import { parseDeploymentConfig } from '../../cdk/config';
import { environmentProblems } from '../../cdk/environment';
import { functionId, SINGLE_ACCOUNT, statementsOfFunction, synthesize, type Synthesized } from './support/synth';

/**
 * Guardrails in a deployment (docs/operations.md, "Guardrails"): `-c guardrail=…` sets GUARDRAIL
 * and its modes on the functions that check text, and with bedrock they may call ApplyGuardrail
 * on that one guardrail — nothing when it is off.
 */
const CHECKERS = ['agent-invoker', 'async-result', 'slack-poster'] as const;
const variablesOf = (synth: Synthesized, prefix: string) => synth.verification!.toJSON().Resources[functionId(synth.verification!, prefix)].Properties.Environment.Variables as Record<string, string>;
const applyGuardrail = (synth: Synthesized, prefix: string) =>
  statementsOfFunction(synth.verification!, functionId(synth.verification!, prefix)).filter((statement) => [statement.Action].flat().some((action: string) => action.startsWith('bedrock:')));

describe('guardrail context keys', () => {
  let off: Synthesized;
  let builtin: Synthesized;
  let bedrock: Synthesized;
  beforeAll(() => {
    off = synthesize({ ...SINGLE_ACCOUNT });
    builtin = synthesize({ ...SINGLE_ACCOUNT, guardrail: 'builtin', guardrailMode: 'detect', verificationEnvironment: JSON.stringify({ GUARDRAIL_PATTERNS_JSON: [{ name: 'EMPLOYEE_ID', pattern: 'EMP-\\d{6}' }] }) });
    bedrock = synthesize({ ...SINGLE_ACCOUNT, guardrail: 'bedrock', guardrailId: 'gr0abc123', guardrailVersion: '4', guardrailOutputMode: 'block' });
  });
  afterAll(() => [off, builtin, bedrock].forEach((synth) => synth?.cleanup()));

  it('off by default: no GUARDRAIL variable, no Bedrock permission', () => {
    for (const prefix of [...CHECKERS, 'slack-events']) {
      expect(Object.keys(variablesOf(off, prefix)).filter((name) => name.startsWith('GUARDRAIL'))).toEqual([]);
      expect(applyGuardrail(off, prefix)).toEqual([]);
    }
  });

  it('builtin: the mode and the custom patterns on the three functions that check text, and no AWS permission', () => {
    for (const prefix of CHECKERS) {
      expect(variablesOf(builtin, prefix)).toEqual(expect.objectContaining({ GUARDRAIL: 'builtin', GUARDRAIL_MODE: 'detect', GUARDRAIL_PATTERNS_JSON: '[{"name":"EMPLOYEE_ID","pattern":"EMP-\\\\d{6}"}]' }));
      expect(applyGuardrail(builtin, prefix)).toEqual([]);
    }
    expect(variablesOf(builtin, 'slack-events').GUARDRAIL).toBeUndefined();
    expect(builtin.nagFindings).toEqual([]);
  });

  it('bedrock: id, version and the output mode set; bedrock:ApplyGuardrail on that guardrail only', () => {
    for (const prefix of CHECKERS) {
      expect(variablesOf(bedrock, prefix)).toEqual(expect.objectContaining({ GUARDRAIL: 'bedrock', GUARDRAIL_ID: 'gr0abc123', GUARDRAIL_VERSION: '4', GUARDRAIL_OUTPUT_MODE: 'block' }));
      const [statement, ...more] = applyGuardrail(bedrock, prefix);
      expect(more).toEqual([]);
      expect(statement.Action).toBe('bedrock:ApplyGuardrail');
      expect(JSON.stringify(statement.Resource)).toMatch(/:bedrock:.*:guardrail\/gr0abc123"/);
    }
    expect(bedrock.nagFindings).toEqual([]);
  });

  it('refuses bedrock without its id and version, and an id or a mode where it means nothing', () => {
    expect(() => parseDeploymentConfig({ ...SINGLE_ACCOUNT, guardrail: 'bedrock' })).toThrow(/guardrailId: is required with guardrail=bedrock; guardrailVersion: is required/);
    expect(() => parseDeploymentConfig({ ...SINGLE_ACCOUNT, guardrail: 'builtin', guardrailId: 'gr0abc123' })).toThrow(/guardrailId: is used only with guardrail=bedrock/);
    expect(() => parseDeploymentConfig({ ...SINGLE_ACCOUNT, guardrailMode: 'mask' })).toThrow(/guardrailMode: is used only with guardrail=builtin or guardrail=bedrock/);
    expect(() => parseDeploymentConfig({ ...SINGLE_ACCOUNT, guardrail: 'builtin', guardrailMode: 'redact' })).toThrow(/guardrailMode/);
  });

  it('checks GUARDRAIL_PATTERNS_JSON at synthesis, and sends GUARDRAIL itself to its key', () => {
    expect(environmentProblems('verification', { GUARDRAIL_PATTERNS_JSON: '[{"name":"BAD","pattern":"("}]' })).toEqual([['GUARDRAIL_PATTERNS_JSON', expect.stringContaining('BAD')]]);
    expect(environmentProblems('verification', { GUARDRAIL: 'builtin' })).toEqual([['GUARDRAIL', 'is set by CDK from -c guardrail']]);
  });
});
