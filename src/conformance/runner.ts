import type { TransportKind } from '../transport/transport';
import { CASES, type CaseContext, type ConformanceCase, type ConformanceSettings, type SharedState } from './cases';
import { AgentUnreachable, CaseFailure, NotApplicable, NotExercised } from './checks';
import { LEVELS, checkedLevels, planLevels, type DeclaredBy, type Level, type LevelPlan } from './levels';
import type { Probe } from './probe';

/**
 * Runs the contract's cases against one agent, one after another (later cases build on the task
 * an earlier one had accepted, and one exchange at a time keeps each failure attributable): the
 * core level's, then those of each capability level the agent declares (levels.ts).
 */
export type CaseStatus = 'pass' | 'fail' | 'warn' | 'skip';

export type CaseResult = {
  id: string;
  level: Level;
  expectation: string;
  status: CaseStatus;
  /** What went wrong (fail, warn), why it did not run (skip), or a note on a pass. */
  detail?: string;
  /** Why the case matters; set when it did not pass. */
  why?: string;
  ms: number;
};

/** One level's verdict: `skipped` when the agent does not declare it (its cases did not run). */
export type LevelResult = {
  level: Level;
  declaredBy?: DeclaredBy;
  status: 'pass' | 'fail' | 'skipped' | 'not run';
  counts: Record<CaseStatus, number>;
};

export type ConformanceReport = {
  target: string;
  transport: TransportKind;
  /** What the kit made of the agent card. */
  card: string;
  levels: LevelResult[];
  results: CaseResult[];
  /** True when no case of core or of a declared level failed: warnings and skips do not count against the agent. */
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
  /**
   * Which levels to check; default: core and what the agent card declares (probe.readAgentCard),
   * plus `levels`.
   */
  plan?: LevelPlan;
  /** Capability levels to check beyond the agent card's (`--level`); `all` for every one. */
  levels?: string[];
  cases?: readonly ConformanceCase[];
  onResult?: (result: CaseResult) => void;
  signal?: AbortSignal;
};

export const DEFAULT_SLOW_MS = 8_000;

/** How long each word of the streaming case's answer takes, for agents that obey `#stream=<ms>`. */
export const STREAM_WORD_MS = 100;

export function slowTextFor(slowMs: number): string {
  return `conformance check: a slow task #sleep=${slowMs}`;
}

/** The streaming case's text: slow, then word by word (the reference runtime and its echo obey both). */
export function streamTextFor(slowMs: number): string {
  return `conformance check: a slow streaming task #sleep=${slowMs} #stream=${STREAM_WORD_MS}`;
}

/** The cases of the checked levels (all levels when no plan is given), narrowed by `only`. */
export function selectCases(options: Pick<ConformanceOptions, 'only' | 'cases' | 'plan'> = {}): readonly ConformanceCase[] {
  const checked = options.plan ? checkedLevels(options.plan) : LEVELS;
  const all = (options.cases ?? CASES).filter((c) => checked.includes(c.level));
  const only = options.only?.filter(Boolean) ?? [];
  if (!only.length) return all;
  return all.filter((c) => only.some((prefix) => c.id === prefix || c.id.startsWith(prefix)));
}

/** Core, the levels the agent card declares (where the probe can read it), and `levels`. */
export async function levelPlanFor(probe: Probe, options: Pick<ConformanceOptions, 'levels' | 'signal'> = {}): Promise<LevelPlan> {
  const card = probe.readAgentCard ? await probe.readAgentCard(options.signal) : { none: `the agent card cannot be read over ${probe.transport}; declare levels with --level` };
  return planLevels(card, options.levels);
}

export async function runConformance(probe: Probe, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const slowMs = options.slowMs ?? DEFAULT_SLOW_MS;
  const plan = options.plan ?? (await levelPlanFor(probe, options));
  const settings: ConformanceSettings = {
    slowText: options.slowText ?? slowTextFor(slowMs),
    streamText: options.slowText ?? streamTextFor(slowMs),
    pollIntervalMs: options.pollIntervalMs ?? 250,
    pollTimeoutMs: options.pollTimeoutMs ?? slowMs + 30_000,
  };
  const shared: SharedState = {};
  const ctx: CaseContext = {
    transport: probe.transport,
    settings,
    send: (body) => probe.send(body, options.signal),
    sendBytes: probe.sendBytes,
    ...(probe.stream ? { stream: (body: string) => probe.stream!(body, options.signal) } : {}),
    shared,
    signal: options.signal,
  };
  const results: CaseResult[] = [];
  let stopped: string | undefined;
  for (const c of selectCases({ ...options, plan })) {
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
  const conforms = !stopped && results.every((r) => r.status !== 'fail');
  return { target: probe.target, transport: probe.transport, card: plan.card, levels: levelResults(plan, results), results, conforms, ...(stopped ? { stopped } : {}) };
}

export function countByStatus(results: readonly CaseResult[]): Record<CaseStatus, number> {
  const counts: Record<CaseStatus, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const result of results) counts[result.status]++;
  return counts;
}

function levelResults(plan: LevelPlan, results: readonly CaseResult[]): LevelResult[] {
  return plan.levels.map(({ level, declaredBy }) => {
    const counts = countByStatus(results.filter((r) => r.level === level));
    const ran = counts.pass + counts.fail + counts.warn + counts.skip;
    const status = !declaredBy ? 'skipped' : counts.fail ? 'fail' : ran ? 'pass' : 'not run';
    return { level, ...(declaredBy ? { declaredBy } : {}), status, counts };
  });
}

async function runCase(c: ConformanceCase, ctx: CaseContext, requireAsync: boolean): Promise<{ result: CaseResult; unreachable: boolean }> {
  const started = performance.now();
  const done = (status: CaseStatus, detail?: string, unreachable = false) => ({
    result: {
      id: c.id,
      level: c.level,
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
