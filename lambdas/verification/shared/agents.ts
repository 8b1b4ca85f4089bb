import { executionAgentsFrom } from '../../../src/protocols/agent-config';
import { createLogger } from '../../../src/observability/logger';

/** The default execution agent from TRANSPORT / EXECUTION_PROTOCOL / … (or EXECUTION_AGENTS). */
export function defaultAgentFromEnv() {
  return executionAgentsFrom({ env: process.env }, { log: createLogger('transport') }).default;
}
