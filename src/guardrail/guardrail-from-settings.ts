import type { BedrockGuardrail } from './bedrock-guardrail';
import { BuiltinGuardrail } from './builtin-guardrail';
import type { Guardrail, GuardrailCheckOptions, GuardrailDirection, GuardrailMode, GuardrailResult } from './guardrail';
import type { GuardrailSettings } from './guardrail-config';
import { observedGuardrail, type GuardrailObservers } from './observed-guardrail';
import { BEDROCK_STREAM_WINDOW_CHARS, sentenceHoldFrom } from './sentence-hold';

/** The guardrail the settings name, counted and logged; undefined when GUARDRAIL=off (the default). */
export function guardrailFromSettings(settings: GuardrailSettings, observers: GuardrailObservers): Guardrail | undefined {
  if (settings.kind === 'off') return undefined;
  if (settings.kind === 'builtin') return observedGuardrail(new BuiltinGuardrail(settings.modes, settings.patterns), observers);
  return observedGuardrail(new LazyBedrockGuardrail(settings), observers);
}

/**
 * GUARDRAIL=bedrock, its client loaded at the first check: the Bedrock Runtime client stays out of
 * a cold start that never checks text (a Stop, a poll with nothing new).
 */
class LazyBedrockGuardrail implements Guardrail {
  readonly kind = 'bedrock';
  readonly streamWindowChars = BEDROCK_STREAM_WINDOW_CHARS;
  private built?: Promise<BedrockGuardrail>;
  constructor(private readonly settings: Extract<GuardrailSettings, { kind: 'bedrock' }>) {}

  async check(text: string, direction: GuardrailDirection, options?: GuardrailCheckOptions): Promise<GuardrailResult> {
    return (await this.build()).check(text, direction, options);
  }

  modeOf(direction: GuardrailDirection): GuardrailMode {
    return this.settings.modes[direction];
  }

  holdFrom(text: string): number {
    return sentenceHoldFrom(text);
  }

  private build(): Promise<BedrockGuardrail> {
    const settings = this.settings;
    this.built ??= Promise.all([import('@aws-sdk/client-bedrock-runtime'), import('./bedrock-guardrail')]).then(
      ([{ BedrockRuntimeClient }, { BedrockGuardrail }]) =>
        new BedrockGuardrail({
          // One retry, each attempt bounded; the call's own abort signal is the caller's bound (bedrock-guardrail.ts).
          client: new BedrockRuntimeClient({ maxAttempts: 2, requestHandler: { requestTimeout: settings.timeoutMs } }),
          guardrailId: settings.guardrailId,
          guardrailVersion: settings.guardrailVersion,
          modes: settings.modes,
          timeoutMs: settings.timeoutMs,
        }),
    );
    return this.built;
  }
}
