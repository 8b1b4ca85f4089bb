import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock';
import { clampDelaySeconds, type Delivery, type DeliveryHandler, type EnqueueOptions, type Queue } from './queue';

/** SQS limits kept here too, so a message that SQS would refuse fails locally as well. */
const MAX_MESSAGE_BYTES = 1_048_576;
const MAX_ATTRIBUTES = 10;

export type MemoryQueueOptions = {
  name: string;
  /** How long a failed delivery stays invisible before it is delivered again. @default 30 */
  visibilityTimeoutSeconds?: number;
  /** As in an SQS redrive policy: a message received this many times goes to the DLQ next. */
  maxReceiveCount?: number;
  /** Where messages go past maxReceiveCount; without one they are dropped (and reported as dead-lettered). */
  deadLetterQueue?: MemoryQueue<unknown>;
  /** Multiplies every delay and timeout: 0.01 turns a 2 s delay into 20 ms for tests and demos. @default 1 */
  timeScale?: number;
  /** When messages become visible and events happen. Its timers wait in real time: delays scale with timeScale, not with the clock. @default systemClock */
  clock?: Clock;
  onEvent?: QueueEventListener;
};

export type QueueEventType = 'sent' | 'delivered' | 'succeeded' | 'failed' | 'dead-lettered';

export type QueueEvent = {
  type: QueueEventType;
  queue: string;
  messageId: string;
  body: string;
  /** Receives so far (0 for 'sent'). */
  receiveCount: number;
  attributes: Readonly<Record<string, string>>;
  /** For 'sent': the delay the message waits before it can be received. */
  delaySeconds?: number;
  /** For 'failed': what the handler threw. */
  error?: unknown;
  /** For 'dead-lettered': the DLQ's name, absent when the message was dropped. */
  deadLetterQueue?: string;
  at: number;
};

export type QueueEventListener = (event: QueueEvent) => void;

type Stored = {
  id: string;
  body: string;
  attributes: Readonly<Record<string, string>>;
  receiveCount: number;
  /** Epoch ms from which the message may be received (delay, or visibility timeout after a failure). */
  visibleAt: number;
  inFlight: boolean;
  /** Insertion order, so equally visible messages go out first-in first-out. */
  seq: number;
};

type Consumer = { handler: DeliveryHandler; concurrency: number };

/**
 * The Queue port in memory, with the SQS behaviour the pipeline relies on: per-message delays,
 * a visibility timeout after a failed delivery, receive counts, and a redrive to a dead-letter
 * queue past maxReceiveCount. Bodies are stored as JSON text, so consumers parse exactly what
 * they would read from SQS.
 *
 * One difference from SQS, on purpose: a message stays invisible for as long as its handler runs
 * (as if the consumer kept extending the visibility timeout), so a slow local handler is never
 * delivered twice at once.
 */
export class MemoryQueue<T> implements Queue<T> {
  readonly name: string;
  private readonly visibilityMs: number;
  readonly maxReceiveCount: number | undefined;
  /** As configured, before time scaling (what SQS would be set to). */
  readonly visibilityTimeoutSeconds: number;
  private readonly deadLetterQueue: MemoryQueue<unknown> | undefined;
  private readonly timeScale: number;
  private readonly clock: Clock;
  private readonly messages = new Map<string, Stored>();
  private readonly listeners = new Set<QueueEventListener>();
  private readonly running = new Map<string, { settled: Promise<void>; controller: AbortController }>();
  private idleWaiters: Array<() => void> = [];
  private consumer: Consumer | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private seq = 0;

  constructor(options: MemoryQueueOptions) {
    const timeScale = options.timeScale ?? 1;
    const visibility = options.visibilityTimeoutSeconds ?? 30;
    if (!(timeScale >= 0) || !Number.isFinite(timeScale)) throw new RangeError(`timeScale must be a finite number ≥ 0, got ${timeScale}`);
    if (!(visibility >= 0) || visibility > 43_200) throw new RangeError(`visibilityTimeoutSeconds must be 0–43200, got ${visibility}`);
    if (options.maxReceiveCount !== undefined && !(Number.isInteger(options.maxReceiveCount) && options.maxReceiveCount >= 1)) {
      throw new RangeError(`maxReceiveCount must be an integer ≥ 1, got ${options.maxReceiveCount}`);
    }
    this.name = options.name;
    this.timeScale = timeScale;
    this.clock = options.clock ?? systemClock;
    this.visibilityTimeoutSeconds = visibility;
    this.visibilityMs = visibility * 1000 * timeScale;
    this.maxReceiveCount = options.maxReceiveCount;
    this.deadLetterQueue = options.deadLetterQueue;
    if (options.onEvent) this.listeners.add(options.onEvent);
  }

