import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTEXT_DEFAULTS } from '../../cdk/config';
import {
  DEFAULT_ASSUMPTIONS,
  DEFAULT_SETTINGS,
  DESIGNS,
  LAMBDA_MEMORY_MB,
  LINE_ITEMS,
  messageUsage,
  priceSetting,
  recommendSessionEnd,
  renderCostReport,
  runCostModel,
  sessionPolicies,
  type CostSettings,
} from '../../tools/cost-model';
import { fullModelCli } from '../../tools/model';
import { allPrices, BEDROCK_MODELS, PRICE_REGION, PRICES } from '../../tools/prices';
import { DEFAULT_PARAMS, generateTrace, type ModelParams } from '../../tools/session-model';
import { SINGLE_ACCOUNT, synthesize } from '../cdk/support/synth';

const ROOT = join(__dirname, '..', '..');
const DEFAULTS = { params: DEFAULT_PARAMS, assumptions: DEFAULT_ASSUMPTIONS };
/** A short run for the checks that do not need the docs' figures. */
const SMALL: ModelParams = { ...DEFAULT_PARAMS, threadsPerMinute: 10, durationSeconds: 40 * 60, warmUpSeconds: 16 * 60, search: false };
const small = { params: SMALL, assumptions: DEFAULT_ASSUMPTIONS, messages: generateTrace(SMALL).messages };

describe('prices', () => {
  it('each has a price, a date no later than today and an AWS pricing page, in one Region', () => {
    expect(PRICE_REGION).toBe('us-east-1');
    const entries = allPrices();
    expect(entries.length).toBeGreaterThan(Object.keys(PRICES).length);
    const wrong = entries.filter(({ price }) => {
      const date = /^\d{4}-\d{2}-\d{2}$/.test(price.checked) ? new Date(`${price.checked}T00:00:00Z`) : undefined;
      return !(price.usd > 0 && Number.isFinite(price.usd)) || !date || Number.isNaN(date.getTime()) || date.getTime() > Date.now() || !/^https:\/\/aws\.amazon\.com\/[\w/.-]+\/$/.test(price.source) || !price.per;
    });
    expect(wrong.map((w) => w.name)).toEqual([]);
  });

  it('prices the model the deployment uses by default', () => {
    expect(BEDROCK_MODELS.map((m) => m.id)).toContain(CONTEXT_DEFAULTS.bedrockModelId);
    expect(DEFAULT_ASSUMPTIONS.model.id).toBe(CONTEXT_DEFAULTS.bedrockModelId);
  });
});

describe('cost model: one message through the pipeline', () => {
  // Polling, whatever STREAM_HOLD_S's default is at the time.
  const polled: CostSettings = { ...DEFAULT_SETTINGS, streamHoldSeconds: 0 };
  const quiet: CostSettings = { ...polled, streamed: false };

  it('an answer within the sync budget: the invoker waits for it, no poll', () => {
    const u = messageUsage(3, polled, DEFAULT_ASSUMPTIONS);
    expect(u.polls).toBe(0);
    expect(u.lambdaSeconds.agentInvoker).toBeCloseTo(DEFAULT_ASSUMPTIONS.ownSeconds.agentInvoker + 3, 9);
    // The task, the reply: each sent, received and deleted.
    expect(u.sqsRequests).toBe(6);
  });

  it('an answer that does not stream is polled on the backoff: 2, 4, 8, 16 s after each poll', () => {
    // Accepted at 5 s; polls at 7, 11.2, 19.4 (still running) and 35.6 s (done at 20 s).
    const u = messageUsage(20, quiet, DEFAULT_ASSUMPTIONS);
    expect(u.polls).toBe(4);
    expect(u.sqsRequests).toBe(6 + 3 * 4);
    expect(u.lambdaSeconds.asyncResult).toBeCloseTo(4 * DEFAULT_ASSUMPTIONS.ownSeconds.poll, 9);
  });

  it('a streamed answer is polled every STREAM_POLL_DELAY_S while its text flows', () => {
    // Polls at 7, 9.2, 11.4, 13.6, 15.8, 18 and 20.2 s.
    expect(messageUsage(20, polled, DEFAULT_ASSUMPTIONS).polls).toBe(7);
    expect(messageUsage(20, { ...polled, streamPollDelaySeconds: 1 }, DEFAULT_ASSUMPTIONS).polls).toBeGreaterThan(7);
  });

  it('STREAM_HOLD_S holds the invoker while the text flows instead of polling', () => {
    const held = messageUsage(20, { ...polled, streamHoldSeconds: 30 }, DEFAULT_ASSUMPTIONS);
    expect(held.polls).toBe(0);
    expect(held.lambdaSeconds.agentInvoker).toBeCloseTo(DEFAULT_ASSUMPTIONS.ownSeconds.agentInvoker + 20, 9);
    // Longer than the hold: the polls hold the rest, each reading on at once.
    const long = messageUsage(80, { ...polled, streamHoldSeconds: 20 }, DEFAULT_ASSUMPTIONS);
    expect(long.polls).toBeGreaterThanOrEqual(3);
    expect(long.lambdaSeconds.agentInvoker + long.lambdaSeconds.asyncResult).toBeGreaterThanOrEqual(80);
  });

  it('the function-URL design runs the task in the worker past the sync budget', () => {
    const u = messageUsage(20, { ...polled, design: 'https' }, DEFAULT_ASSUMPTIONS);
    expect(u.lambdaSeconds.executionWorker).toBeCloseTo(15 + DEFAULT_ASSUMPTIONS.ownSeconds.executionCall, 9);
    expect(u.lambdaInvocations.executionUrl).toBe(1 + u.polls);
    expect(messageUsage(3, { ...polled, design: 'https' }, DEFAULT_ASSUMPTIONS).lambdaInvocations.executionWorker).toBe(0);
  });
});

