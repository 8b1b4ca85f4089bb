import * as z from '../config/zod-mini';
import type { Detector } from './builtin-detectors';

/**
 * GUARDRAIL_PATTERNS_JSON: an organisation's own entities for the built-in guardrail, e.g.
 * `[{"name":"EMPLOYEE_ID","pattern":"EMP-\\d{6}"}]`. `name` is the placeholder's and the
 * metric's type (`[EMPLOYEE_ID-1]`); `flags` may add `i`, `m`, `s` or `u`; `maxLength` is how much
 * of a stream is held back for it when a match can contain spaces (a match without whitespace is
 * held back as any word is; docs/operations.md, "Guardrails").
 */
const CustomPatternSchema = z.object({
  name: z.string().check(z.regex(/^[A-Z][A-Z0-9_]{0,39}$/, 'name: capitals, digits and _, starting with a capital')),
  pattern: z.string().check(z.minLength(1)),
  flags: z.optional(z.string().check(z.regex(/^[imsu]*$/, 'flags: only i, m, s, u'))),
  maxLength: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(10_000))),
});
export type CustomPattern = z.infer<typeof CustomPatternSchema>;
const CustomPatternsSchema = z.array(CustomPatternSchema);

export class CustomPatternError extends Error {
  override name = 'CustomPatternError';
}

export function parseCustomPatterns(json: string | undefined): CustomPattern[] {
  if (json === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new CustomPatternError(`GUARDRAIL_PATTERNS_JSON is not JSON: ${(error as Error).message}`);
  }
  const parsed = z.safeParse(CustomPatternsSchema, value);
  if (!parsed.success) {
    throw new CustomPatternError(`GUARDRAIL_PATTERNS_JSON: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  for (const pattern of parsed.data) {
    try {
      new RegExp(pattern.pattern, `${pattern.flags ?? ''}g`);
    } catch (error) {
      throw new CustomPatternError(`GUARDRAIL_PATTERNS_JSON: ${pattern.name}: ${(error as Error).message}`);
    }
    if (new RegExp(pattern.pattern, pattern.flags ?? '').test('')) throw new CustomPatternError(`GUARDRAIL_PATTERNS_JSON: ${pattern.name} matches empty text`);
  }
  return parsed.data;
}

export function customDetectors(patterns: readonly CustomPattern[]): Detector[] {
  return patterns.map((pattern) => ({ type: pattern.name, pattern: new RegExp(pattern.pattern, `${pattern.flags ?? ''}g`) }));
}
