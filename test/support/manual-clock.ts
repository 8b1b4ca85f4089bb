import type { Clock } from '../../src/clock';

/** The one clock tests move by hand: a `Clock` for anything that takes one, plus `advance`. */
export type ManualClock = Clock & { advance(ms: number): void };

/** Starts on a whole second, so TTL edges (stored in whole seconds) fall on exact boundaries. */
export function manualClock(start = 1_800_000_000_000): ManualClock {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
