import { MemoryQueue, whenAllIdle, type QueueEvent } from '../../src/queue/memory-queue';
import type { Delivery } from '../../src/queue/queue';
import { eventually } from '../support/http';

// Every delay and timeout is scaled by 0.01: a "10 s" delay takes 100 ms, so the file stays fast
// while still exercising real timers.
const timeScale = 0.01;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const timeouts = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

type Job = { n: number; text?: string };

describe('MemoryQueue', () => {
  const started: Array<MemoryQueue<unknown>> = [];
  const queue = <T = Job>(options: Partial<ConstructorParameters<typeof MemoryQueue<T>>[0]> = {}) => {
    const created = new MemoryQueue<T>({ name: 'jobs', timeScale, ...options });
    started.push(created as MemoryQueue<unknown>);
    return created;
  };
  afterEach(async () => {
    await Promise.all(started.splice(0).map((q) => q.stop()));
  });

  it('delivers the JSON text of the message with its attributes, then deletes it', async () => {
    // Prepare
    const jobs = queue();
    const seen: Delivery[] = [];
    // Act
    await jobs.send({ n: 1, text: 'héllo' }, { attributes: { request_id: 'r-1' } });
    jobs.consume(async (delivery) => {
      seen.push(delivery);
    });
    await jobs.whenIdle({ timeoutMs: 2000 });
    // Assess: consumers read text, exactly as from SQS, and a handled message is gone.
    expect(seen).toEqual([{ messageId: expect.any(String), body: '{"n":1,"text":"héllo"}', receiveCount: 1, attributes: { request_id: 'r-1' } }]);
    expect(jobs.size).toBe(0);
  });

  it('still delivers a message that falls due between its two clock readings (no lost wake-up)', async () => {
    // Prepare: the queue's clock frozen, a message due in one second (the wake timer is set).
    const realNow = Date.now;
    const base = realNow();
    let handled = 0;
    const queue = new MemoryQueue<string>({ name: 'race' });
    try {
      Date.now = () => base;
      queue.consume(async () => {
        handled += 1;
      });
      await queue.send('x', { delaySeconds: 1 });
      // From now on the queue's clock moves 1 ms per reading: when the timer fires, pump() reads
      // 999 ms (not due yet) and the wake-up that follows reads 1000 ms (due).
      let reading = base + 999;
      Date.now = () => (new Error().stack?.includes('memory-queue') ? reading++ : reading);

      // Act
      await sleep(1_200);
      Date.now = realNow;
      await queue.whenIdle({ timeoutMs: 2_000 });

      // Assess
      expect(handled).toBe(1);
    } finally {
      Date.now = realNow;
      await queue.stop();
    }
  });

  it('holds a delayed message back for its (scaled) delay', async () => {
    const jobs = queue();
    const deliveredAt: number[] = [];
    jobs.consume(async () => {
      deliveredAt.push(Date.now());
    });
    const sentAt = Date.now();
    await jobs.send({ n: 1 }, { delaySeconds: 100 }); // 1 s at this scale
    await jobs.send({ n: 2 });

    await eventually(() => (deliveredAt.length > 0 ? true : undefined), 10_000);
    expect(deliveredAt).toHaveLength(1); // only the undelayed one so far
    await jobs.whenIdle({ timeoutMs: 10_000 });
    expect(deliveredAt).toHaveLength(2);
    expect(deliveredAt[1]! - sentAt).toBeGreaterThanOrEqual(995);
  });

  it('redelivers a failed message after the visibility timeout, counting receives', async () => {
    const jobs = queue({ visibilityTimeoutSeconds: 5 }); // 50 ms
    const receives: Array<{ count: number; at: number }> = [];
    jobs.consume(async (delivery) => {
      receives.push({ count: delivery.receiveCount, at: Date.now() });
      if (delivery.receiveCount < 3) throw new Error('transient');
    });
    await jobs.send({ n: 1 });
    await jobs.whenIdle({ timeoutMs: 2000 });

    expect(receives.map((r) => r.count)).toEqual([1, 2, 3]);
    // Invisible, not instantly retried: each redelivery waits out the visibility timeout.
    expect(receives[1]!.at - receives[0]!.at).toBeGreaterThanOrEqual(45);
    expect(receives[2]!.at - receives[1]!.at).toBeGreaterThanOrEqual(45);
  });

  it('treats a handler that throws synchronously as a failed delivery', async () => {
    const jobs = queue({ visibilityTimeoutSeconds: 1 });
    const counts: number[] = [];
    jobs.consume(((delivery: Delivery) => {
      counts.push(delivery.receiveCount);
      if (delivery.receiveCount === 1) throw new Error('sync throw');
      return Promise.resolve();
    }) as never);
    await jobs.send({ n: 1 });
    await jobs.whenIdle({ timeoutMs: 2000 });
    expect(counts).toEqual([1, 2]);
  });

  it('moves a message to the DLQ instead of a receive past maxReceiveCount, body and attributes intact', async () => {
    const dlq = queue<unknown>({ name: 'jobs-dlq' });
    const events: QueueEvent[] = [];
    const jobs = queue({ visibilityTimeoutSeconds: 1, maxReceiveCount: 2, deadLetterQueue: dlq, onEvent: (event) => events.push(event) });
    let calls = 0;
    jobs.consume(async () => {
      calls += 1;
      throw new Error('always fails');
    });
    await jobs.send({ n: 7, text: 'poison' }, { attributes: { request_id: 'r-7' } });
    await jobs.whenIdle({ timeoutMs: 2000 });

    expect(calls).toBe(2); // received exactly maxReceiveCount times, never a third
    expect(jobs.size).toBe(0);
    expect(dlq.peek()).toEqual(['{"n":7,"text":"poison"}']);
    await dlq.whenIdle({ timeoutMs: 100 }); // parked, unconsumed: the pipeline counts as settled
    expect(events.map((e) => e.type)).toEqual(['sent', 'delivered', 'failed', 'delivered', 'failed', 'dead-lettered']);
    expect(events.at(-1)).toMatchObject({ deadLetterQueue: 'jobs-dlq', receiveCount: 2, body: '{"n":7,"text":"poison"}' });

    // A DLQ consumer (e.g. the one that apologizes to the user) sees the original attributes.
    const fromDlq: Delivery[] = [];
    dlq.consume(async (delivery) => {
      fromDlq.push(delivery);
    });
    await dlq.whenIdle({ timeoutMs: 2000 });
    expect(fromDlq).toEqual([expect.objectContaining({ body: '{"n":7,"text":"poison"}', receiveCount: 1, attributes: { request_id: 'r-7' } })]);
  });

  it('whenIdle does not resolve while a delayed message is pending', async () => {
    const jobs = queue();
    let handled = false;
    jobs.consume(async () => {
      handled = true;
    });
    const sentAt = Date.now();
    await jobs.send({ n: 1 }, { delaySeconds: 20 }); // 200 ms; nothing visible or in flight meanwhile
    await jobs.whenIdle({ timeoutMs: 2000 });
    expect(handled).toBe(true);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(190);
  });

  it('whenIdle waits for a message that is waiting out its visibility timeout', async () => {
    const jobs = queue({ visibilityTimeoutSeconds: 10 }); // 100 ms
    const counts: number[] = [];
    jobs.consume(async (delivery) => {
      counts.push(delivery.receiveCount);
      if (delivery.receiveCount === 1) throw new Error('once');
    });
    await jobs.send({ n: 1 });
    await jobs.whenIdle({ timeoutMs: 2000 });
    expect(counts).toEqual([1, 2]);
  });

  it('whenIdle with a timeout rejects, saying what is left, when a handler never settles', async () => {
    const jobs = queue();
    // Hangs until aborted, so the test can still stop it cleanly.
    jobs.consume((_delivery, { signal }) => new Promise<void>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason))));
    await jobs.send({ n: 1 });
    await jobs.send({ n: 2 }, { delaySeconds: 100 });
    await expect(jobs.whenIdle({ timeoutMs: 30 })).rejects.toThrow('0 visible, 1 delayed or invisible, 1 in flight');
    await jobs.stop({ abort: true });
  });

  it('a queue nobody consumes (a DLQ) is idle with its messages parked in it', async () => {
    const parked = queue({ name: 'parked-dlq' });
    await parked.send({ n: 1 });
    await parked.whenIdle({ timeoutMs: 100 });
    expect(parked.peek()).toEqual(['{"n":1}']);
    // Once someone consumes it, it is idle only when the messages are handled.
    let handled = 0;
    parked.consume(async () => {
      handled += 1;
    });
    expect(parked.isIdle).toBe(false);
    await parked.whenIdle({ timeoutMs: 1000 });
    expect(handled).toBe(1);
  });

  it('runs at most `concurrency` handlers at once', async () => {
    const jobs = queue();
    let active = 0;
    let peak = 0;
    const done: number[] = [];
    jobs.consume(
      async (delivery) => {
        active += 1;
        peak = Math.max(peak, active);
        await sleep(15);
        active -= 1;
        done.push((JSON.parse(delivery.body) as Job).n);
      },
      { concurrency: 2 },
    );
    await jobs.sendBatch([1, 2, 3, 4, 5, 6].map((n) => ({ message: { n } })));
    await jobs.whenIdle({ timeoutMs: 2000 });
    expect(peak).toBe(2);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('stop() waits for running handlers and delivers nothing more', async () => {
    const jobs = queue();
    let finished = 0;
    let calls = 0;
    jobs.consume(async () => {
      calls += 1;
      await sleep(30);
      finished += 1;
    });
    await jobs.send({ n: 1 });
    await sleep(5); // the first delivery is now running
    await jobs.stop();
    expect(finished).toBe(1);

    await jobs.send({ n: 2 });
    await sleep(30);
    expect(calls).toBe(1);
    expect(jobs.peek()).toEqual(['{"n":2}']); // kept for a later consumer, not lost
  });

  it('stop({ abort: true }) aborts the running handler, which leaves its message for redelivery', async () => {
    const jobs = queue();
    jobs.consume(
      (_delivery, { signal }) =>
        new Promise<void>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason));
        }),
    );
    await jobs.send({ n: 1 });
    await sleep(5);
    await jobs.stop({ abort: true });
    expect(jobs.size).toBe(1);
  });

  it('leaves no timer behind after stop, even with a long delay pending', async () => {
    const before = timeouts();
    const jobs = queue({ timeScale: 1 });
    jobs.consume(async () => undefined);
    await jobs.send({ n: 1 }, { delaySeconds: 900 });
    expect(timeouts()).toBe(before + 1);
    await jobs.stop();
    expect(timeouts()).toBe(before);
  });

  it('refuses what SQS would refuse: a body over 1 MiB', async () => {
    const jobs = queue<{ text: string }>();
    await expect(jobs.send({ text: 'x'.repeat(1_048_576) })).rejects.toThrow(/exceeds the SQS limit/);
    expect(jobs.size).toBe(0);
  });
});

describe('whenAllIdle', () => {
  it('waits for a pipeline whose later stage feeds an earlier one', async () => {
    // Prepare: tasks → polls (delayed) → tasks once more, like a poll that re-queues work.
    const tasks = new MemoryQueue<{ hop: number }>({ name: 'tasks', timeScale });
    const polls = new MemoryQueue<{ hop: number }>({ name: 'polls', timeScale });
    const hops: number[] = [];
    tasks.consume(async (delivery) => {
      const { hop } = JSON.parse(delivery.body) as { hop: number };
      hops.push(hop);
      if (hop < 3) await polls.send({ hop: hop + 1 }, { delaySeconds: 3 });
    });
    polls.consume(async (delivery) => {
      const { hop } = JSON.parse(delivery.body) as { hop: number };
      hops.push(hop);
      await tasks.send({ hop: hop + 1 });
    });
    try {
      // Act
      await tasks.send({ hop: 0 });
      await whenAllIdle([tasks, polls], { timeoutMs: 3000 });
      // Assess
      expect(hops).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await Promise.all([tasks.stop(), polls.stop()]);
    }
  });
});