describe('cost model: priced', () => {
  it('the line items add up to the total, for both designs', () => {
    for (const design of DESIGNS) {
      const r = priceSetting({ ...DEFAULT_SETTINGS, design }, small);
      const sum = LINE_ITEMS.reduce((s, { item }) => s + r.per1000[item], 0);
      expect(sum).toBeCloseTo(r.total, 12);
      for (const { item } of LINE_ITEMS) expect(r.per1000[item]).toBeGreaterThanOrEqual(0);
      // Tokens × price, exactly.
      const a = DEFAULT_ASSUMPTIONS;
      expect(r.per1000.bedrock).toBeCloseTo(1000 * (a.inputTokens * a.model.input.usd + a.outputTokens * a.model.output.usd), 12);
    }
    const https = priceSetting({ ...DEFAULT_SETTINGS, design: 'https' }, small);
    expect(https.per1000['agentcore:memoryIdle'] + https.per1000['agentcore:vcpu']).toBe(0);
    expect(https.per1000['lambda:execution']).toBeGreaterThan(0);
  });

  it('bills AgentCore memory for idle time: a longer idle timeout costs more, stopping at once least, with the most cold starts', () => {
    const results = sessionPolicies().map((s) => ({ s, r: priceSetting(s, small) }));
    const idle = (seconds: number) => results.find((x) => x.s.stop.kind === 'idle' && x.s.idleTimeoutSeconds === seconds)!.r;
    expect(idle(900).per1000['agentcore:memoryIdle']).toBeGreaterThan(idle(300).per1000['agentcore:memoryIdle']);
    expect(idle(300).per1000['agentcore:memoryIdle']).toBeGreaterThan(idle(60).per1000['agentcore:memoryIdle']);
    const atOnce = results.find((x) => x.s.stop.kind === 'at-once')!.r;
    for (const { r } of results) {
      expect(atOnce.usage.sessionSeconds).toBeLessThanOrEqual(r.usage.sessionSeconds);
      expect(atOnce.usage.coldStartsPer1000).toBeGreaterThanOrEqual(r.usage.coldStartsPer1000);
    }
    // Every message of a conversation whose session is stopped at once starts cold.
    expect(atOnce.usage.coldStartsPer1000).toBeGreaterThan(990);
    // A Stop after 2 quiet minutes keeps the sessions an idle timeout of 2 minutes keeps, and pays for its checks.
    const after = results.find((x) => x.s.stop.kind === 'after' && x.s.stop.seconds === 120)!.r;
    expect(after.usage.sessionSeconds).toBeCloseTo(idle(120).usage.sessionSeconds, 9);
    expect(after.total).toBeGreaterThan(idle(120).total);
  });

  it('recommends the cheapest session end within 10 cold starts per 1,000 of the fewest', () => {
    const pick = recommendSessionEnd(small);
    const results = sessionPolicies().map((s) => priceSetting(s, small));
    const fewest = Math.min(...results.map((r) => r.usage.coldStartsPer1000));
    const chosen = priceSetting(pick.settings, small);
    expect(chosen.usage.coldStartsPer1000).toBeLessThanOrEqual(fewest + 10);
    for (const r of results) if (r.usage.coldStartsPer1000 <= fewest + 10) expect(chosen.total).toBeLessThanOrEqual(r.total + 1e-12);
    expect(pick.reason).toContain(pick.label);
  });
});

