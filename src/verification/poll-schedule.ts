import { clampDelaySeconds } from '../queue/queue';

/**
 * When async-result polls a pending task: first delay, then ×factor per poll up to a cap, until
 * a deadline counted from acceptance. Each poll is one short invocation fed by a delayed SQS
 * message; nothing sleeps inside a function.
 */
export type PollSchedule = {
  firstDelaySeconds: number;
  factor: number;
  maxDelaySeconds: number;
  deadlineSeconds: number;
};

export const DEFAULT_POLL_SCHEDULE: PollSchedule = { firstDelaySeconds: 2, factor: 2, maxDelaySeconds: 60, deadlineSeconds: 1800 };

/** The delay before poll number `attempt + 1` (attempt = polls already made), within SQS's 0–900 s. */
export function pollDelaySeconds(schedule: PollSchedule, attempt: number): number {
  const raw = schedule.firstDelaySeconds * schedule.factor ** Math.max(0, attempt);
  return clampDelaySeconds(Math.min(raw, schedule.maxDelaySeconds));
}

/** Seconds since acceptance at which each poll happens, until the deadline (for cost estimates and docs). */
export function pollTimeline(schedule: PollSchedule): number[] {
  const times: number[] = [];
  let elapsed = 0;
  for (let attempt = 0; ; attempt += 1) {
    const delay = pollDelaySeconds(schedule, attempt);
    if (delay === 0 && attempt > 0) break;
    elapsed += delay;
    if (elapsed > schedule.deadlineSeconds) break;
    times.push(elapsed);
  }
  return times;
}

/** The longest one function may run (Lambda's 15 minutes): a task's last poll may still be working that long after its deadline. */
const LONGEST_FUNCTION_SECONDS = 900;

/**
 * How long a task's budget reservation holds (usage-ledger.ts): past the longest a task can live —
 * the poll deadline, plus one function's run after it — no settle can be on its way, so a task
 * that holds still has died (its function killed) and its reservation stops counting.
 */
export function reservationLeaseSeconds(schedule: PollSchedule): number {
  return schedule.deadlineSeconds + LONGEST_FUNCTION_SECONDS;
}
