import { systemClock, type Clock } from '../../clock';
import { liveReplyKey, type LiveReplies, type LiveReply } from './live-replies';

/** At most this many records are kept in memory; the oldest goes first. */
const MAX_RECORDS = 10_000;

/**
 * LiveReplies in memory, for local runs and tests. Each write checks and changes the record in one
 * step (no await between), so writers racing in one process meet its conditions as they would
 * DynamoDB's. A write here is never lost, so none needs to recognise itself.
 */
export class MemoryLiveReplies implements LiveReplies {
  private readonly records = new Map<string, { reply: LiveReply; expiresAt: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async get(requestId: string): Promise<LiveReply | undefined> {
    return this.read(requestId);
  }

  async create(requestId: string, reply: LiveReply, ttlSeconds: number): Promise<LiveReply> {
    const existing = this.read(requestId);
    if (existing) return existing;
    if (this.records.size >= MAX_RECORDS) this.records.delete(this.records.keys().next().value!);
    this.put(requestId, reply, ttlSeconds);
    return copy(reply);
  }

  async advance(requestId: string, from: number, next: LiveReply, ttlSeconds: number): Promise<boolean> {
    const existing = this.read(requestId);
    if (!existing || existing.shown !== from || existing.pending) return false;
    this.put(requestId, next, ttlSeconds);
    return true;
  }

  async settle(requestId: string, token: string, next: LiveReply, ttlSeconds: number): Promise<boolean> {
    const existing = this.read(requestId);
    if (existing?.pending?.token !== token) return false;
    this.put(requestId, next, ttlSeconds);
    return true;
  }

  private read(requestId: string): LiveReply | undefined {
    const record = this.records.get(liveReplyKey(requestId));
    return record && record.expiresAt > this.clock.now() ? copy(record.reply) : undefined;
  }

  private put(requestId: string, reply: LiveReply, ttlSeconds: number): void {
    this.records.set(liveReplyKey(requestId), { reply: copy(reply), expiresAt: this.clock.now() + ttlSeconds * 1000 });
  }
}

function copy(reply: LiveReply): LiveReply {
  return { ...reply, ...(reply.pending ? { pending: { ...reply.pending } } : {}), ...(reply.cards ? { cards: { ...reply.cards } } : {}), ...(reply.openCards ? { openCards: { ...reply.openCards } } : {}) };
}
