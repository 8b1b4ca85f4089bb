/**
 * Where the local stack listens (docs/local-development.md): the Slack ingress and playground on
 * VERIFICATION_PORT, the execution runtime on EXECUTION_PORT. One home for the two defaults, so
 * `zone start` and the commands that talk to it (`zone say`, `zone usage`, `zone agents`,
 * `zone feedback`) cannot disagree about them.
 */
export const DEFAULT_VERIFICATION_PORT = 3000;
export const DEFAULT_EXECUTION_PORT = 8080;

type PortEnv = Readonly<Record<string, string | undefined>>;

/** VERIFICATION_PORT, or 3000. */
export function verificationPortOf(env: PortEnv): number {
  return Number(env.VERIFICATION_PORT ?? DEFAULT_VERIFICATION_PORT);
}

/** EXECUTION_PORT, or 8080. */
export function executionPortOf(env: PortEnv): number {
  return Number(env.EXECUTION_PORT ?? DEFAULT_EXECUTION_PORT);
}

/**
 * The local stack's base URL for a command that talks to it: `--url` when given, else the
 * loopback address on `--verification-port`, VERIFICATION_PORT or 3000.
 */
export function localStackBase(values: { url?: string; 'verification-port'?: string }, env: PortEnv): string {
  return values.url ?? `http://127.0.0.1:${values['verification-port'] ?? verificationPortOf(env)}`;
}
