import { readUsage, type UsageReading } from '../contract';

/**
 * Token usage an A2A agent reports in a `metadata` map (docs/contract.md, "Usage"). A2A defines no
 * usage field: agents put it in metadata, under one of two keys seen in the field, read in this order:
 *
 * - `usage`: the contract's own fields (`input_tokens`, `output_tokens`, `cache_read_tokens`,
 *   `cache_write_tokens`, `model`), or the same counts as Bedrock Converse names them
 *   (`inputTokens`, `outputTokens`, `cacheReadInputTokens`, `cacheWriteInputTokens`; `modelId`),
 *   or as the Anthropic API does (`cache_read_input_tokens`, `cache_creation_input_tokens`);
 * - `adk_usage_metadata`: what Google ADK's A2A server attaches, Gemini's `usage_metadata`
 *   (`promptTokenCount` less `cachedContentTokenCount` → input, `cachedContentTokenCount` → cache
 *   read — Gemini's prompt count includes what came from its cache, the contract's does not —,
 *   `candidatesTokenCount` and `thoughtsTokenCount` → output: both are billed as output).
 *
 * The first key present decides: a `usage` that is not a usage is dropped with the reason (the
 * settlement logs it), never looked past. Nothing else in metadata is read.
 */

/** The first usage found in these metadata maps, in order (a task's own, then its status message's, …). */
export function usageOfA2aMetadata(...metadata: unknown[]): UsageReading {
  for (const map of metadata) {
    if (!isRecord(map)) continue;
    if (map.usage !== undefined) return readUsage(normalised(map.usage, CONTRACT_AND_ALIKE));
    if (map.adk_usage_metadata !== undefined) return readAdkUsage(map.adk_usage_metadata);
  }
  return {};
}

/** Each usage field and the names agents give it, the contract's first. */
const CONTRACT_AND_ALIKE: Readonly<Record<string, readonly string[]>> = {
  input_tokens: ['input_tokens', 'inputTokens'],
  output_tokens: ['output_tokens', 'outputTokens'],
  cache_read_tokens: ['cache_read_tokens', 'cacheReadInputTokens', 'cache_read_input_tokens'],
  cache_write_tokens: ['cache_write_tokens', 'cacheWriteInputTokens', 'cache_creation_input_tokens'],
  model: ['model', 'modelId', 'model_id'],
};

/** The usage's fields under the contract's names (the first alias present wins); not an object: as is, for readUsage to refuse. */
function normalised(value: unknown, aliases: Readonly<Record<string, readonly string[]>>): unknown {
  if (!isRecord(value)) return value;
  const fields: Record<string, unknown> = {};
  for (const [field, names] of Object.entries(aliases)) {
    const name = names.find((candidate) => value[candidate] !== undefined);
    if (name !== undefined) fields[field] = value[name];
  }
  return fields;
}

function readAdkUsage(value: unknown): UsageReading {
  if (!isRecord(value)) return { dropped: 'adk_usage_metadata: not an object' };
  const { promptTokenCount, candidatesTokenCount, thoughtsTokenCount, cachedContentTokenCount } = value;
  // A Gemini answer without thoughts leaves the count out; one without output leaves that out too.
  const output = candidatesTokenCount === undefined && thoughtsTokenCount === undefined ? undefined : sum(candidatesTokenCount ?? 0, thoughtsTokenCount ?? 0);
  const cached = typeof cachedContentTokenCount === 'number' && typeof promptTokenCount === 'number' ? Math.min(cachedContentTokenCount, promptTokenCount) : 0;
  const reading = readUsage({
    input_tokens: typeof promptTokenCount === 'number' ? promptTokenCount - cached : promptTokenCount,
    output_tokens: output,
    ...(cachedContentTokenCount === undefined ? {} : { cache_read_tokens: cachedContentTokenCount }),
  });
  return 'dropped' in reading ? { dropped: `adk_usage_metadata: ${reading.dropped}` } : reading;
}

/** Two counts added, or the first that is not a number (for readUsage to name). */
function sum(a: unknown, b: unknown): unknown {
  if (typeof a !== 'number') return a;
  if (typeof b !== 'number') return b;
  return a + b;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
