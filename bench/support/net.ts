import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Loopback helpers and placeholders shared by the parts (no heavy imports: child bundles use it). */
export const RUNTIME_ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/bench_exec-AbCdEf1234';

/** Placeholder credentials, as Lambda hands them to a function through the environment. */
export const PLACEHOLDER_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDBENCHBENCHBENCH',
  AWS_SECRET_ACCESS_KEY: 'bench-secret-access-key',
  AWS_SESSION_TOKEN: 'bench-session-token',
  AWS_EC2_METADATA_DISABLED: 'true',
} as const;

export async function listen(server: Server, port = 0): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
