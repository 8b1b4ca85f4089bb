import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  DEFAULT_PARAMS,
  generateTrace,
  liveAt,
  measure,
  modelCli,
  parseDuration,
  parseModelArgs,
  POLICIES,
  runModel,
  sample,
  seededRandom,
  sessionsOf,
  type Message,
  type ModelParams,
} from '../../tools/session-model';

/** A small, fast parameter set: 20 simulated minutes, no bisection. */
const small = (overrides: Partial<ModelParams> = {}): ModelParams => ({
  ...DEFAULT_PARAMS,
  threadsPerMinute: 10,
  durationSeconds: 20 * 60,
  warmUpSeconds: 5 * 60,
  idleSeconds: [60, 300],
  search: false,
  ...overrides,
});

const fixed = (mean: number) => ({ kind: 'fixed' as const, mean, sigma: 1 });

describe('session model: one thread, known times', () => {
  // A question at 0 s answered at 10 s, a follow-up at 50 s answered at 60 s.
  const thread: Message[] = [
    { thread: 0, turn: 0, arrival: 0, done: 10 },
    { thread: 0, turn: 1, arrival: 50, done: 60 },
  ];

  it('per message: a session per message, each live until the idle timeout after its answer', () => {
    // Act
    const sessions = sessionsOf(thread, 'per-message', 60);
    // Assess: [0, 70) and [50, 120), overlapping over [50, 70)
    expect(sessions).toEqual([
      { key: 0, start: 0, end: 70 },
      { key: 1, start: 50, end: 120 },
    ]);
    expect(measure(sessions, thread, 0, 200)).toEqual({
      peak: 2,
      mean: 140 / 200,
      messages: 2,
      coldStarts: 2,
      coldStartsPer1000: 1000,
      sessionSecondsPerMessage: 70,
    });
  });

  it('per conversation: the follow-up reuses the warm session', () => {
    const sessions = sessionsOf(thread, 'per-conversation', 60);
    expect(sessions).toEqual([{ key: 0, start: 0, end: 120 }]);
    expect(measure(sessions, thread, 0, 200)).toEqual({
      peak: 1,
      mean: 120 / 200,
      messages: 2,
      coldStarts: 1,
      coldStartsPer1000: 500,
      sessionSecondsPerMessage: 60,
    });
  });

  it('per conversation: a follow-up after the idle timeout pays a new cold start', () => {
    // The session of the first message ends at 10 + 30 = 40 s; the follow-up comes at 50 s.
    const sessions = sessionsOf(thread, 'per-conversation', 30);
    expect(sessions).toEqual([
      { key: 0, start: 0, end: 40 },
      { key: 0, start: 50, end: 90 },
    ]);
    // Exactly at the expiry is too late too: live over [start, end).
    const atExpiry: Message[] = [thread[0]!, { thread: 0, turn: 1, arrival: 40, done: 45 }];
    expect(sessionsOf(atExpiry, 'per-conversation', 30)).toHaveLength(2);
    expect(measure(sessionsOf(atExpiry, 'per-conversation', 30), atExpiry, 0, 100).peak).toBe(1);
  });

  it('keeps a session live while its task runs (its polls are requests), however long', () => {
    const long: Message[] = [{ thread: 0, turn: 0, arrival: 0, done: 500 }];
    expect(sessionsOf(long, 'per-message', 60)).toEqual([{ key: 0, start: 0, end: 560 }]);
  });

  it('never outlives maxLifetime: a running task’s next poll opens a new session', () => {
    const long: Message[] = [{ thread: 0, turn: 0, arrival: 0, done: 100 }];
    expect(sessionsOf(long, 'per-conversation', 60, 80)).toEqual([
      { key: 0, start: 0, end: 80 },
      { key: 0, start: 80, end: 160 },
    ]);
    // No task running at the cut: the session just ends.
    expect(sessionsOf(long, 'per-conversation', 60, 120)).toEqual([{ key: 0, start: 0, end: 120 }]);
  });

  it('counts only the measured window', () => {
    const sessions = sessionsOf(thread, 'per-message', 60);
    // [60, 100): the first session has ended at 70, the second is live throughout; no message arrives in it.
    expect(measure(sessions, thread, 60, 100)).toMatchObject({ peak: 2, mean: (10 * 2 + 30) / 40, messages: 0, coldStarts: 0 });
    expect(liveAt(sessions, 69.9)).toBe(2);
    expect(liveAt(sessions, 70)).toBe(1);
  });

  it('never shares a session between threads', () => {
    const two: Message[] = [
      { thread: 0, turn: 0, arrival: 0, done: 10 },
      { thread: 1, turn: 0, arrival: 5, done: 15 },
    ];
    expect(sessionsOf(two, 'per-conversation', 60)).toEqual([
      { key: 0, start: 0, end: 70 },
      { key: 1, start: 5, end: 75 },
    ]);
  });

  it('refuses messages that are not thread by thread in arrival order', () => {
    const scattered: Message[] = [thread[0]!, { thread: 1, turn: 0, arrival: 5, done: 15 }, thread[1]!];
    expect(() => sessionsOf(scattered, 'per-conversation', 60)).toThrow(RangeError);
    expect(() => sessionsOf([thread[1]!, thread[0]!], 'per-conversation', 60)).toThrow(RangeError);
  });
});

