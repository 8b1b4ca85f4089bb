import { askerOf } from '../../contract';

/**
 * Who asked a queued task (docs/contract.md, "Who is asking"), for every call about it after
 * execute_task — agent-invoker's and async-result's get_task_result and cancel_task, a Stop's
 * cancel: the transport carries it on each as on the first (AgentCore's runtimeUserId, the https
 * header), so a session bound to its user is never called without one.
 */
export function askerCall(task: { team_id: string; user_id: string }): { askerId?: string } {
  const asker = askerOf(task.team_id, task.user_id);
  return asker ? { askerId: asker.id } : {};
}
