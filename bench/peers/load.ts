import autocannon from 'autocannon';
import { ID_PLACEHOLDER, requestIdFor, type LoadFigures, type LoadOptions } from '../support/throughput-shared';

/**
 * The load generator, in its own process so it can be pinned to a core of its own (bundled
 * like the servers; see runtime-throughput.ts).
 *
 * Every request is a 1 KiB `execute_task` with a fresh UUID-shaped string id (the runtime treats a
 * repeated id as the same task, so a fixed id would measure its repeat cache, not its work). The
 * id is spliced into a pre-serialized body, so the generator does next to no work per request.
 * Writes autocannon's figures as one JSON line on stdout.
 */
export async function runLoad(options: LoadOptions): Promise<LoadFigures> {
  const [prefix, suffix] = options.bodyTemplate.split(ID_PLACEHOLDER);
  if (prefix === undefined || suffix === undefined) throw new Error(`the body template has no ${ID_PLACEHOLDER}`);
  let next = options.firstId;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    pipelining: 1,
    requests: [
      {
        method: 'POST',
        path: new URL(options.url).pathname,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        setupRequest: (request) => {
          next += 1;
          return { ...request, body: `${prefix}"${requestIdFor(next)}"${suffix}` };
        },
      },
    ],
  });
  return {
    requestsPerSecond: result.requests.average,
    totalRequests: result.requests.total,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMeanMs: result.latency.average,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSeconds: result.duration,
  };
}

/** The child's entry: options as JSON in argv[2], figures as one JSON line on stdout. */
export function loadFromArgv(argv = process.argv.slice(2)): void {
  const options = JSON.parse(argv[0] ?? '{}') as LoadOptions;
  runLoad(options).then(
    (figures) => {
      process.stdout.write(`${JSON.stringify(figures)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
      process.exit(1);
    },
  );
}
