import { ApplyGuardrailCommand, type ApplyGuardrailResponse, type BedrockRuntimeClient, type GuardrailAssessment } from '@aws-sdk/client-bedrock-runtime';
import { applyMode } from './apply-mode';
import type { DirectionModes } from './builtin-guardrail';
import { BEDROCK_STREAM_WINDOW_CHARS, sentenceHoldFrom } from './sentence-hold';
import { withoutOverlaps, type EntitySpan } from './find-entities';
import { GuardrailUnavailableError, type Guardrail, type GuardrailCheckOptions, type GuardrailDirection, type GuardrailMode, type GuardrailResult } from './guardrail';

export type BedrockGuardrailOptions = {
  client: BedrockRuntimeClient;
  guardrailId: string;
  guardrailVersion: string;
  modes: DirectionModes;
  /** GUARDRAIL_TIMEOUT_MS: the longest one ApplyGuardrail call may take. */
  timeoutMs: number;
};

/** Kept from the caller's remaining time for what it does after the check. */
const REMAINING_TIME_MARGIN_MS = 500;
/** ApplyGuardrail's failures that a later try may not meet. */
const RETRYABLE_ERRORS = new Set(['ThrottlingException', 'ServiceUnavailableException', 'InternalServerException', 'ServiceQuotaExceededException', 'TimeoutError', 'AbortError', 'RequestTimeout']);

/**
 * GUARDRAIL=bedrock: Amazon Bedrock Guardrails' ApplyGuardrail (no model is called), with
 * GUARDRAIL_ID at GUARDRAIL_VERSION, `source` INPUT or OUTPUT by direction. Bedrock answers
 * GUARDRAIL_INTERVENED both when it blocked and when it masked, so the answer is read entity by
 * entity (its sensitive-information assessments: each PII entity's and regex's action, BLOCKED,
 * ANONYMIZED or NONE for one only detected), and the direction's mode applies to what was found
 * as with GUARDRAIL=builtin: masks are numbered placeholders at the matched text, not Bedrock's
 * `{EMAIL}` tags, so both read alike. A BLOCKED entity, topic, word or content filter blocks
 * unless the mode is detect. docs/operations.md, "Guardrails".
 */
export class BedrockGuardrail implements Guardrail {
  readonly kind = 'bedrock';
  readonly streamWindowChars = BEDROCK_STREAM_WINDOW_CHARS;
  constructor(private readonly options: BedrockGuardrailOptions) {}

  async check(text: string, direction: GuardrailDirection, options: GuardrailCheckOptions = {}): Promise<GuardrailResult> {
    if (text.trim() === '') return { action: 'none', text, findings: {} };
    const answer = await this.apply(text, direction, options);
    const found = readAssessments(answer.assessments ?? []);
    const spans: EntitySpan[] = [];
    let located = true;
    for (const entity of found.entities) {
      const at = locate(text, entity.match, entity.type);
      if (at.length === 0) located = false;
      spans.push(...at);
    }
    const result = applyMode(text, withoutOverlaps(spans), this.options.modes[direction], { numbering: options.numbering, blockedAnyway: found.blocked });
    // An entity Bedrock found but did not quote as it stands in the text: its own masked output is the safe text.
    if (result.action === 'masked' && !located) result.text = (answer.outputs ?? []).map((output) => output.text ?? '').join('');
    if (!located && result.action === 'masked' && result.text === '') return { ...result, action: 'blocked' };
    for (const entity of found.entities) if (!(entity.type in result.findings)) result.findings[entity.type] = 1;
    return { ...result, textUnits: textUnits(answer) };
  }

  modeOf(direction: GuardrailDirection): GuardrailMode {
    return this.options.modes[direction];
  }

  holdFrom(text: string): number {
    return sentenceHoldFrom(text);
  }

  private async apply(text: string, direction: GuardrailDirection, options: GuardrailCheckOptions): Promise<ApplyGuardrailResponse> {
    const timeoutMs = Math.min(this.options.timeoutMs, (options.remainingMs ?? Number.POSITIVE_INFINITY) - REMAINING_TIME_MARGIN_MS);
    if (timeoutMs <= 0) throw new GuardrailUnavailableError('no time left to check the text with Bedrock Guardrails', true);
    const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
    try {
      return await this.options.client.send(
        new ApplyGuardrailCommand({
          guardrailIdentifier: this.options.guardrailId,
          guardrailVersion: this.options.guardrailVersion,
          source: direction === 'input' ? 'INPUT' : 'OUTPUT',
          content: [{ text: { text } }],
          // Entities only detected (action NONE) are reported too.
          outputScope: 'FULL',
        }),
        { abortSignal: AbortSignal.any(signals) },
      );
    } catch (error) {
      const name = (error as Error).name;
      throw new GuardrailUnavailableError(`ApplyGuardrail failed: ${name}`, RETRYABLE_ERRORS.has(name) || !(error as { $metadata?: unknown }).$metadata, { cause: error });
    }
  }
}

type Found = { entities: Array<{ type: string; match: string | undefined }>; blocked: string[] };

/** Each sensitive-information finding (detected, whatever its action), and the types Bedrock blocked outright. */
function readAssessments(assessments: readonly GuardrailAssessment[]): Found {
  const found: Found = { entities: [], blocked: [] };
  for (const assessment of assessments) {
    const policy = assessment.sensitiveInformationPolicy;
    const items = [
      ...(policy?.piiEntities ?? []).map((entity) => ({ type: String(entity.type ?? 'PII'), match: entity.match, action: entity.action, detected: entity.detected })),
      ...(policy?.regexes ?? []).map((regex) => ({ type: regex.name ?? 'REGEX', match: regex.match, action: regex.action, detected: regex.detected })),
    ];
    for (const item of items) {
      if (item.detected === false) continue;
      if (item.action === 'BLOCKED') found.blocked.push(item.type);
      else found.entities.push({ type: item.type, match: item.match });
    }
    for (const topic of assessment.topicPolicy?.topics ?? []) if (topic.action === 'BLOCKED' && topic.detected !== false) found.blocked.push('TOPIC');
    for (const filter of assessment.contentPolicy?.filters ?? []) if (filter.action === 'BLOCKED' && filter.detected !== false) found.blocked.push('CONTENT');
    const words = [...(assessment.wordPolicy?.customWords ?? []), ...(assessment.wordPolicy?.managedWordLists ?? [])];
    for (const word of words) if (word.action === 'BLOCKED' && word.detected !== false) found.blocked.push('WORD');
  }
  return found;
}

function locate(text: string, match: string | undefined, type: string): EntitySpan[] {
  if (!match) return [];
  const spans: EntitySpan[] = [];
  for (let at = text.indexOf(match); at >= 0; at = text.indexOf(match, at + match.length)) spans.push({ start: at, end: at + match.length, type });
  return spans;
}

/** The units billed for the check: sensitive-information filters (PII and regexes) are the priced ones here. */
function textUnits(answer: ApplyGuardrailResponse): number | undefined {
  const usage = answer.usage;
  if (!usage) return undefined;
  return (usage.sensitiveInformationPolicyUnits ?? 0) + (usage.topicPolicyUnits ?? 0) + (usage.contentPolicyUnits ?? 0) + (usage.contextualGroundingPolicyUnits ?? 0);
}
