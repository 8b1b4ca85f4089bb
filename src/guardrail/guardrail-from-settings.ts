import { BuiltinGuardrail } from './builtin-guardrail';
import type { Guardrail } from './guardrail';
import type { GuardrailSettings } from './guardrail-config';
import { observedGuardrail, type GuardrailObservers } from './observed-guardrail';

/** The guardrail the settings name, counted and logged; undefined when GUARDRAIL=off (the default). */
export async function guardrailFromSettings(settings: GuardrailSettings, observers: GuardrailObservers): Promise<Guardrail | undefined> {
  if (settings.kind === 'off') return undefined;
  if (settings.kind === 'builtin') return observedGuardrail(new BuiltinGuardrail(settings.modes, settings.patterns), observers);
  // Loaded only when used: the Bedrock client stays out of a function that does not call it.
  const [{ BedrockRuntimeClient }, { BedrockGuardrail }] = await Promise.all([import('@aws-sdk/client-bedrock-runtime'), import('./bedrock-guardrail')]);
  const client = new BedrockRuntimeClient({
    // One retry, each attempt bounded; the call's own abort signal is the caller's bound (bedrock-guardrail.ts).
    maxAttempts: 2,
    requestHandler: { requestTimeout: settings.timeoutMs },
  });
  return observedGuardrail(new BedrockGuardrail({ client, guardrailId: settings.guardrailId, guardrailVersion: settings.guardrailVersion, modes: settings.modes, timeoutMs: settings.timeoutMs }), observers);
}
