import { SqsQueue, sqsClient } from '../../src/queue/sqs-queue';
import { installDateClock, type DateClock } from '../support/date-clock';
import { startFakeSqs, type FakeSqs } from '../support/fake-sqs';

/**
 * The fault suite replays minutes in milliseconds by faking Date alone. That is only honest if
 * nothing else is faked: timers, sockets, the AWS client's request timeouts and abort signals must keep
 * real time, or a "bounded" call would be bounded by a clock the test moves.
 */
let clock: DateClock;
let sqs: FakeSqs;
beforeAll(async () => {
  clock = installDateClock();
  sqs = await startFakeSqs();
});
afterAll(async () => {
  await sqs.close();
  jest.useRealTimers();
});

describe('a Date-only fake clock', () => {
  it('moves Date where it is told and nowhere else, while timers and performance run in real time', async () => {
    const origin = clock.begin();
    expect(Date.now()).toBe(origin);
    const realStart = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 30));
    await new Promise((resolve) => setImmediate(resolve));
    expect(performance.now() - realStart).toBeGreaterThanOrEqual(25);
    expect(Date.now()).toBe(origin);
    expect(new Date().getTime()).toBe(origin);

    clock.at(5 * 60_000);
    expect(Date.now()).toBe(origin + 5 * 60_000);
    expect(() => clock.at(0)).toThrow(/does not go back/);
  });

  it("leaves sockets, the AWS client's request timeout and AbortSignal.timeout on real time", async () => {
    clock.begin();
    const client = sqsClient({ bounds: { connectionTimeoutMs: 500, requestTimeoutMs: 300, maxAttempts: 1 }, endpoint: sqs.endpoint });
    const queue = new SqsQueue<string>({ client, queueUrl: sqs.queueUrl('tasks') });
    await queue.send('over a real socket');
    expect(sqs.messages('tasks').map((m) => m.body)).toEqual(['"over a real socket"']);

    sqs.failNext({ stall: true });
    const realStart = performance.now();
    await expect(queue.send('stalled')).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - realStart).toBeGreaterThanOrEqual(250);

    const aborted = await new Promise<unknown>((resolve) => AbortSignal.timeout(20).addEventListener('abort', (event) => resolve((event.target as AbortSignal).reason)));
    expect(aborted).toMatchObject({ name: 'TimeoutError' });
  });
});
