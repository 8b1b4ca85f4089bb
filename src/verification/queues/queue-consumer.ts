import type * as core from 'zod/v4/core';
import type { Log } from '../../observability/logger';
import type { Delivery, DeliveryContext, DeliveryHandler } from '../../queue/queue';
import { PoisonMessageError, parseQueueJson, readQueueJson } from './poison-message';

/**
 * One queue's consumer as a table, like the intake's (docs/architecture.md §2.6): each message
 * kind the queue carries has one row — its schema and its handler — and the consumer reads a
 * body's `kind`, looks its row up (own keys only: a `kind` of `constructor` is an unknown kind, not
 * Object's), parses the body against that row's schema and hands it on. A new effect on a queue is
 * one schema, one handler, one row. A body whose kind has no row, or that its row's schema refuses,
 * is a poison message (the record fails; SQS redelivers it and then dead-letters it) — unless the
 * row says a malformed body is to be logged and dropped.
 */
export type QueueRow<Message> = {
  schema: core.$ZodType<Message>;
  /** How logs name a body of this kind ("poll message"). */
  what: string;
  handle: (message: Message, delivery: Delivery, context: DeliveryContext) => Promise<void>;
  /** A body of this kind that does not parse is logged and dropped instead of failing (a check whose failure must never reach the user). */
  malformed?: 'fail' | 'drop';
};

/** The member of a queue's union whose `kind` may be `Kind`. */
type MessageOfKind<Union, Kind> = Union extends { kind?: infer Kinds } ? (Kind extends Kinds ? Union : never) : never;

/** The rows of one queue, by `kind`: each row's handler gets its own kind's message. */
export type QueueTable<Union extends { kind?: string }> = {
  [Kind in NonNullable<Union['kind']>]: QueueRow<MessageOfKind<Union, Kind>> | undefined;
};

/**
 * The consumer of one queue. `unmarked`: the kind of a body without `kind` (the queue's first
 * kind, from before the queue carried several). A row left undefined is a kind this deployment
 * does not handle: logged and dropped (a Stop where no running tasks are recorded).
 */
export function consumeByKind<Union extends { kind?: string }>(table: QueueTable<Union>, options: { unmarked?: NonNullable<Union['kind']>; log: Log }): DeliveryHandler {
  const { unmarked, log } = options;
  return async (delivery, context) => {
    const json = readQueueJson(delivery.body, 'queue message');
    const marked = (json as { kind?: unknown } | null)?.kind;
    const kind = marked === undefined ? unmarked : marked;
    if (typeof kind !== 'string' || !Object.hasOwn(table, kind)) throw new PoisonMessageError(`queue message of unknown kind ${JSON.stringify(kind)}`);
    const row = (table as Record<string, QueueRow<unknown> | undefined>)[kind];
    if (!row) {
      log.warn('a queue message arrived of a kind this deployment does not handle; dropped', { kind });
      return;
    }
    let message: unknown;
    try {
      message = parseQueueJson(row.schema, json, row.what);
    } catch (error) {
      if (row.malformed !== 'drop') throw error;
      log.warn(`a malformed ${row.what} was dropped`, { error: error as Error });
      return;
    }
    await row.handle(message, delivery, context);
  };
}
