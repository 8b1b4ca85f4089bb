import { loadExecutionConfig } from '../src/execution/config';
import { DEFAULT_STREAM_HOLD_S, DEFAULT_STREAM_QUIET_S } from '../src/transport/config';
import { loadVerificationConfig, pollScheduleOf } from '../src/verification/config';
import { pollDelaySeconds, pollTimeline, type PollSchedule } from '../src/verification/poll-schedule';
import type { Summary } from './stats';

/**
 * Part 5: what following a long task costs in Lambda invocations and billed milliseconds.
 *
 * The async-result design: agent-invoker sends execute_task and waits for the execution zone's
 * answer, which comes at the sync budget (SYNC_BUDGET_MS) as `accepted`; then each poll is one
 * short async-result invocation fed by a delayed SQS message, at the real schedule's times
 * (pollTimeline with the default verification config), until the first poll at or after the
 * task's end. The alternative: the same first call, then the same function sleeps and polls every
 * 2 s until the task is done, billed for the whole wait. Lambda bills each invocation's duration
 * rounded up to the millisecond; slack-events and slack-poster cost the same in both designs and
 * are left out, as are cold starts (one per container in either design).
 */

export type CostInputs = {
  taskSeconds: number;
  /** How long execute_task holds the invoker before answering `accepted` (SYNC_BUDGET_MS). */
  syncBudgetMs: number;
  schedule: PollSchedule;
  /** Billed per async-result invocation (one get_task_result + one SQS send), before rounding. */
  pollInvocationMs: number;
  /** The invoker's own work on top of waiting for the answer (its warm handler time). */
  invokerOverheadMs: number;
  /** One get_task_result inside the sleeping function. */
  pollCallMs: number;
  sleepIntervalSeconds: number;
};

export type DesignCost = {
  invocations: number;
  polls: number;
  /** Everything billed, invoker included. */
  billedMs: number;
  /** Billed after the task was accepted: what following it costs. */
  followingBilledMs: number;
};

export type TaskCost = { taskSeconds: number; asyncResult: DesignCost; sleepingLoop: DesignCost; totalRatio: number; followingRatio: number };

const billed = (ms: number) => Math.ceil(ms);

/** Polls async-result makes for a task that ends `remainingSeconds` after it was accepted (the last one finds it done). */
export function pollsUntilDone(schedule: PollSchedule, remainingSeconds: number): number {
  if (remainingSeconds <= 0) return 0;
  const timeline = pollTimeline(schedule);
  const index = timeline.findIndex((at) => at >= remainingSeconds);
  if (index === -1) throw new RangeError(`a task ending ${remainingSeconds} s after acceptance outlives the poll deadline (${schedule.deadlineSeconds} s)`);
  return index + 1;
}

export function asyncResultCost(inputs: CostInputs): DesignCost {
  const taskMs = inputs.taskSeconds * 1000;
  const invokerMs = billed(Math.min(taskMs, inputs.syncBudgetMs) + inputs.invokerOverheadMs);
  const polls = pollsUntilDone(inputs.schedule, (taskMs - inputs.syncBudgetMs) / 1000);
  const followingBilledMs = polls * billed(inputs.pollInvocationMs);
  return { invocations: 1 + polls, polls, billedMs: invokerMs + followingBilledMs, followingBilledMs };
}

export function sleepingLoopCost(inputs: CostInputs): DesignCost {
  const taskMs = inputs.taskSeconds * 1000;
  const waitMs = Math.min(taskMs, inputs.syncBudgetMs) + inputs.invokerOverheadMs;
  const remainingMs = Math.max(0, taskMs - inputs.syncBudgetMs);
  // Sleep, poll, and again, until a poll finds the task done.
  const polls = Math.ceil(remainingMs / (inputs.sleepIntervalSeconds * 1000));
  const followingMs = polls * (inputs.sleepIntervalSeconds * 1000 + inputs.pollCallMs);
  const total = billed(waitMs + followingMs);
  return { invocations: 1, polls, billedMs: total, followingBilledMs: total - billed(waitMs) };
}

