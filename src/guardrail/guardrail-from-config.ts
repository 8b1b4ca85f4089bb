import { BuiltinGuardrail } from './builtin-guardrail';
import { parseCustomPatterns } from './custom-patterns';
import type { Guardrail } from './guardrail';
import { directionModes, type GuardrailConfig } from './guardrail-config';
import { observedGuardrail, type GuardrailObservers } from './observed-guardrail';

/** The guardrail the settings name, counted and logged; undefined when GUARDRAIL=off (the default). */
export async function guardrailFromConfig(config: GuardrailConfig, observers: GuardrailObservers): Promise<Guardrail | undefined> {
  const modes = directionModes(config);
  if (config.GUARDRAIL === 'off') return undefined;
  if (config.GUARDRAIL === 'builtin') return observedGuardrail(new BuiltinGuardrail(modes, parseCustomPatterns(config.GUARDRAIL_PATTERNS_JSON)), observers);
  // Loaded only when used: the Bedrock client stays out of a function that does not call it.
  const [{ BedrockRuntimeClient }, { BedrockGuardrail }] = await Promise.all([import('@aws-sdk/client-bedrock-runtime'), import('./bedrock-guardrail')]);
  const client = new BedrockRuntimeClient({
    // One retry, each attempt bounded; the call's own abort signal is the caller's bound (bedrock-guardrail.ts).
    maxAttempts: 2,
    requestHandler: { requestTimeout: config.GUARDRAIL_TIMEOUT_MS },
  });
  return observedGuardrail(
    new BedrockGuardrail({ client, guardrailId: config.GUARDRAIL_ID!, guardrailVersion: config.GUARDRAIL_VERSION!, modes, timeoutMs: config.GUARDRAIL_TIMEOUT_MS }),
    observers,
  );
}
