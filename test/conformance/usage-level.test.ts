import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecuteTaskParams } from '../../src/contract';
import { createProbe } from '../../src/conformance/probe';
import { runConformance, type ConformanceReport } from '../../src/conformance/runner';
import type { Executor, ExecutorOutput } from '../../src/execution/executors/executor';
import { startExecutionRuntime } from '../support/execution-runtime';

/**
 * The `usage` level (docs/contract.md, "Usage"): checked only for an agent that declares it —
 * the reference runtime's card does —, and never part of core, so an agent that reports no usage
 * still conforms when it does not declare the level.
 */

/** A runtime whose executor answers `output` (the usage case's task after `usageDelayMs`), and whose card declares every level. */
async function runtimeAnswering(output: (params: ExecuteTaskParams) => ExecutorOutput, usageDelayMs = 0) {
  const executor: Executor = {
    name: 'scripted',
    execute: async (params, { signal }) => {
      if (usageDelayMs && params.text.includes('how many tokens')) await sleep(usageDelayMs, undefined, { signal });
      return output(params);
    },
  };
  return startExecutionRuntime({ SYNC_BUDGET_MS: '150' }, { executor });
}

async function check(url: string, levels?: string[]): Promise<ConformanceReport> {
  const probe = createProbe({ kind: 'https', url });
  try {
    return await runConformance(probe, { slowMs: 600, pollIntervalMs: 50, only: ['execute_task.success', 'execute_task.usage'], ...(levels ? { levels } : {}) });
  } finally {
    probe.close();
  }
}

const resultOf = (report: ConformanceReport, id: string) => report.results.find((result) => result.id === id);

describe('zone conformance: the usage level', () => {
  it('the reference runtime (echo) declares it and passes: a token a word', async () => {
    const runtime = await startExecutionRuntime({ SYNC_BUDGET_MS: '150' });
    try {
      const report = await check(runtime.invocationsUrl);
      expect(resultOf(report, 'execute_task.usage')).toMatchObject({ status: 'pass', detail: '7 in, 8 out (echo)' });
      expect(report.conforms).toBe(true);
    } finally {
      await runtime.close();
    }
  });

  it('reads the usage of an answer that was accepted and polled', async () => {
    // Past the 150 ms budget: the case's task is answered `accepted`, and its usage comes with the polled success.
    const runtime = await runtimeAnswering((params) => ({ response_text: `later: ${params.text}`, usage: { input_tokens: 3, output_tokens: 1, cache_read_tokens: 9 } }), 400);
    try {
      const report = await check(runtime.invocationsUrl);
      expect(resultOf(report, 'execute_task.usage')).toMatchObject({ status: 'pass', detail: '3 in, 1 out, once polled' });
    } finally {
      await runtime.close();
    }
  });

  it.each<[string, ExecutorOutput, RegExp]>([
    ['no usage', { response_text: 'uncounted' }, /^expected usage in the final result: /],
    ['a negative count', { response_text: 'miscounted', usage: { input_tokens: -1, output_tokens: 2 } as never }, /^expected usage as docs\/contract\.md "Usage" defines it, got .*: input_tokens: input_tokens must not be negative$/],
    ['counts as strings', { response_text: 'miscounted', usage: { input_tokens: '1', output_tokens: '2' } as never }, /input_tokens: input_tokens must be a number of tokens; output_tokens: output_tokens must be a number of tokens$/],
  ])('an agent that declares it fails it with %s, and core still passes', async (_what, output, why) => {
    const runtime = await runtimeAnswering(() => output);
    try {
      const report = await check(runtime.invocationsUrl);
      expect(resultOf(report, 'execute_task.success')?.status).toBe('pass');
      expect(resultOf(report, 'execute_task.usage')).toMatchObject({ status: 'fail', detail: expect.stringMatching(why) });
      expect(report.levels.find((level) => level.level === 'core')).toMatchObject({ status: 'pass' });
      expect(report.conforms).toBe(false);
    } finally {
      await runtime.close();
    }
  });
});
