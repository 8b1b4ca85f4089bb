import { RateLimiter } from '../../../src/verification/intake/rate-limiter';
import type { CounterStore } from '../../../src/verification/stores/counter-store';
import { MemoryCounterStore } from '../../../src/verification/stores/memory-counter-store';
import { manualClock } from '../../support/manual-clock';

// The limiter is tested over the memory counter store; counter-store.test.ts shows DynamoDB agrees.
const MINUTE = 60_000;
const windowStart = 29_000_000 * MINUTE; // an exact window boundary
const alice = { teamId: 'T1', userId: 'U-alice' };

describe('RateLimiter', () => {
  it('allows up to the limit, refuses after, and flags only the first refusal in the window', async () => {
    // Prepare
    const limiter = new RateLimiter({ counters: new MemoryCounterStore({ clock: manualClock(windowStart) }), perMinute: 3 });
    // Act
    const decisions = [];
    for (let i = 0; i < 6; i += 1) decisions.push(await limiter.check(alice, windowStart + i * 1000, `Ev${i}`));
    // Assess
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false, false]);
    expect(decisions.map((d) => d.count)).toEqual([1, 2, 3, 4, 5, 6]);
    // The user is told once per window, not once per message.
    expect(decisions.map((d) => d.firstRefusalInWindow)).toEqual([false, false, false, true, false, false]);
    expect(decisions.every((d) => d.limit === 3 && d.windowEndsAt === windowStart + MINUTE)).toBe(true);
  });

  it('starts afresh in the next window, and can tell the user again there', async () => {
    const limiter = new RateLimiter({ counters: new MemoryCounterStore({ clock: manualClock(windowStart) }), perMinute: 1 });
    await limiter.check(alice, windowStart, 'Ev-1');
    expect(await limiter.check(alice, windowStart + MINUTE - 1, 'Ev-2')).toMatchObject({ allowed: false, firstRefusalInWindow: true });

    const next = await limiter.check(alice, windowStart + MINUTE, 'Ev-3');
    expect(next).toMatchObject({ allowed: true, count: 1, windowEndsAt: windowStart + 2 * MINUTE });
    expect(await limiter.check(alice, windowStart + MINUTE + 1, 'Ev-4')).toMatchObject({ allowed: false, firstRefusalInWindow: true });
  });

  it('counts an event checked twice once, and gives it the same decision (issue 25: a resent counter write)', async () => {
    const limiter = new RateLimiter({ counters: new MemoryCounterStore({ clock: manualClock(windowStart) }), perMinute: 1 });
    const first = await limiter.check(alice, windowStart, 'EvA');
    expect(await limiter.check(alice, windowStart + 1, 'EvA')).toEqual(first);
    expect(first).toMatchObject({ allowed: true, count: 1 });
    const refused = await limiter.check(alice, windowStart + 2, 'EvB');
    expect(refused).toMatchObject({ allowed: false, count: 2, firstRefusalInWindow: true });
    expect(await limiter.check(alice, windowStart + 3, 'EvB')).toEqual(refused);
  });

  it('counts each team and user separately', async () => {
    const limiter = new RateLimiter({ counters: new MemoryCounterStore({ clock: manualClock(windowStart) }), perMinute: 1 });
    await limiter.check(alice, windowStart, 'Ev-5');
    expect((await limiter.check({ teamId: 'T1', userId: 'U-bob' }, windowStart, 'Ev-6')).allowed).toBe(true);
    expect((await limiter.check({ teamId: 'T2', userId: 'U-alice' }, windowStart, 'Ev-7')).allowed).toBe(true);
    expect((await limiter.check(alice, windowStart, 'Ev-8')).allowed).toBe(false);
  });

  it('asks the store for a key per team, user and window, with a TTL outliving the window', async () => {
    const calls: Array<[string, number, unknown]> = [];
    const counters: CounterStore = { increment: async (key, ttl, once) => (calls.push([key, ttl, once]), 1) };
    await new RateLimiter({ counters, perMinute: 5 }).check(alice, windowStart + 5_000, 'Ev1');
    // The event id is what is counted; it is remembered as far as the decision depends on the count.
    expect(calls).toEqual([[`rate#T1#U-alice#${windowStart / MINUTE}`, 120, { token: 'Ev1', upTo: 6 }]]);
  });

  it.each([0, undefined])('with perMinute %p allows everything without touching the store', async (perMinute) => {
    const counters: CounterStore = { increment: () => Promise.reject(new Error('the store must not be called')) };
    const decision = await new RateLimiter({ counters, ...(perMinute === undefined ? {} : { perMinute }) }).check(alice, windowStart, 'Ev1');
    expect(decision).toEqual({ allowed: true, count: 0, limit: Infinity, firstRefusalInWindow: false, windowEndsAt: windowStart + MINUTE });
  });

  it('refuses a nonsensical limit at construction', () => {
    expect(() => new RateLimiter({ counters: new MemoryCounterStore(), perMinute: -1 })).toThrow(RangeError);
  });
});
