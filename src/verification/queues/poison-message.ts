import type * as core from 'zod/v4/core';
import * as z from '../../config/zod-mini';

/**
 * A queue message that can never be processed (not JSON, or not the expected shape). Consumers
 * throw it so the record fails like any other: SQS redelivers it up to maxReceiveCount and then
 * moves it to the DLQ, where an operator can read it. Nothing in it is retryable, but telling it
 * apart lets handlers and logs say "malformed" rather than "Slack was down".
 */
export class PoisonMessageError extends Error {
  override name = 'PoisonMessageError';
}

/** A queue body's JSON; text that is not JSON is a PoisonMessageError. */
export function readQueueJson(body: string, what: string): unknown {
  try {
    return JSON.parse(body);
  } catch (error) {
    throw new PoisonMessageError(`${what} is not JSON`, { cause: error });
  }
}

/** A queue body's JSON against its schema; anything else is a PoisonMessageError. */
export function parseQueueJson<S extends core.$ZodType>(schema: S, json: unknown, what: string): core.output<S> {
  const parsed = z.safeParse(schema, json);
  if (!parsed.success) throw new PoisonMessageError(`${what} is malformed: ${parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ')}`);
  return parsed.data;
}

/** Parses a queue body against its schema; anything unreadable is a PoisonMessageError. */
export function parseQueueMessage<S extends core.$ZodType>(schema: S, body: string, what: string): core.output<S> {
  return parseQueueJson(schema, readQueueJson(body, what), what);
}
