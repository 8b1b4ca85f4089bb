import { executionAgentsFromEnv } from '../../../src/protocols/agents-from-env';
import { createLogger } from '../../../src/observability/logger';

/** The default execution agent from TRANSPORT / EXECUTION_PROTOCOL / … (or EXECUTION_AGENTS). */
export function defaultAgentFromEnv() {
  return executionAgentsFromEnv(process.env, { log: createLogger('transport') }).default;
}
