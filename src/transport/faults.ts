import { TransportError, type TransportFaultReason, type TransportKind } from './transport';

/** Makes one transport's TransportErrors: tagged with its kind, and with the cause when there is one. */
export type FaultMaker = (message: string, reason: TransportFaultReason, retryable: boolean, details?: { status?: number }, cause?: unknown) => TransportError;

export function faultMaker(transport: TransportKind): FaultMaker {
  return (message, reason, retryable, details = {}, cause) => new TransportError(message, reason, retryable, { ...details, transport }, cause === undefined ? undefined : { cause });
}

/**
 * The errno-style code (ECONNRESET, ENOTFOUND, …) of a network failure. fetch (undici) and the
 * AWS SDK ("AWS SDK error wrapper for …") both wrap the socket error, so it sits on a `cause`.
 */
export function errnoCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
