import { DEFAULT_MAX_TASK_TOKENS } from '../../src/contract';
import { MIN_EVENT_CLAIM_TTL_SECONDS, loadVerificationConfig } from '../../src/verification/config';

describe('verification settings that guard against retries and hostile agents', () => {
  it('refuses an EVENT_CLAIM_TTL_SECONDS shorter than Slack\'s retry window plus margin (a retry 90 s later would run again)', () => {
    expect(() => loadVerificationConfig({ EVENT_CLAIM_TTL_SECONDS: '60' })).toThrow(/EVENT_CLAIM_TTL_SECONDS/);
    expect(() => loadVerificationConfig({ EVENT_CLAIM_TTL_SECONDS: String(MIN_EVENT_CLAIM_TTL_SECONDS - 1) })).toThrow(/EVENT_CLAIM_TTL_SECONDS/);
    expect(loadVerificationConfig({ EVENT_CLAIM_TTL_SECONDS: String(MIN_EVENT_CLAIM_TTL_SECONDS) }).EVENT_CLAIM_TTL_SECONDS).toBe(600);
    expect(loadVerificationConfig({}).EVENT_CLAIM_TTL_SECONDS).toBe(3600);
  });

  it('charges a task at most MAX_TASK_TOKENS, 250,000 unless set, and refuses a ceiling of nothing', () => {
    expect(loadVerificationConfig({}).MAX_TASK_TOKENS).toBe(DEFAULT_MAX_TASK_TOKENS);
    expect(loadVerificationConfig({ MAX_TASK_TOKENS: '5000' }).MAX_TASK_TOKENS).toBe(5000);
    expect(() => loadVerificationConfig({ MAX_TASK_TOKENS: '0' })).toThrow(/MAX_TASK_TOKENS/);
  });
});
