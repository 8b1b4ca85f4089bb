import type { Usage } from '../../contract';

/**
 * Token usage per UTC day and per team, channel, user and agent (docs/architecture.md §2.7): the
 * counters `zone usage` reports and the daily budgets read. One item per day and scope, changed
 * only by atomic adds, so concurrent tasks never lose a count.
 */
export type UsageScope = 'team' | 'channel' | 'user' | 'agent';
export const USAGE_SCOPES: readonly UsageScope[] = ['team', 'channel', 'user', 'agent'];

/** One counter: a scope (a user: `T…/U…`; a channel: `T…/C…`; a team: `T…`; an agent: its name) on one UTC day. */
export type UsageKey = { day: string; scope: UsageScope; id: string };

export type UsageTotals = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Every token the model read or wrote (the four above): what a budget counts. */
  tokens: number;
  /** Tasks settled (answered, failed or stopped). */
  tasks: number;
  /** Tasks refused by a budget. */
  refused: number;
};

export type UsageRow = UsageKey & UsageTotals;

/** What one settled or refused task adds to a counter. */
export type UsageDelta = {
  usage?: Usage;
  tasks?: number;
  refused?: number;
};

/**
 * A reservation's answer: admitted (holding `estimate` tokens until the task settles or its lease
 * ends), over the limit (refused: `used` tokens so far today), or not yet (the counter is near its
 * limit and another task of this scope is in flight: ask again once it settles).
 */
export type Reservation = { admitted: true; estimate: number } | { admitted: false; over: true; used: number } | { admitted: false; over: false; used: number };

/** What a task holds on a counter: `estimate` tokens, until `leaseUntil` (epoch ms), when it counts no more. */
export type Hold = { request_id: string; estimate: number; leaseUntil: number };

/** One counter a task is charged on, and what it adds there; `held`: the ledger reserved on it. */
export type Charge = { scope: UsageScope; id: string; delta: UsageDelta; held?: boolean };

/**
 * Every write is keyed by its task (docs/architecture.md §2.7, "Keyed by task"): the counter keeps
 * each task's hold (`held`, then `lapsed` once its lease is over) and a mark for each task charged,
 * so a write repeated — a redelivery, or the client sending it again after a lost answer — meets
 * its own change and adds nothing.
 */
export interface UsageStore {
  /**
   * Holds `hold.estimate` tokens for one task against a daily `limit`, atomically: admitted when
   * what is used and held leaves room for it, or when nothing is in flight and less than the limit
   * is used; a task that holds already is admitted again without a second hold. Holds whose lease
   * is over are let go first (they count no more). The estimate is the per-task ceiling
   * (MAX_TASK_TOKENS: no task is charged more), so however many tasks arrive at once the day goes
   * over the limit by at most one task's ceiling.
   */
  reserve(key: UsageKey, limit: number, ttlSeconds: number, hold: Hold): Promise<Reservation>;
  /** Gives back what the task holds on the counter, if it still holds (another budget refused it). */
  release(key: UsageKey, requestId: string, ttlSeconds: number): Promise<void>;
  /**
   * Adds a task's usage (or refusal) to each of its counters of `day`, once per task and counter,
   * giving back its hold there if it still holds one (a hold its lease let go is not given back
   * twice). Each counter keeps the task's mark until `forget`.
   */
  charge(day: string, requestId: string, charges: readonly Charge[], ttlSeconds: number): Promise<void>;
  /** Removes the task's marks once every charge is made (so a counter does not grow with each task). */
  forget(day: string, requestId: string, counters: ReadonlyArray<{ scope: UsageScope; id: string }>): Promise<void>;
  /** Every counter of a day. */
  day(day: string): Promise<UsageRow[]>;
}

/** The UTC day of an epoch-ms time, `YYYY-MM-DD`: budgets reset at midnight UTC. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** The last `count` UTC days, newest first, today included. */
export function lastDays(now: number, count: number): string[] {
  return Array.from({ length: count }, (_, back) => utcDay(now - back * 24 * 60 * 60 * 1000));
}

/** Every token of a usage: input, output and both cache counts. */
export function tokensOf(usage: Usage | undefined): number {
  if (!usage) return 0;
  return usage.input_tokens + usage.output_tokens + (usage.cache_read_tokens ?? 0) + (usage.cache_write_tokens ?? 0);
}

export function emptyTotals(): UsageTotals {
  return { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, tokens: 0, tasks: 0, refused: 0 };
}
