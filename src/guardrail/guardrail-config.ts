import { ConfigError, envInt, parseEnv } from '../config/env';
import * as z from '../config/zod-mini';
import type { DirectionModes } from './builtin-guardrail';
import { CustomPatternError, parseCustomPatterns, type CustomPattern } from './custom-patterns';
import { GUARDRAIL_MODES } from './guardrail';

/**
 * The guardrail's settings (README "Configuration", docs/operations.md "Guardrails"): part of the
 * verification zone's configuration (src/verification/config.ts spreads GUARDRAIL_SETTINGS), parsed
 * once per function. Off unless GUARDRAIL names one. GUARDRAIL_MODE is both directions' mode;
 * GUARDRAIL_INPUT_MODE and GUARDRAIL_OUTPUT_MODE, when set, override it for one direction (detect
 * on output while input already masks, say).
 */
export const GUARDRAIL_KINDS = ['off', 'builtin', 'bedrock'] as const;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number];

/** ApplyGuardrail answers in a few hundred ms; past this the check is given up (and the caller's own time is the other bound). */
export const DEFAULT_GUARDRAIL_TIMEOUT_MS = 2_000;

export const GUARDRAIL_ID_PATTERN = /^(?:[a-z0-9]+|arn:aws[a-z-]*:bedrock:[a-z0-9-]+:\d{12}:guardrail\/[a-z0-9]+)$/;
export const GUARDRAIL_VERSION_PATTERN = /^(?:[1-9]\d{0,7}|DRAFT)$/;

export const GUARDRAIL_SETTINGS = {
  GUARDRAIL: z._default(z.enum(GUARDRAIL_KINDS), 'off'),
  GUARDRAIL_MODE: z._default(z.enum(GUARDRAIL_MODES), 'mask'),
  GUARDRAIL_INPUT_MODE: z.optional(z.enum(GUARDRAIL_MODES)),
  GUARDRAIL_OUTPUT_MODE: z.optional(z.enum(GUARDRAIL_MODES)),
  /** GUARDRAIL=builtin: an organisation's own entities (src/guardrail/custom-patterns.ts). */
  GUARDRAIL_PATTERNS_JSON: z.optional(z.string()),
  /** GUARDRAIL=bedrock: the guardrail's id (or ARN) and version (a number; DRAFT for trials). */
  GUARDRAIL_ID: z.optional(z.string().check(z.regex(GUARDRAIL_ID_PATTERN, 'a guardrail id or its ARN'))),
  GUARDRAIL_VERSION: z.optional(z.string().check(z.regex(GUARDRAIL_VERSION_PATTERN, 'a version number or DRAFT'))),
  GUARDRAIL_TIMEOUT_MS: envInt(DEFAULT_GUARDRAIL_TIMEOUT_MS, 100, 30_000),
};
type GuardrailValues = z.infer<z.ZodMiniObject<typeof GUARDRAIL_SETTINGS>>;

/** The settings, checked together: what one guardrail needs to be built. */
export type GuardrailSettings =
  | { kind: 'off' }
  | { kind: 'builtin'; modes: DirectionModes; patterns: CustomPattern[] }
  | { kind: 'bedrock'; modes: DirectionModes; guardrailId: string; guardrailVersion: string; timeoutMs: number };

export function guardrailSettingsOf(values: GuardrailValues): GuardrailSettings {
  const modes: DirectionModes = { input: values.GUARDRAIL_INPUT_MODE ?? values.GUARDRAIL_MODE, output: values.GUARDRAIL_OUTPUT_MODE ?? values.GUARDRAIL_MODE };
  if (values.GUARDRAIL === 'off') return { kind: 'off' };
  if (values.GUARDRAIL === 'builtin') {
    try {
      return { kind: 'builtin', modes, patterns: parseCustomPatterns(values.GUARDRAIL_PATTERNS_JSON) };
    } catch (error) {
      if (error instanceof CustomPatternError) throw new ConfigError(`invalid guardrail configuration: ${error.message}`);
      throw error;
    }
  }
  if (values.GUARDRAIL_ID === undefined || values.GUARDRAIL_VERSION === undefined) throw new ConfigError('invalid guardrail configuration: GUARDRAIL=bedrock needs GUARDRAIL_ID and GUARDRAIL_VERSION');
  return { kind: 'bedrock', modes, guardrailId: values.GUARDRAIL_ID, guardrailVersion: values.GUARDRAIL_VERSION, timeoutMs: values.GUARDRAIL_TIMEOUT_MS };
}

/** The settings alone, from an environment (tests, tools); a zone function reads them with its whole configuration. */
export function parseGuardrailSettings(env: NodeJS.ProcessEnv): GuardrailSettings {
  return guardrailSettingsOf(parseEnv(z.object(GUARDRAIL_SETTINGS), env, 'guardrail'));
}
