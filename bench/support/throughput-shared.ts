/**
 * What part 3's orchestrator (runtime-throughput.ts, report.ts) shares with its two children
 * (peers/servers.ts, peers/load.ts), without their packages: bench/peers/ alone loads what
 * bench/package.json installs, and is only bundled by path, so everything else of the bench, and
 * the tests of it, typecheck and run from the project's own `npm ci`.
 */

/** The servers part 3 compares (see servers.ts). */
export const SERVER_KINDS = ['ours', 'jayson', 'json-rpc-2.0', 'bare'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/** What the load generator (load.ts) is asked to do. */
export type LoadOptions = {
  url: string;
  connections: number;
  durationSeconds: number;
  /** The body with `"__ID__"` where the id goes. */
  bodyTemplate: string;
  /** Ids start here, so warm-up and measured runs never repeat one. */
  firstId: number;
};

/** What it reports, as one JSON line. */
export type LoadFigures = {
  requestsPerSecond: number;
  totalRequests: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSeconds: number;
};

export const ID_PLACEHOLDER = '"__ID__"';

/** A UUID v4-shaped id for request number n. */
export function requestIdFor(n: number): string {
  const hex = n.toString(16).padStart(12, '0').slice(-12);
  return `00000000-0000-4000-8000-${hex}`;
}