  async send(message: T, options?: EnqueueOptions): Promise<void> {
    this.enqueue(serialize(message), options);
  }

  async sendBatch(messages: ReadonlyArray<{ message: T; options?: EnqueueOptions }>): Promise<void> {
    // Validate everything first, so a bad entry does not leave half a batch queued.
    const bodies = messages.map(({ message, options }) => {
      const body = serialize(message);
      validate(body, options?.attributes);
      return body;
    });
    bodies.forEach((body, index) => this.enqueue(body, messages[index]!.options));
  }

  /**
   * Starts delivering to `handler`, at most `concurrency` messages at a time. A handler that
   * resolves deletes its message; one that throws leaves it to be delivered again after the
   * visibility timeout.
   */
  consume(handler: DeliveryHandler, options: { concurrency?: number } = {}): void {
    if (this.consumer) throw new Error(`queue ${this.name} already has a consumer`);
    const concurrency = options.concurrency ?? 4;
    if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw new RangeError(`concurrency must be an integer ≥ 1, got ${concurrency}`);
    this.consumer = { handler, concurrency };
    this.pump();
  }

  /**
   * Stops delivering and waits for the handlers already running. With `abort`, their signal is
   * aborted first (as a Lambda about to time out would be). Messages stay stored; a later
   * consume() picks them up again. No timer is left behind to keep the process alive.
   */
  async stop(options: { abort?: boolean } = {}): Promise<void> {
    this.consumer = undefined;
    this.clearWakeTimer();
    const running = [...this.running.values()];
    if (options.abort) for (const { controller } of running) controller.abort(new Error(`queue ${this.name} stopped`));
    await Promise.all(running.map(({ settled }) => settled));
    this.settleIdleWaiters();
  }

