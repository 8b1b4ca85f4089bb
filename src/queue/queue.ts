/**
 * The Queue port (docs/architecture.md §4.4): SQS when deployed, in memory locally and in tests. Bodies
 * are JSON text on the wire; consumers parse and validate them, so a poison message is caught
 * where it is read, exactly as with SQS.
 */
export type EnqueueOptions = {
  /** 0–900 s (SQS per-message timer). */
  delaySeconds?: number;
  /** String message attributes (e.g. correlation id) for operators reading a DLQ. */
  attributes?: Readonly<Record<string, string>>;
};

export interface Queue<T> {
  readonly name: string;
  send(message: T, options?: EnqueueOptions): Promise<void>;
  sendBatch(messages: ReadonlyArray<{ message: T; options?: EnqueueOptions }>): Promise<void>;
}

/** One delivery of a message to a consumer. */
export type Delivery = {
  messageId: string;
  body: string;
  /** 1 on the first receive; SQS's ApproximateReceiveCount. */
  receiveCount: number;
  attributes: Readonly<Record<string, string>>;
};

/** Resolves when the message is done; throws to have it redelivered (and, past maxReceiveCount, dead-lettered). */
export type DeliveryContext = {
  /** Aborts the handler's calls a little before the function must stop. */
  signal?: AbortSignal;
  /** Epoch ms by which the handler must be done; a wait that would end later is not started. */
  deadline?: number;
};
export type DeliveryHandler = (delivery: Delivery, context: DeliveryContext) => Promise<void>;

export const MAX_DELAY_SECONDS = 900;

export function clampDelaySeconds(seconds: number): number {
  return Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.round(seconds)));
}
