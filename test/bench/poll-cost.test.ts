import { asyncResultCost, pollsUntilDone, sleepingLoopCost, taskCost, type CostInputs } from '../../bench/poll-cost';
import { DEFAULT_POLL_SCHEDULE } from '../../src/verification/poll-schedule';

const inputs = (taskSeconds: number, overrides: Partial<CostInputs> = {}): CostInputs => ({
  taskSeconds,
  syncBudgetMs: 5000,
  schedule: DEFAULT_POLL_SCHEDULE,
  pollInvocationMs: 10,
  invokerOverheadMs: 20,
  pollCallMs: 10,
  sleepIntervalSeconds: 2,
  ...overrides,
});

describe('pollsUntilDone', () => {
  it('counts polls up to the first one at or after the task ends (polls at 2, 6, 14, 30, 62, 122 … s)', () => {
    expect(pollsUntilDone(DEFAULT_POLL_SCHEDULE, 5)).toBe(2);
    expect(pollsUntilDone(DEFAULT_POLL_SCHEDULE, 6)).toBe(2);
    expect(pollsUntilDone(DEFAULT_POLL_SCHEDULE, 55)).toBe(5);
    expect(pollsUntilDone(DEFAULT_POLL_SCHEDULE, 595)).toBe(14);
  });

  it('needs no poll for a task that was done within the sync budget', () => {
    expect(pollsUntilDone(DEFAULT_POLL_SCHEDULE, 0)).toBe(0);
    expect(pollsUntilDone(DEFAULT_POLL_SCHEDULE, -3)).toBe(0);
  });

  it('refuses a task that outlives the poll deadline', () => {
    expect(() => pollsUntilDone(DEFAULT_POLL_SCHEDULE, 4000)).toThrow(RangeError);
  });
});

describe('asyncResultCost', () => {
  it('bills the invoker for the sync-budget wait and each poll as its own short invocation', () => {
    // Act
    const cost = asyncResultCost(inputs(60));
    // Assess: 5 s wait + 20 ms, then 5 polls of 10 ms
    expect(cost).toEqual({ invocations: 6, polls: 5, billedMs: 5020 + 50, followingBilledMs: 50 });
  });

  it('rounds each invocation up to the millisecond, as Lambda bills', () => {
    const cost = asyncResultCost(inputs(10, { pollInvocationMs: 3.2, invokerOverheadMs: 0.5 }));
    expect(cost.followingBilledMs).toBe(2 * 4);
    expect(cost.billedMs).toBe(5001 + 8);
  });

  it('answers a task shorter than the budget in the invoker alone', () => {
    expect(asyncResultCost(inputs(3))).toEqual({ invocations: 1, polls: 0, billedMs: 3020, followingBilledMs: 0 });
  });
});

describe('sleepingLoopCost', () => {
  it('bills one invocation for the whole wait, a poll every 2 s until the task is done', () => {
    // Act
    const cost = sleepingLoopCost(inputs(10));
    // Assess: 5 s remain after acceptance → 3 sleeps of 2 s, each followed by a 10 ms poll
    expect(cost).toEqual({ invocations: 1, polls: 3, billedMs: 5020 + 3 * 2010, followingBilledMs: 3 * 2010 });
  });
});

describe('taskCost', () => {
  it('compares the designs both after acceptance and over the whole task', () => {
    const cost = taskCost(inputs(600));
    expect(cost.followingRatio).toBeCloseTo(cost.sleepingLoop.followingBilledMs / cost.asyncResult.followingBilledMs);
    expect(cost.totalRatio).toBeCloseTo(cost.sleepingLoop.billedMs / cost.asyncResult.billedMs);
    expect(cost.followingRatio).toBeGreaterThan(cost.totalRatio);
  });
});
