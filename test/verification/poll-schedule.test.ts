import { pollDelaySeconds, pollTimeline } from '../../src/verification/poll-schedule';

describe('poll schedule', () => {
  const schedule = { firstDelaySeconds: 2, factor: 2, maxDelaySeconds: 60, deadlineSeconds: 300 };

  it('backs off exponentially from the first delay up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((attempt) => pollDelaySeconds(schedule, attempt))).toEqual([2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it('stays inside SQS\'s 0–900 s per-message delay', () => {
    expect(pollDelaySeconds({ ...schedule, maxDelaySeconds: 5000 }, 20)).toBe(900);
  });

  it('lists poll times until the deadline', () => {
    expect(pollTimeline(schedule)).toEqual([2, 6, 14, 30, 62, 122, 182, 242]);
  });
});