describe('session model: the trace', () => {
  it('draws follow-ups after the answer plus the think time, with fixed times exactly', () => {
    // Act: every answer gets a follow-up; 10 s answers, 20 s think
    const trace = generateTrace({ ...small(), threadsPerMinute: 0.5, followUp: 1, answer: fixed(10), think: fixed(20), durationSeconds: 300 });
    // Assess
    const first = trace.messages.filter((m) => m.thread === 0);
    expect(first.length).toBeGreaterThan(1);
    first.forEach((m, turn) => {
      expect(m.turn).toBe(turn);
      expect(m.done - m.arrival).toBeCloseTo(10, 9);
      if (turn > 0) expect(m.arrival - first[turn - 1]!.done).toBeCloseTo(20, 9);
    });
    expect(trace.messages.every((m) => m.arrival < 300)).toBe(true);
  });

  it('has one message per thread without follow-ups, and about the asked rate of threads', () => {
    const trace = generateTrace({ ...small(), threadsPerMinute: 60, followUp: 0, durationSeconds: 3600 });
    expect(trace.messages).toHaveLength(trace.threads);
    expect(trace.threads).toBeGreaterThan(3600 * 0.9);
    expect(trace.threads).toBeLessThan(3600 * 1.1);
  });

  it('samples the asked means', () => {
    const random = seededRandom(3);
    const mean = (draw: () => number) => Array.from({ length: 20_000 }, draw).reduce((a, b) => a + b, 0) / 20_000;
    expect(mean(() => sample({ kind: 'exponential', mean: 60, sigma: 1 }, random))).toBeCloseTo(60, -0.5);
    expect(mean(() => sample({ kind: 'lognormal', mean: 10, sigma: 1 }, random))).toBeCloseTo(10, -0.5);
    expect(sample(fixed(7), random)).toBe(7);
  });

  it('is the same for the same seed, and different for another', () => {
    expect(generateTrace(small({ seed: 5 }))).toEqual(generateTrace(small({ seed: 5 })));
    expect(generateTrace(small({ seed: 5 }))).not.toEqual(generateTrace(small({ seed: 6 })));
    expect(runModel(small({ seed: 5 }))).toEqual(runModel(small({ seed: 5 })));
    expect(modelCli(['--duration', '20m', '--warm-up', '5m', '--seed', '9']).stdout).toBe(modelCli(['--duration', '20m', '--warm-up', '5m', '--seed', '9']).stdout);
  });
});

