import type * as core from 'zod/v4/core';
import * as z from './zod-mini';

/**
 * Reading configuration from the environment, the same way in both zones: an empty variable
 * means "unset" (as in `VAR= command`), lists are comma-separated, booleans are true/false/1/0.
 * The helpers are zod/mini schemas (src/config/zod-mini.ts), usable in `zod` objects as well.
 */
export function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== ''));
}

/** An integer from min to max; the variable's text is read as a number. */
export const envInt = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z._default(z.pipe(z.coerce.number(), z.int().check(z.minimum(min), z.maximum(max))), fallback);

/** The same with no default: unset stays undefined. */
export const envOptionalInt = (min = 0, max = Number.MAX_SAFE_INTEGER) => z.optional(z.pipe(z.coerce.number(), z.int().check(z.minimum(min), z.maximum(max))));

export const envNumber = (fallback: number, min = 0) => z._default(z.coerce.number().check(z.minimum(min)), fallback);

const BOOLEAN_WORDS = ['true', 'false', '1', '0', 'yes', 'no'] as const;
export const envBool = (fallback: boolean) =>
  z.pipe(
    z._default(z.enum(BOOLEAN_WORDS), fallback ? 'true' : 'false'),
    z.transform((value: (typeof BOOLEAN_WORDS)[number]) => value === 'true' || value === '1' || value === 'yes'),
  );

/** A comma-separated list; unset means "no list" (undefined), which allow-lists read as "allow all". */
export const envList = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((value: string | undefined) => (value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter(Boolean))),
  );

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment with a schema, with one readable error naming every bad variable. */
export function parseEnv<S extends core.$ZodType>(schema: S, env: NodeJS.ProcessEnv, what: string): core.output<S> {
  const parsed = z.safeParse(schema, withoutEmpty(env));
  if (!parsed.success) {
    throw new ConfigError(`invalid ${what} configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}