  /**
   * Resolves once the queue has nothing left to do: no handler running and, while it has a
   * consumer, no message stored — visible, delayed or waiting out a visibility timeout. A queue
   * nobody consumes (a DLQ, or one stopped) is idle once its handlers have settled: its messages
   * are parked until someone reads them, so a pipeline that includes its DLQs can still settle.
   * Pass `timeoutMs` to fail with a description of what is left instead of waiting forever.
   */
  whenIdle(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.isIdle) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
      this.idleWaiters.push(done);
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.idleWaiters = this.idleWaiters.filter((waiter) => waiter !== done);
          reject(new Error(`queue ${this.name} not idle after ${options.timeoutMs} ms: ${this.describe()}`));
        }, options.timeoutMs);
      }
    });
  }

  get isIdle(): boolean {
    return this.running.size === 0 && (!this.consumer || this.messages.size === 0);
  }

  /** Bodies of every stored message (visible, delayed or in flight), oldest first. */
  peek(): string[] {
    return [...this.messages.values()].sort((a, b) => a.seq - b.seq).map((message) => message.body);
  }

  get size(): number {
    return this.messages.size;
  }

  /** Adds a listener for this queue's events; returns a function that removes it. */
  subscribe(listener: QueueEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private enqueue(body: string, options: EnqueueOptions | undefined, receiveCount = 0): void {
    const attributes = { ...(options?.attributes ?? {}) };
    validate(body, attributes);
    const delaySeconds = clampDelaySeconds(options?.delaySeconds ?? 0);
    const message: Stored = {
      id: randomUUID(),
      body,
      attributes,
      receiveCount,
      visibleAt: this.clock.now() + delaySeconds * 1000 * this.timeScale,
      inFlight: false,
      seq: (this.seq += 1),
    };
    this.messages.set(message.id, message);
    this.emit('sent', message, { delaySeconds });
    this.pump();
  }

  /** Hands out every message that is due, up to the concurrency limit, then sleeps until the next one is. */
  private pump(): void {
    const consumer = this.consumer;
    while (consumer && this.running.size < consumer.concurrency) {
      const next = this.nextDue(this.clock.now());
      if (!next) break;
      if (this.maxReceiveCount !== undefined && next.receiveCount >= this.maxReceiveCount) {
        this.deadLetter(next);
        continue;
      }
      this.deliver(next, consumer.handler);
    }
    this.scheduleWake();
    this.settleIdleWaiters();
  }

  private nextDue(now: number): Stored | undefined {
    let best: Stored | undefined;
    for (const message of this.messages.values()) {
      if (message.inFlight || message.visibleAt > now) continue;
      if (!best || message.visibleAt < best.visibleAt || (message.visibleAt === best.visibleAt && message.seq < best.seq)) best = message;
    }
    return best;
  }

  private deliver(message: Stored, handler: DeliveryHandler): void {
    message.receiveCount += 1;
    message.inFlight = true;
    const controller = new AbortController();
    const delivery: Delivery = { messageId: message.id, body: message.body, receiveCount: message.receiveCount, attributes: { ...message.attributes } };
    this.emit('delivered', message);
    // Started on a later tick so a handler that throws synchronously is a failed delivery too.
    const settled = Promise.resolve()
      .then(() => handler(delivery, { signal: controller.signal }))
      .then(
        () => {
          this.messages.delete(message.id);
          this.emit('succeeded', message);
        },
        (error: unknown) => {
          message.inFlight = false;
          message.visibleAt = this.clock.now() + this.visibilityMs;
          this.emit('failed', message, { error });
        },
      )
      .finally(() => {
        this.running.delete(message.id);
        this.pump();
      });
    this.running.set(message.id, { settled, controller });
  }

  private deadLetter(message: Stored): void {
    this.messages.delete(message.id);
    this.emit('dead-lettered', message, this.deadLetterQueue ? { deadLetterQueue: this.deadLetterQueue.name } : {});
    // The body and attributes move unchanged, as with an SQS redrive; the receive count restarts.
    this.deadLetterQueue?.enqueue(message.body, { attributes: message.attributes });
  }

  private scheduleWake(): void {
    const consumer = this.consumer;
    if (!consumer) return;
    let earliest = Infinity;
    for (const message of this.messages.values()) if (!message.inFlight && message.visibleAt < earliest) earliest = message.visibleAt;
    const now = this.clock.now();
    // Nothing waiting, or something is due but every slot is busy: a settling handler pumps again.
    if (earliest === Infinity || (earliest <= now && this.running.size >= consumer.concurrency)) {
      this.clearWakeTimer();
      return;
    }
    // Due already with a slot free: the clock moved on since pump() looked (it reads the clock
    // once, this reads it again). Nothing else would pump, so wake at once.
    if (this.wakeTimer && this.wakeAt <= earliest) return;
    this.clearWakeTimer();
    this.wakeAt = earliest;
    // Timers can fire a millisecond early; pump() then finds nothing due and sets a new one.
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wakeAt = Infinity;
      this.pump();
    }, Math.max(earliest <= now ? 0 : 1, earliest - now));
  }

  private clearWakeTimer(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.wakeAt = Infinity;
  }

  private settleIdleWaiters(): void {
    if (!this.isIdle || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }

  private emit(type: QueueEventType, message: Stored, extra: Partial<QueueEvent> = {}): void {
    if (this.listeners.size === 0) return;
    const event: QueueEvent = { type, queue: this.name, messageId: message.id, body: message.body, receiveCount: message.receiveCount, attributes: message.attributes, at: this.clock.now(), ...extra };
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // Tracing must never change how messages flow.
      }
    }
  }

  private describe(): string {
    const now = this.clock.now();
    let inFlight = 0;
    let waiting = 0;
    let visible = 0;
    for (const message of this.messages.values()) {
      if (message.inFlight) inFlight += 1;
      else if (message.visibleAt > now) waiting += 1;
      else visible += 1;
    }
    return `${visible} visible, ${waiting} delayed or invisible, ${inFlight} in flight${this.consumer ? '' : ', no consumer'}`;
  }
}

/**
 * Waits until every queue is idle at the same moment. Waiting on each in turn is not enough in a
 * pipeline: a handler on a later queue may send to an earlier one after that one went idle.
 */
export async function whenAllIdle(queues: ReadonlyArray<MemoryQueue<unknown>>, options: { timeoutMs?: number } = {}): Promise<void> {
  // A wait, timed as the timers it waits on are.
  const deadline = options.timeoutMs === undefined ? undefined : performance.now() + options.timeoutMs;
  for (;;) {
    const timeoutMs = deadline === undefined ? undefined : Math.max(0, deadline - performance.now());
    await Promise.all(queues.map((queue) => queue.whenIdle(timeoutMs === undefined ? {} : { timeoutMs })));
    // One macrotask later, so sends already scheduled by settling handlers have landed.
    await new Promise((resolve) => setImmediate(resolve));
    if (queues.every((queue) => queue.isIdle)) return;
  }
}

function serialize(message: unknown): string {
  const body = JSON.stringify(message);
  if (body === undefined) throw new TypeError('message cannot be represented as JSON');
  return body;
}

function validate(body: string, attributes: Readonly<Record<string, string>> | undefined): void {
  const entries = Object.entries(attributes ?? {});
  if (entries.length > MAX_ATTRIBUTES) throw new RangeError(`a message may carry at most ${MAX_ATTRIBUTES} attributes, got ${entries.length}`);
  let bytes = Buffer.byteLength(body);
  for (const [name, value] of entries) bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 'String'.length;
  if (bytes > MAX_MESSAGE_BYTES) throw new RangeError(`message of ${bytes} bytes exceeds the SQS limit of ${MAX_MESSAGE_BYTES}`);
}
