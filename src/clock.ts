/**
 * The one source of wall-clock time (epoch ms). Code that reads the time takes a `Clock` from
 * whoever wires it — the verification functions from their FunctionContext, the execution
 * runtime's parts from the runtime — and defaults to `systemClock`; tests give one manual clock
 * (test/support/manual-clock.ts). Shared by both zones, like src/config and src/observability.
 *
 * Deadlines a timer fires (src/execution/deadlines.ts) and waits are timed on `performance.now()`
 * instead, monotonic as timers are: a timer never waits for a clock a test moves by hand.
 */
export interface Clock {
  /** Epoch ms. */
  now(): number;
}

/** Real time, read at each call, so a faked `Date` (test/support/date-clock.ts) is seen. */
export const systemClock: Clock = { now: () => Date.now() };
