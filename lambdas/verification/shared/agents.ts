import { executionAgentsFrom, type ExecutionAgents } from '../../../src/protocols/agent-config';
import { createLogger } from '../../../src/observability/logger';

/** Every execution agent from EXECUTION_AGENTS (or the one of TRANSPORT / EXECUTION_PROTOCOL / …). */
export function executionAgentsFromEnv(): ExecutionAgents {
  return executionAgentsFrom({ env: process.env }, { log: createLogger('transport') });
}

