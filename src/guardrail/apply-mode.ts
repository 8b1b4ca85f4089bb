import { maskSpans, type EntitySpan } from './find-entities';
import { countFindings, type GuardrailMode, type GuardrailResult } from './guardrail';
import { Numbering } from './numbering';

/**
 * What a direction's mode makes of the entities found in a text — the one rule both guardrails
 * follow: nothing found passes as is; `mask` passes the text with placeholders; `block` passes
 * nothing; `detect` passes the text unchanged and only reports (a rollout's first step).
 * `blockedAnyway` is a finding the guardrail itself refuses whatever the mode asks (Bedrock's
 * BLOCKED), except in detect mode, which never changes anything.
 */
export function applyMode(text: string, spans: readonly EntitySpan[], mode: GuardrailMode, options: { numbering?: Numbering; blockedAnyway?: readonly string[] } = {}): GuardrailResult {
  const blockedAnyway = options.blockedAnyway ?? [];
  const findings = countFindings([...spans.map((span) => span.type), ...blockedAnyway]);
  if (spans.length === 0 && blockedAnyway.length === 0) return { action: 'none', text, findings };
  if (mode === 'detect') return { action: 'detected', text, findings };
  if (mode === 'block' || blockedAnyway.length > 0) return { action: 'blocked', text: '', findings };
  return { action: 'masked', text: maskSpans(text, spans, options.numbering ?? new Numbering()), findings };
}
