import { systemClock, type Clock } from '../../clock';
import { botThreadKey, type BotThread, type BotThreads } from './bot-threads';

/** At most this many threads are kept in memory; the one that expires first goes when it is full. */
const MAX_THREADS = 10_000;

/** BotThreads in memory, for local runs and tests. */
export class MemoryBotThreads implements BotThreads {
  private readonly expiries = new Map<string, number>();

  constructor(private readonly clock: Clock = systemClock) {}

  async remember(thread: BotThread, ttlSeconds: number): Promise<void> {
    const key = botThreadKey(thread);
    this.expiries.delete(key);
    if (this.expiries.size >= MAX_THREADS) this.expiries.delete(this.expiries.keys().next().value!);
    this.expiries.set(key, this.clock.now() + ttlSeconds * 1000);
  }

  async has(thread: BotThread): Promise<boolean> {
    return (this.expiries.get(botThreadKey(thread)) ?? 0) > this.clock.now();
  }
}
