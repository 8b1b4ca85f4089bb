import { systemClock, type Clock } from '../../clock';
import { pauseKey, type Pause, type Pauses } from './pauses';

/** At most this many pauses are kept in memory; the oldest goes first. */
const MAX_PAUSES = 10_000;

/**
 * Pauses in memory, for local runs and tests (stores/pauses.ts). Each write checks and changes the
 * record in one step (no await between), as DynamoDB's conditional writes do; values are copied in
 * and out, as a table would.
 */
export class MemoryPauses implements Pauses {
  private readonly entries = new Map<string, { json: string; expiresAt: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async get(requestId: string): Promise<Pause | undefined> {
    return this.read(requestId);
  }

  async open(pause: Pause, ttlSeconds: number): Promise<Pause> {
    const existing = this.read(pause.request_id);
    if (existing && existing.round >= pause.round) return existing;
    this.write(pause, ttlSeconds);
    return { ...pause };
  }

  async close(requestId: string, round: number, to: Exclude<Pause['state'], 'waiting'>, how: { closed_by: string; answer?: Pause['answer'] }, ttlSeconds: number): Promise<boolean> {
    const existing = this.read(requestId);
    if (!existing || existing.round !== round || existing.state !== 'waiting') return false;
    this.write({ ...existing, state: to, closed_by: how.closed_by, ...(how.answer ? { answer: how.answer } : {}) }, ttlSeconds);
    return true;
  }

  async posted(requestId: string, round: number, messageTs: string): Promise<void> {
    const key = pauseKey(requestId);
    const entry = this.entries.get(key);
    const existing = this.read(requestId);
    if (entry && existing?.round === round) entry.json = JSON.stringify({ ...existing, message_ts: messageTs });
  }

  private read(requestId: string): Pause | undefined {
    const entry = this.entries.get(pauseKey(requestId));
    if (!entry || entry.expiresAt <= this.clock.now()) return undefined;
    return JSON.parse(entry.json) as Pause;
  }

  private write(pause: Pause, ttlSeconds: number): void {
    const key = pauseKey(pause.request_id);
    this.entries.delete(key);
    if (this.entries.size >= MAX_PAUSES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { json: JSON.stringify(pause), expiresAt: this.clock.now() + ttlSeconds * 1000 });
  }
}
