import { httpsTransport } from '../test/support/transports';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpsTransport } from '../src/transport/https';
import { sleep } from '../src/transport/retry';
import { summarize, type Summary } from './stats';

/**
 * Part 8: how soon a call ends once its own bound is reached — the figures the tests no longer
 * assert (a test waits for the event; this says how long it took). Each row: the bound, and the
 * time from the call's start to its end, over `rounds` calls on loopback.
 */
export type BoundedWaitRow = { name: string; what: string; boundMs: number; endedMs: Summary };
export type BoundedWaitsResult = { rounds: number; rows: BoundedWaitRow[] };

export type BoundedWaitsOptions = { rounds: number; log: (line: string) => void };

const TIMEOUT_MS = 150;
const ABORT_AFTER_MS = 20;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/invocations`;
}

async function timed(rounds: number, call: () => Promise<unknown>): Promise<Summary> {
  const ended: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await call().catch(() => undefined);
    ended.push(performance.now() - started);
  }
  return summarize(ended);
}

export async function runBoundedWaits(options: BoundedWaitsOptions): Promise<BoundedWaitsResult> {
  // A server that takes the request and never answers; one that answers 503 (the transport backs off).
  const hung = createServer(() => undefined);
  const busy = createServer((_request, response) => response.writeHead(503, { 'content-type': 'application/json' }).end('{}'));
  try {
    const hungUrl = await listen(hung);
    const busyUrl = await listen(busy);
    const key = { sessionKey: 'bench-session-0000000000000000000000000' };
    const rows: BoundedWaitRow[] = [];
    const add = (row: BoundedWaitRow) => {
      rows.push(row);
      options.log(`  ${row.name}: ended after ${row.endedMs.median.toFixed(1)} ms (bound ${row.boundMs} ms)`);
    };
    const timeout = httpsTransport({ url: hungUrl, timeoutMs: TIMEOUT_MS, maxAttempts: 1 });
    add({ name: 'https call, no answer', what: 'HttpsTransport against a server that never answers, timeoutMs 150', boundMs: TIMEOUT_MS, endedMs: await timed(options.rounds, () => timeout.send('{}', key)) });
    const backoff = httpsTransport({ url: busyUrl, baseDelayMs: 3_600_000, maxDelayMs: 3_600_000, random: () => 0.5 });
    add({ name: 'https backoff, caller gives up', what: "a 503, then an hour's backoff ended by the caller's signal after 150 ms", boundMs: TIMEOUT_MS, endedMs: await timed(options.rounds, () => backoff.send('{}', { ...key, signal: AbortSignal.timeout(TIMEOUT_MS) })) });
    add({ name: 'sleep, aborted', what: "an hour's sleep (src/transport/retry.ts) whose signal aborts after 20 ms", boundMs: ABORT_AFTER_MS, endedMs: await timed(options.rounds, () => sleep(3_600_000, AbortSignal.timeout(ABORT_AFTER_MS))) });
    return { rounds: options.rounds, rows };
  } finally {
    hung.closeAllConnections();
    busy.closeAllConnections();
    await Promise.all([hung, busy].map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
