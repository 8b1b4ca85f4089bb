import type { Clock } from '../../src/clock';
import type { TaskRecord } from '../../src/execution/stores/task-store';

/** Task records stamped with `clock`'s time that live `ttlSeconds`: `accepted` unless `overrides` say otherwise. */
export function recordsOn(clock: Clock, ttlSeconds: number): (taskId: string, overrides?: Partial<TaskRecord>) => TaskRecord {
  return (taskId, overrides = {}) => ({
    task_id: taskId,
    status: 'accepted',
    created_at: clock.now(),
    updated_at: clock.now(),
    expires_at: Math.floor(clock.now() / 1000) + ttlSeconds,
    ...overrides,
  });
}
