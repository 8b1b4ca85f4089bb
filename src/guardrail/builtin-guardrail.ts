import { applyMode } from './apply-mode';
import { BUILTIN_DETECTORS, type Detector } from './builtin-detectors';
import { customDetectors, type CustomPattern } from './custom-patterns';
import { entityHoldFrom } from './entity-hold';
import { findEntities, type EntitySpan } from './find-entities';
import type { Guardrail, GuardrailCheckOptions, GuardrailDirection, GuardrailMode, GuardrailResult } from './guardrail';

export type DirectionModes = Record<GuardrailDirection, GuardrailMode>;

/**
 * GUARDRAIL=builtin: the detectors of builtin-detectors.ts and GUARDRAIL_PATTERNS_JSON's, run in
 * this process — no AWS, no cost per call, and what it finds in Japanese does not depend on a
 * service's language support. Synchronous underneath (`scan`), so a bench can time it alone.
 */
export class BuiltinGuardrail implements Guardrail {
  readonly kind = 'builtin';
  private readonly detectors: readonly Detector[];
  private readonly customMaxLength: number;

  constructor(private readonly modes: DirectionModes, customPatterns: readonly CustomPattern[] = []) {
    this.detectors = [...BUILTIN_DETECTORS, ...customDetectors(customPatterns)];
    this.customMaxLength = Math.max(0, ...customPatterns.map((pattern) => pattern.maxLength ?? 0));
  }

  scan(text: string): EntitySpan[] {
    return findEntities(text, this.detectors);
  }

  check(text: string, direction: GuardrailDirection, options: GuardrailCheckOptions = {}): Promise<GuardrailResult> {
    return Promise.resolve(applyMode(text, this.scan(text), this.modes[direction], { numbering: options.numbering }));
  }

  /** The entity-shaped end of the text (entity-hold.ts), and never a cut through an entity already found in it. */
  modeOf(direction: GuardrailDirection): GuardrailMode {
    return this.modes[direction];
  }

  holdFrom(text: string): number {
    let from = entityHoldFrom(text, this.customMaxLength);
    for (const span of this.scan(text)) if (span.start < from && from < span.end) from = span.start;
    return from;
  }
}