describe('cost model: the deployment it models', () => {
  it('uses the memory and architecture CDK deploys for every function', () => {
    const synth = synthesize({ ...SINGLE_ACCOUNT, executionHosts: 'agentcore,https' });
    try {
      const functions = [synth.verification!, synth.execution!].flatMap((t) => Object.values(t.findResources('AWS::Lambda::Function')) as Array<{ Properties: Record<string, any> }>);
      const memoryOf = (prefix: string) => {
        const found = functions.filter((f) => String(f.Properties.Description ?? '').startsWith(prefix));
        expect(found).toHaveLength(1);
        expect(found[0]!.Properties.Architectures).toEqual(['arm64']);
        return found[0]!.Properties.MemorySize;
      };
      expect({
        slackEvents: memoryOf('slack-events:'),
        agentInvoker: memoryOf('agent-invoker:'),
        asyncResult: memoryOf('async-result:'),
        slackPoster: memoryOf('slack-poster:'),
        executionUrl: memoryOf('Execution zone behind a function URL'),
        executionWorker: memoryOf('Execution zone worker'),
      }).toEqual(LAMBDA_MEMORY_MB);
    } finally {
      synth.cleanup();
    }
  }, 120_000);
});

describe('cost model: the docs', () => {
  const report = runCostModel(DEFAULTS);
  const markdown = renderCostReport(report, DEFAULTS, { markdown: true, governed: true });
  const docs = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const section = /^## What it costs\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(docs)?.[1] ?? '';

  it('docs/operations.md carries the model\'s tables for the defaults, row for row', () => {
    expect(section).not.toBe('');
    const tableLines = (text: string) => text.split('\n').filter((line) => line.startsWith('|'));
    const have = tableLines(section);
    const want = tableLines(markdown);
    const first = want.findIndex((line, i) => have[i] !== line);
    if (first >= 0 || have.length !== want.length) {
      // A price or a default (STREAM_HOLD_S, the idle timeout, the model…) changed: the section is regenerated, not edited.
      throw new Error(
        `docs/operations.md "What it costs" differs from \`npm run model -- --markdown --governed\` (row ${first + 1}):\n  docs:  ${have[first] ?? '(none)'}\n  model: ${want[first] ?? '(none)'}\n` +
          'Paste the model\'s tables and assumption lines into the section, and its total into README.md.',
      );
    }
    // And the assumptions the figures rest on.
    for (const line of markdown.split('\n').slice(0, 3)) expect(section.replace(/\s+/g, ' ')).toContain(line.replace(/\s+/g, ' '));
    expect(section).toContain(`Recommended session end: ${report.recommendation.reason}`);
  });

  it('the README gives the headline figure and points at the section', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const money = (usd: number) => `$${usd.toFixed(usd >= 1 ? 3 : 4)}`;
    expect(readme).toContain(`${money(report.designs.agentcore.total)} per 1,000 messages`);
    expect(readme).toContain('docs/operations.md#what-it-costs');
  });

  it('prints all of it from `npm run model`, the governed section with --governed', () => {
    const args = ['--duration', '40m', '--warm-up', '16m', '--no-search'];
    const plain = fullModelCli(args);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('AgentCore session model');
    expect(plain.stdout).toMatch(/^total +\$[\d.]+ +\$[\d.]+ +100 %$/m);
    expect(plain.stdout).toContain('Recommended session end:');
    expect(plain.stdout).not.toContain('Governed account');
    expect(fullModelCli([...args, '--governed']).stdout).toMatch(/^total a month +\$110\.50$/m);
    expect(fullModelCli([...args, '--no-cost']).stdout).not.toContain('Cost per 1,000 messages');
    expect(fullModelCli([...args, '--model', 'Amazon Nova Micro']).stdout).toContain('400 out tokens, Amazon Nova Micro');
    const bad = fullModelCli([...args, '--model', 'gpt']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--model: unknown model "gpt"');
    expect(fullModelCli(['--help']).stdout).toContain('--governed');
  });
});
