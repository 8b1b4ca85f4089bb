/**
 * A fake wall clock for replaying minutes of retries in milliseconds: only `Date` is faked, so
 * every timer, socket, request timeout and abort signal keeps real time (test/faults/clock.test.ts
 * checks that). Code that waits keeps waiting for real; code that compares times (claim leases,
 * Slack's signature window, deadlines) sees the time set here.
 *
 * Install it once per test file, BEFORE importing the code under test: `systemClock`
 * (src/clock.ts) reads `Date.now` at each call, but a module that keeps a reference to `Date.now`
 * keeps the one that was current then, and each `jest.useFakeTimers` call makes a new clock.
 */
export type DateClock = {
  /** Epoch ms the clock shows. */
  now(): number;
  /** Starts a scenario: a fresh origin later than anything before (leases of earlier tests are long over). */
  begin(): number;
  /** Sets the clock to `offsetMs` after the current scenario's origin; the clock never goes back. */
  at(offsetMs: number): number;
  /** Moves the clock forward. */
  advance(ms: number): number;
};

/** Everything jest can fake except Date. */
export const REAL_TIMERS = ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'nextTick', 'queueMicrotask', 'hrtime', 'performance'] as const;

/** Between scenarios: longer than any lease or TTL a scenario relies on being over. */
const SCENARIO_GAP_MS = 24 * 60 * 60 * 1000;

export function installDateClock(): DateClock {
  const start = Date.now();
  jest.useFakeTimers({ doNotFake: [...REAL_TIMERS] });
  jest.setSystemTime(start);
  let origin = start;
  const set = (epochMs: number) => {
    if (epochMs < Date.now()) throw new Error(`the clock does not go back (from ${new Date(Date.now()).toISOString()} to ${new Date(epochMs).toISOString()})`);
    jest.setSystemTime(epochMs);
    return epochMs;
  };
  return {
    now: () => Date.now(),
    begin: () => (origin = set(Date.now() + SCENARIO_GAP_MS)),
    at: (offsetMs) => set(origin + offsetMs),
    advance: (ms) => set(Date.now() + ms),
  };
}
