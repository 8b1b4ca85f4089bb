import type { TransportKind } from '../transport/transport';
import { CASES, type CaseContext, type ConformanceCase, type ConformanceSettings, type SharedState } from './cases';
import { AgentUnreachable, CaseFailure, NotApplicable, NotExercised } from './checks';
import type { Probe } from './probe';

/**
 * Runs the contract's cases against one agent, one after another (later cases build on the task
 * an earlier one had accepted, and one exchange at a time keeps each failure attributable).
 */
export type CaseStatus = 'pass' | 'fail' | 'warn' | 'skip';

export type CaseResult = {
  id: string;
  expectation: string;
  status: CaseStatus;
  /** What went wrong (fail, warn), why it did not run (skip), or a note on a pass. */
  detail?: string;
  /** Why the case matters; set when it did not pass. */
  why?: string;
  ms: number;
};

export type ConformanceReport = {
  target: string;
  transport: TransportKind;
  results: CaseResult[];
  /** True when no case failed: warnings and skips do not count against the agent. */
  conforms: boolean;
  /** Set when the run stopped early because the agent could not be reached. */
  stopped?: string;
};

export type ConformanceOptions = {
  /** Default: a text with `#sleep=<slowMs>`, which the reference runtime and the examples obey. */
  slowText?: string;
  slowMs?: number;
  /** A slow task answered at once fails the async cases instead of warning. */
  requireAsync?: boolean;
  pollIntervalMs?: number;
  /** Default: slowMs + 30 s. */
  pollTimeoutMs?: number;
  /** Only cases whose id starts with one of these. */
  only?: string[];
  cases?: readonly ConformanceCase[];
  onResult?: (result: CaseResult) => void;
  signal?: AbortSignal;
};

export const DEFAULT_SLOW_MS = 8_000;

export function slowTextFor(slowMs: number): string {
  return `conformance check: a slow task #sleep=${slowMs}`;
}

export function selectCases(options: Pick<ConformanceOptions, 'only' | 'cases'> = {}): readonly ConformanceCase[] {
  const all = options.cases ?? CASES;
  const only = options.only?.filter(Boolean) ?? [];
  if (!only.length) return all;
  return all.filter((c) => only.some((prefix) => c.id === prefix || c.id.startsWith(prefix)));
}

export async function runConformance(probe: Probe, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const slowMs = options.slowMs ?? DEFAULT_SLOW_MS;
  const settings: ConformanceSettings = {
    slowText: options.slowText ?? slowTextFor(slowMs),
    pollIntervalMs: options.pollIntervalMs ?? 250,
    pollTimeoutMs: options.pollTimeoutMs ?? slowMs + 30_000,
  };
  const shared: SharedState = {};
  const ctx: CaseContext = {
    transport: probe.transport,
    settings,
    send: (body) => probe.send(body, options.signal),
    sendBytes: probe.sendBytes,
    shared,
    signal: options.signal,
  };
  const results: CaseResult[] = [];
  let stopped: string | undefined;
  for (const c of selectCases(options)) {
    if (options.signal?.aborted) break;
    const { result, unreachable } = await runCase(c, ctx, options.requireAsync ?? false);
    results.push(result);
    options.onResult?.(result);
    if (unreachable) {
      // Every later case would fail the same way; where the silence began is the clue to a crash.
      stopped =
        results.length === 1
          ? `could not reach the agent: ${result.detail}`
          : `the agent stopped answering at ${result.id} (did that case, or the one before, bring it down?): ${result.detail}`;
      break;
    }
  }
  return { target: probe.target, transport: probe.transport, results, conforms: !stopped && results.every((r) => r.status !== 'fail'), ...(stopped ? { stopped } : {}) };
}

async function runCase(c: ConformanceCase, ctx: CaseContext, requireAsync: boolean): Promise<{ result: CaseResult; unreachable: boolean }> {
  const started = performance.now();
  const done = (status: CaseStatus, detail?: string, unreachable = false) => ({
    result: {
      id: c.id,
      expectation: c.expectation,
      status,
      ...(detail ? { detail } : {}),
      ...(status === 'pass' || status === 'skip' ? {} : { why: c.why }),
      ms: Math.round(performance.now() - started),
    },
    unreachable,
  });
  try {
    const note = await c.run(ctx);
    return done('pass', note || undefined);
  } catch (error) {
    if (error instanceof AgentUnreachable) return done('fail', error.message, true);
    if (error instanceof NotApplicable) return done('skip', error.message);
    if (error instanceof NotExercised) {
      const strict = requireAsync && c.async;
      return done(strict ? 'fail' : 'warn', `not exercised: ${error.message}${strict ? ' (--require-async)' : ''}`);
    }
    if (error instanceof CaseFailure) return done(c.required ? 'fail' : 'warn', error.message);
    // A bug in a case or an abort: report it on the case rather than losing the whole run.
    return done('fail', `the check itself failed: ${(error as Error).message ?? String(error)}`);
  }
}