export function taskCost(inputs: CostInputs): TaskCost {
  const asyncResult = asyncResultCost(inputs);
  const sleepingLoop = sleepingLoopCost(inputs);
  return {
    taskSeconds: inputs.taskSeconds,
    asyncResult,
    sleepingLoop,
    totalRatio: sleepingLoop.billedMs / asyncResult.billedMs,
    followingRatio: asyncResult.followingBilledMs === 0 ? Infinity : sleepingLoop.followingBilledMs / asyncResult.followingBilledMs,
  };
}

export const TASK_SECONDS = [10, 60, 600] as const;

export type PollCostResult = {
  schedule: PollSchedule;
  timeline: number[];
  delays: number[];
  syncBudgetMs: number;
  sleepIntervalSeconds: number;
  warmPollHandler: Summary;
  warmInvokerHandler: Summary;
  pollInvocationMs: number;
  invokerOverheadMs: number;
  measured: TaskCost[];
  /** The same with a stated per-poll figure closer to a real AWS round trip (AgentCore + SQS). */
  assumedPollMs: number;
  assumed: TaskCost[];
  /** Whole-task ratio if execute_task answered `accepted` sooner (SYNC_BUDGET_MS), measured per-poll figures. */
  budgetSensitivity: Array<{ syncBudgetMs: number; costs: TaskCost[] }>;
};

export type PollCostOptions = { warmRuns: number; workDir: string; assumedPollMs: number; log: (line: string) => void };

export async function runPollCost(options: PollCostOptions): Promise<PollCostResult> {
  const schedule = pollScheduleOf(loadVerificationConfig({}));
  // How long the invoker waits on a task that writes nothing: a held stream is let go after
  // STREAM_QUIET_S (held streams are the default); a plain call answers `accepted` at the sync budget.
  const syncBudgetMs = DEFAULT_STREAM_HOLD_S > 0 ? DEFAULT_STREAM_QUIET_S * 1000 : loadExecutionConfig({}).SYNC_BUDGET_MS;
  // Loaded here, not at the top: the arithmetic above stays importable without esbuild or fakes.
  const { measureWarmHandlers } = await import('./cold-start');
  const warm = await measureWarmHandlers(['async-result', 'agent-invoker'], options.warmRuns, options.workDir);
  const warmPollHandler = warm['async-result']!;
  const warmInvokerHandler = warm['agent-invoker']!;
  const pollInvocationMs = billed(warmPollHandler.median);
  const invokerOverheadMs = billed(warmInvokerHandler.median);
  const inputsFor = (taskSeconds: number, pollMs: number, budgetMs = syncBudgetMs): CostInputs => ({
    taskSeconds,
    syncBudgetMs: budgetMs,
    schedule,
    pollInvocationMs: pollMs,
    invokerOverheadMs,
    pollCallMs: pollMs,
    sleepIntervalSeconds: 2,
  });
  const measured = TASK_SECONDS.map((seconds) => taskCost(inputsFor(seconds, pollInvocationMs)));
  const assumed = TASK_SECONDS.map((seconds) => taskCost(inputsFor(seconds, options.assumedPollMs)));
  for (const cost of measured) {
    options.log(
      `  ${cost.taskSeconds} s task: async-result ${cost.asyncResult.invocations} invocations, ${cost.asyncResult.billedMs} ms billed (${cost.asyncResult.followingBilledMs} ms after acceptance); sleeping loop ${cost.sleepingLoop.billedMs} ms`,
    );
  }
  const timeline = pollTimeline(schedule);
  return {
    schedule,
    timeline,
    delays: timeline.map((_, attempt) => pollDelaySeconds(schedule, attempt)),
    syncBudgetMs,
    sleepIntervalSeconds: 2,
    warmPollHandler,
    warmInvokerHandler,
    pollInvocationMs,
    invokerOverheadMs,
    measured,
    assumedPollMs: options.assumedPollMs,
    assumed,
    budgetSensitivity: [0, 1000, syncBudgetMs].map((budgetMs) => ({ syncBudgetMs: budgetMs, costs: TASK_SECONDS.map((seconds) => taskCost(inputsFor(seconds, pollInvocationMs, budgetMs))) })),
  };
}
