import { A2aProtocol, type A2aVersionResolver } from './a2a';
import type { A2aVersion } from './a2a-dialects';
import { ExecuteTaskProtocol } from './execute-task';
import type { ExecutionProtocol, ProtocolName } from './protocol';
import { SimpleA2aProtocol } from './simple-a2a';

export const PROTOCOL_NAMES = ['execute-task', 'a2a', 'simple-a2a'] as const satisfies readonly ProtocolName[];

export type ProtocolOptions = {
  /** a2a only: the dialect, or a resolver that reads it from the agent card. Default '1.0'. */
  a2aVersion?: A2aVersion | A2aVersionResolver;
  /** a2a only: ask the agent to hold its answer until the task is done. Default false. */
  a2aBlocking?: boolean;
};

export function createProtocol(name: ProtocolName, options: ProtocolOptions = {}): ExecutionProtocol {
  switch (name) {
    case 'execute-task':
      return new ExecuteTaskProtocol();
    case 'a2a':
      return new A2aProtocol({
        ...(options.a2aVersion !== undefined ? { version: options.a2aVersion } : {}),
        ...(options.a2aBlocking !== undefined ? { blocking: options.a2aBlocking } : {}),
      });
    case 'simple-a2a':
      return new SimpleA2aProtocol();
    default:
      throw new Error(`unknown execution protocol ${JSON.stringify(name satisfies never)}`);
  }
}
