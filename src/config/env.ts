import { z } from 'zod';

/**
 * Reading configuration from the environment, the same way in both zones: an empty variable
 * means "unset" (as in `VAR= command`), lists are comma-separated, booleans are true/false/1/0.
 */
export function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== ''));
}

export const envInt = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(fallback);

export const envNumber = (fallback: number, min = 0) => z.coerce.number().min(min).default(fallback);

export const envBool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** A comma-separated list; unset means "no list" (undefined), which allow-lists read as "allow all". */
export const envList = () =>
  z
    .string()
    .optional()
    .transform((value) => (value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter(Boolean)));

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment with a schema, with one readable error naming every bad variable. */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv, what: string): z.infer<S> {
  const parsed = schema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    throw new ConfigError(`invalid ${what} configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}
