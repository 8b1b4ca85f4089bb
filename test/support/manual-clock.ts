/**
 * A clock a test moves by hand, for code that takes `now: () => number`. It starts on a whole
 * second, so TTL edges (stored in whole seconds) fall on exact boundaries.
 */
export function manualClock(start = 1_800_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
