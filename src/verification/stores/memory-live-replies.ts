import { systemClock, type Clock } from '../../clock';
import { liveReplyKey, type LiveReplies, type LiveReply } from './live-replies';

/** At most this many records are kept in memory; the oldest goes first. */
const MAX_RECORDS = 10_000;

/** LiveReplies in memory, for local runs and tests. */
export class MemoryLiveReplies implements LiveReplies {
  private readonly records = new Map<string, { reply: LiveReply; expiresAt: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async get(requestId: string): Promise<LiveReply | undefined> {
    const record = this.records.get(liveReplyKey(requestId));
    return record && record.expiresAt > this.clock.now() ? { ...record.reply } : undefined;
  }

  async create(requestId: string, reply: LiveReply, ttlSeconds: number): Promise<LiveReply> {
    const existing = await this.get(requestId);
    if (existing) return existing;
    if (this.records.size >= MAX_RECORDS) this.records.delete(this.records.keys().next().value!);
    this.records.set(liveReplyKey(requestId), { reply: { ...reply }, expiresAt: this.clock.now() + ttlSeconds * 1000 });
    return { ...reply };
  }

  async advance(requestId: string, from: number, next: LiveReply, ttlSeconds: number): Promise<boolean> {
    const existing = await this.get(requestId);
    if (!existing || existing.shown !== from) return false;
    this.records.set(liveReplyKey(requestId), { reply: { ...next }, expiresAt: this.clock.now() + ttlSeconds * 1000 });
    return true;
  }
}