describe('session model: properties', () => {
  /** Random small traces: a few threads of a few messages, thread by thread. */
  const traces = fc
    .array(
      fc.record({
        start: fc.integer({ min: 0, max: 2000 }),
        turns: fc.array(fc.record({ answer: fc.integer({ min: 1, max: 300 }), think: fc.integer({ min: 0, max: 1200 }) }), { minLength: 1, maxLength: 5 }),
      }),
      { minLength: 1, maxLength: 8 },
    )
    .map((threads) =>
      threads.flatMap(({ start, turns }, thread) => {
        let arrival = start;
        return turns.map(({ answer, think }, turn) => {
          const message: Message = { thread, turn, arrival, done: arrival + answer };
          arrival = message.done + think;
          return message;
        });
      }),
    );
  const instants = (messages: readonly Message[]) => messages.flatMap((m) => [m.arrival, m.done, m.done + 59.5, m.done + 60, m.done + 299, m.done + 901]);

  it('per conversation never has more live sessions than per message, at any instant', () => {
    fc.assert(
      fc.property(traces, fc.constantFrom(60, 300, 900), (messages, idle) => {
        const perMessage = sessionsOf(messages, 'per-message', idle);
        const perConversation = sessionsOf(messages, 'per-conversation', idle);
        for (const t of instants(messages)) expect(liveAt(perConversation, t)).toBeLessThanOrEqual(liveAt(perMessage, t));
        expect(perConversation.length).toBeLessThanOrEqual(perMessage.length);
      }),
    );
  });

  it('a longer idle timeout never means fewer live sessions, nor more cold starts', () => {
    fc.assert(
      fc.property(traces, fc.constantFrom(...POLICIES), fc.integer({ min: 60, max: 900 }), fc.integer({ min: 0, max: 900 }), (messages, policy, shorter, extra) => {
        const a = sessionsOf(messages, policy, shorter);
        const b = sessionsOf(messages, policy, shorter + extra);
        for (const t of instants(messages)) expect(liveAt(b, t)).toBeGreaterThanOrEqual(liveAt(a, t));
        expect(b.length).toBeLessThanOrEqual(a.length);
      }),
    );
  });

  it('holds both over a whole simulated run, and follows Little’s law', () => {
    // Act
    const result = runModel(small({ idleSeconds: [60, 300, 900], durationSeconds: 40 * 60, warmUpSeconds: 16 * 60 }));
    const row = (policy: string, idle: number) => result.rows.find((r) => r.policy === policy && r.idleSeconds === idle)!;
    // Assess
    for (const idle of [60, 300, 900]) {
      expect(row('per-conversation', idle).peak).toBeLessThanOrEqual(row('per-message', idle).peak);
      expect(row('per-conversation', idle).mean).toBeLessThanOrEqual(row('per-message', idle).mean);
      expect(row('per-message', idle).coldStartsPer1000).toBe(1000);
    }
    for (const policy of POLICIES) {
      expect(row(policy, 60).peak).toBeLessThanOrEqual(row(policy, 300).peak);
      expect(row(policy, 300).peak).toBeLessThanOrEqual(row(policy, 900).peak);
      expect(row(policy, 60).coldStartsPer1000).toBeGreaterThanOrEqual(row(policy, 900).coldStartsPer1000);
    }
    // Per message, 10 s answers on average + 900 s idle: ~910 session-seconds per message.
    expect(row('per-message', 900).sessionSecondsPerMessage).toBeGreaterThan(850);
    expect(row('per-message', 900).sessionSecondsPerMessage).toBeLessThan(970);
    const r = row('per-message', 300);
    expect(r.limitRateMean).toBeCloseTo((500 / r.sessionSecondsPerMessage) * 60, 6);
  });

  it('finds the rate at which the peak reaches the limit, below the mean’s (Little’s law)', () => {
    // Act
    const result = runModel(small({ idleSeconds: [300], limit: 100, search: true }));
    // Assess
    for (const row of result.rows) {
      expect(row.limitRatePeak).toBeGreaterThan(0);
      expect(row.limitRatePeak!).toBeLessThanOrEqual(row.limitRateMean * 1.05);
      // At that rate the run's peak does reach the limit.
      const threadsPerMinute = row.limitRatePeak! * (1 - result.params.followUp);
      const again = runModel({ ...result.params, threadsPerMinute, search: false }).rows.find((r) => r.policy === row.policy)!;
      expect(again.peak).toBeGreaterThanOrEqual(100);
    }
  });
});

