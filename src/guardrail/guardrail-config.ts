import { envInt, parseEnv } from '../config/env';
import * as z from '../config/zod-mini';
import type { DirectionModes } from './builtin-guardrail';
import { GUARDRAIL_MODES } from './guardrail';

/**
 * The guardrail's settings (README "Configuration", docs/operations.md "Guardrails"), parsed once
 * per function like every zone setting (src/config/env.ts). Off unless GUARDRAIL names one.
 * GUARDRAIL_MODE is both directions' mode; GUARDRAIL_INPUT_MODE and GUARDRAIL_OUTPUT_MODE, when
 * set, override it for one direction (detect on output while input already masks, say).
 */
export const GUARDRAIL_KINDS = ['off', 'builtin', 'bedrock'] as const;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number];

/** ApplyGuardrail answers in a few hundred ms; past this the check is given up (and the caller's own time is the other bound). */
export const DEFAULT_GUARDRAIL_TIMEOUT_MS = 2_000;

export const GuardrailConfigSchema = z
  .object({
    GUARDRAIL: z._default(z.enum(GUARDRAIL_KINDS), 'off'),
    GUARDRAIL_MODE: z._default(z.enum(GUARDRAIL_MODES), 'mask'),
    GUARDRAIL_INPUT_MODE: z.optional(z.enum(GUARDRAIL_MODES)),
    GUARDRAIL_OUTPUT_MODE: z.optional(z.enum(GUARDRAIL_MODES)),
    GUARDRAIL_PATTERNS_JSON: z.optional(z.string()),
    /** GUARDRAIL=bedrock: the guardrail's id (or ARN) and version (a number; DRAFT for trials). */
    GUARDRAIL_ID: z.optional(z.string().check(z.regex(/^(?:[a-z0-9]+|arn:aws[a-z-]*:bedrock:[a-z0-9-]+:\d{12}:guardrail\/[a-z0-9]+)$/, 'GUARDRAIL_ID: a guardrail id or its ARN'))),
    GUARDRAIL_VERSION: z.optional(z.string().check(z.regex(/^(?:[1-9]\d{0,7}|DRAFT)$/, 'GUARDRAIL_VERSION: a version number or DRAFT'))),
    GUARDRAIL_TIMEOUT_MS: envInt(DEFAULT_GUARDRAIL_TIMEOUT_MS, 100, 30_000),
  })
  .check(
    z.refine((config) => config.GUARDRAIL !== 'bedrock' || (config.GUARDRAIL_ID !== undefined && config.GUARDRAIL_VERSION !== undefined), {
      message: 'GUARDRAIL=bedrock needs GUARDRAIL_ID and GUARDRAIL_VERSION',
      path: ['GUARDRAIL_ID'],
    }),
  );
export type GuardrailConfig = z.infer<typeof GuardrailConfigSchema>;

export function parseGuardrailConfig(env: NodeJS.ProcessEnv): GuardrailConfig {
  return parseEnv(GuardrailConfigSchema, env, 'guardrail');
}

export function directionModes(config: GuardrailConfig): DirectionModes {
  return { input: config.GUARDRAIL_INPUT_MODE ?? config.GUARDRAIL_MODE, output: config.GUARDRAIL_OUTPUT_MODE ?? config.GUARDRAIL_MODE };
}
