import type { ContextEntity } from '../../contract';
import type { Records } from '../stores/records';
import { STATE_KEYS } from '../stores/state-keys';

/**
 * What each user is looking at (`app_context_changed`), kept so their next task tells the agent
 * what "this" is (docs/contract.md, "Context"). slack-events writes it; agent-invoker reads it for
 * a task in the agent's DM. It is a view, not a memory: it lasts an hour after the last change.
 */
export const USER_CONTEXT_TTL_SECONDS = 60 * 60;

export type UserContext = { entities: ContextEntity[] };

export function createUserContexts(records: Records) {
  const key = (teamId: string, userId: string) => `${STATE_KEYS.context.prefix}${teamId}#${userId}`;
  return {
    async remember(teamId: string, userId: string, context: UserContext): Promise<void> {
      await records.put(key(teamId, userId), context, USER_CONTEXT_TTL_SECONDS);
    },
    async current(teamId: string, userId: string): Promise<UserContext | undefined> {
      const context = await records.get<UserContext>(key(teamId, userId));
      return context?.entities.length ? context : undefined;
    },
  };
}

export type UserContexts = ReturnType<typeof createUserContexts>;
