import { Method } from '../contract';

/** What `GET /.well-known/agent-card.json` serves: for operators and tooling, never needed by the pipeline. */
export type AgentCard = {
  name: string;
  description: string;
  version: string;
  protocol: 'execute-task';
  protocolVersion: string;
  transport: 'JSONRPC';
  url: string;
  methods: string[];
  /**
   * `streaming`: `execute_task` with `stream: true` hands out text as it is produced, by cursor
   * (docs/contract.md, "Streaming") and, to a caller that reads them, as server-sent events ("Streamed answers").
   */
  capabilities: { asyncTasks: boolean; cancellation: boolean; batch: boolean; streaming: boolean };
  /**
   * The zone contract's conformance levels this agent passes (docs/contract.md, "Versioning and
   * levels"): `zone conformance` checks core and each of these.
   */
  zone_contract: { levels: string[] };
  executor: string;
};

export const CONTRACT_VERSION = '1.0';

export function agentCard(options: { name: string; version: string; executor: string; url?: string }): AgentCard {
  return {
    name: options.name,
    description: 'Execution zone of a Slack AI assistant: runs tasks sent as JSON-RPC 2.0 execute_task requests.',
    version: options.version,
    protocol: 'execute-task',
    protocolVersion: CONTRACT_VERSION,
    transport: 'JSONRPC',
    url: options.url ?? '/invocations',
    methods: Object.values(Method),
    capabilities: { asyncTasks: true, cancellation: true, batch: true, streaming: true },
    zone_contract: { levels: ['core', 'thread-context', 'attachments', 'context', 'streaming', 'cancel', 'usage', 'files', 'steps', 'asker', 'questions'] },
    executor: options.executor,
  };
}
