import { loadExecutionConfig } from '../../src/execution/config';
import { createExecutionHttpServer } from '../../src/execution/hosts/http-host';
import { createExecutionRuntime, type ExecutionRuntime, type RuntimeParts } from '../../src/execution/runtime';
import { closeServer, listenOnLoopback } from './http';

export type RunningRuntime = { runtime: ExecutionRuntime; baseUrl: string; invocationsUrl: string; close(): Promise<void> };

/** A real execution runtime HTTP host on 127.0.0.1 (echo executor unless parts say otherwise). */
export async function startExecutionRuntime(env: Record<string, string> = {}, parts: Omit<RuntimeParts, 'config'> = {}): Promise<RunningRuntime> {
  const runtime = createExecutionRuntime({ config: loadExecutionConfig(env), ...parts });
  const server = createExecutionHttpServer(runtime);
  const baseUrl = await listenOnLoopback(server);
  return { runtime, baseUrl, invocationsUrl: `${baseUrl}/invocations`, close: () => closeServer(server) };
}
