import { botThreadKey, type BotThread, type BotThreads } from './bot-threads';
import { StateTable, type StateTableOptions } from './state-table';

export type DynamoDbBotThreadsOptions = StateTableOptions;

/**
 * BotThreads as one item per thread in the state table. A put is idempotent (a retried write just
 * moves the expiry again), and DynamoDB deletes expired items only eventually, so a read treats an
 * item past its `expires_at` as absent.
 */
export class DynamoDbBotThreads implements BotThreads {
  private readonly table: StateTable;

  constructor(options: DynamoDbBotThreadsOptions) {
    this.table = new StateTable(options);
  }

  async remember(thread: BotThread, ttlSeconds: number): Promise<void> {
    const expiresAt = this.table.nowSeconds() + Math.ceil(ttlSeconds);
    await this.table.put({ Item: { ...this.table.key(botThreadKey(thread)), expires_at: { N: String(expiresAt) } } });
  }

  async has(thread: BotThread): Promise<boolean> {
    // An eventually consistent read: a record written a moment ago by the poster is rarely missed,
    // and the next reply in the thread finds it.
    return this.table.isLive(await this.table.get(botThreadKey(thread), { consistent: false, projection: 'expires_at' }));
  }
}
