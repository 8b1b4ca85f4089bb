import type { Records } from '../stores/records';
import type { Charge, UsageStore } from '../stores/usage-store';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * Used by usage-ledger.ts (a task's settlement, a budget's refusal): charges a task on its counters
 * exactly once, however often it is delivered and whatever answers are lost on the way. A record
 * `<kind>-counted#<request id>` walks `charging` → `charged` → `done`: while `charging`, each
 * counter is charged keyed by the task (a counter that has its mark is skipped); once all are,
 * the marks are removed (`charged`), then the record says `done` and later deliveries do nothing.
 */
export type CountOnceOptions = { usage: UsageStore; records: Records; usageTtlSeconds: number; recordTtlSeconds: number };

type CountState = 'charging' | 'charged' | 'done';

/** True when this call made the charges (so the caller logs and audits them once). */
export async function countOnce(options: CountOnceOptions, kind: 'usage' | 'refusal', requestId: string, day: string, charges: readonly Charge[]): Promise<boolean> {
  const { usage, records } = options;
  const key = `${STATE_KEYS[kind === 'usage' ? 'usageCounted' : 'refusalCounted'].prefix}${requestId}`;
  const mark = (state: CountState) => records.put(key, { request_id: requestId, state }, options.recordTtlSeconds);
  const claimed = await records.putIf(key, { request_id: requestId, state: 'charging' }, options.recordTtlSeconds, { field: 'request_id', expected: undefined });
  // Not claimed: another delivery got there first, or this one's claim landed and its answer was lost. A record with no state is from before states: done.
  const state: CountState = claimed ? 'charging' : ((await records.get<{ state?: CountState }>(key))?.state ?? 'done');
  if (state === 'done') return false;
  if (state === 'charging') {
    await usage.charge(day, requestId, charges, options.usageTtlSeconds);
    await mark('charged');
  }
  await usage.forget(day, requestId, charges);
  await mark('done');
  return state === 'charging';
}