describe('session model: the command', () => {
  it('prints the table for every policy × idle timeout', () => {
    // Act
    const { code, stdout } = modelCli(['--rate', '20', '--follow-up', '0.4', '--duration', '30m', '--warm-up', '10m', '--idle', '60,5m', '--no-search']);
    // Assess
    expect(code).toBe(0);
    expect(stdout).toContain('20 new threads/min; follow-up probability 0.4');
    expect(stdout).toMatch(/policy\s+idle timeout\s+peak live sessions\s+mean live sessions\s+cold starts \/ 1,000 msgs/);
    for (const line of ['per-message       1 min', 'per-message       5 min', 'per-conversation  1 min', 'per-conversation  5 min']) expect(stdout).toContain(line);
  });

  it('prints it as Markdown with --markdown', () => {
    const { stdout } = modelCli(['--markdown', '--duration', '30m', '--warm-up', '15m', '--limit', '50']);
    const rows = stdout.split('\n').filter((line) => line.startsWith('|'));
    expect(rows[0]).toBe('| policy | idle timeout | peak live sessions | mean live sessions | cold starts / 1,000 msgs | session-s / msg | msgs/min at limit (peak, search) | msgs/min at limit (mean, Little) |');
    expect(rows[1]).toMatch(/^\| --- \| --- \|( ---: \|){6}$/);
    expect(rows).toHaveLength(2 + 6);
    expect(rows[2]).toMatch(/^\| per-message \| 1 min \| \d+ \| [\d.]+ \| 1,000 \| [\d.]+ \| [\d.,]+ \| [\d.,]+ \|$/);
  });

  it('answers --help, and refuses a bad flag with the usage', () => {
    expect(modelCli(['--help'])).toMatchObject({ code: 0, stdout: expect.stringContaining('--follow-up <p>') });
    const bad = modelCli(['--follow-up', '1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--follow-up must be within [0, 1)');
    expect(modelCli(['--frobnicate']).stderr).toContain('unknown argument "--frobnicate"');
  });

  it('reads every parameter and warns about a short warm-up', () => {
    const cli = parseModelArgs([
      '--rate=12', '--follow-up', '0.3', '--think', '2m', '--think-dist', 'lognormal', '--think-sigma', '0.5', '--answer', '20',
      '--answer-dist', 'exponential', '--answer-sigma', '2', '--duration', '3h', '--warm-up', '10m', '--idle', '60,900', '--max-lifetime', '4h',
      '--limit', '250', '--seed', '7', '--no-search', '--markdown',
    ]);
    expect(cli.params).toEqual({
      threadsPerMinute: 12,
      followUp: 0.3,
      think: { kind: 'lognormal', mean: 120, sigma: 0.5 },
      answer: { kind: 'exponential', mean: 20, sigma: 2 },
      durationSeconds: 10_800,
      warmUpSeconds: 600,
      idleSeconds: [60, 900],
      maxLifetimeSeconds: 14_400,
      limit: 250,
      seed: 7,
      search: false,
    });
    expect(cli.markdown).toBe(true);
    expect(cli.warnings.join('\n')).toContain('shorter than the longest idle timeout');
    expect(parseDuration('1.5h', '--duration')).toBe(5400);
    expect(() => parseDuration('soon', '--duration')).toThrow(RangeError);
  });

  it('runs as `npm run model` (tsx tools/session-model.ts)', () => {
    const root = join(__dirname, '..', '..');
    const run = spawnSync(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'tools/session-model.ts', '--duration', '20m', '--warm-up', '5m', '--no-search'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('per-conversation  15 min');
  });
});
