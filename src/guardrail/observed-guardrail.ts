import type { Log } from '../observability/logger';
import type { PipelineMetrics } from '../observability/metrics';
import type { Guardrail, GuardrailCheckOptions, GuardrailDirection, GuardrailResult } from './guardrail';

export type GuardrailObservers = { log: Log; metrics?: Pick<PipelineMetrics, 'guardrailFindings' | 'guardrailTextUnits' | 'guardrailFailed'> };

/**
 * A guardrail whose every intervention is counted and logged (docs/operations.md, "Guardrails"):
 * a metric per direction, action and entity type, and one log line — which entity types, how
 * many, what was done — never the matched text, nor the text checked. Detect mode's findings are
 * logged the same way: that is what a rollout reads before it masks.
 */
export function observedGuardrail(inner: Guardrail, observers: GuardrailObservers): Guardrail {
  return {
    kind: inner.kind,
    ...(inner.streamWindowChars ? { streamWindowChars: inner.streamWindowChars } : {}),
    holdFrom: (text) => inner.holdFrom(text),
    modeOf: (direction) => inner.modeOf(direction),
    async check(text: string, direction: GuardrailDirection, options?: GuardrailCheckOptions): Promise<GuardrailResult> {
      let result: GuardrailResult;
      try {
        result = await inner.check(text, direction, options);
      } catch (error) {
        observers.metrics?.guardrailFailed(direction);
        observers.log.warn('guardrail check failed', { guardrail: inner.kind, direction, error_name: (error as Error).name, error_message: (error as Error).message });
        throw error;
      }
      if (result.textUnits) observers.metrics?.guardrailTextUnits(direction, result.textUnits);
      if (result.action !== 'none') {
        observers.metrics?.guardrailFindings(direction, result.action, result.findings);
        observers.log.info('guardrail intervened', { guardrail: inner.kind, direction, guardrail_action: result.action, findings: result.findings, characters: text.length });
      }
      return result;
    },
  };
}
