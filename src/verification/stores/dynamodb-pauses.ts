import type { Item } from '../../aws/dynamodb';
import { pauseKey, type Pause, type Pauses } from './pauses';
import { StateTable, type StateTableOptions } from './state-table';

/**
 * Pauses as items of the state table (stores/pauses.ts): the pause as JSON in `pause`, beside it
 * what the conditions read — `round` (a number) and `state` — and its lifetime in `expires_at`.
 * An expired item counts as absent, as everywhere in the table.
 */
export class DynamoDbPauses implements Pauses {
  private readonly table: StateTable;

  constructor(options: StateTableOptions) {
    this.table = new StateTable(options);
  }

  async get(requestId: string): Promise<Pause | undefined> {
    const item = await this.table.get(pauseKey(requestId));
    if (!item?.pause?.S || !this.table.isLive(item)) return undefined;
    const pause = JSON.parse(item.pause.S) as Pause;
    return item.message_ts?.S ? { ...pause, message_ts: item.message_ts.S } : pause;
  }

  async open(pause: Pause, ttlSeconds: number): Promise<Pause> {
    // A later round replaces an earlier one; the same round (a redelivered question) keeps the first.
    const written = await this.table.ifMet(
      this.table.put({
        Item: this.item(pause, ttlSeconds),
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR #round < :round',
        ExpressionAttributeNames: { '#round': 'round' },
        ExpressionAttributeValues: { ':now': { N: String(this.table.nowSeconds()) }, ':round': { N: String(pause.round) } },
      }),
    );
    if (written) return pause;
    return (await this.get(pause.request_id)) ?? pause;
  }

  async close(requestId: string, round: number, to: Exclude<Pause['state'], 'waiting'>, how: { closed_by: string; answer?: Pause['answer'] }, ttlSeconds: number): Promise<boolean> {
    const current = await this.get(requestId);
    if (!current || current.round !== round || current.state !== 'waiting') return false;
    const { message_ts: _posted, ...rest } = current;
    const closed: Pause = { ...rest, state: to, closed_by: how.closed_by, ...(how.answer ? { answer: how.answer } : {}) };
    // An update, not a put: the message's ts, recorded beside the JSON, stays whatever order the two writes come in.
    return this.table.ifMet(
      this.table.update({
        Key: this.table.key(pauseKey(requestId)),
        UpdateExpression: 'SET #pause = :pause, #state = :to, expires_at = :expires',
        ConditionExpression: '#state = :waiting AND #round = :round AND expires_at > :now',
        ExpressionAttributeNames: { '#pause': 'pause', '#state': 'state', '#round': 'round' },
        ExpressionAttributeValues: {
          ':pause': { S: JSON.stringify(closed) },
          ':to': { S: to },
          ':waiting': { S: 'waiting' },
          ':round': { N: String(round) },
          ':now': { N: String(this.table.nowSeconds()) },
          ':expires': { N: String(this.table.nowSeconds() + Math.ceil(ttlSeconds)) },
        },
      }),
    );
  }

  async posted(requestId: string, round: number, messageTs: string): Promise<void> {
    await this.table.ifMet(
      this.table.update({
        Key: this.table.key(pauseKey(requestId)),
        UpdateExpression: 'SET message_ts = :ts',
        ConditionExpression: '#round = :round',
        ExpressionAttributeNames: { '#round': 'round' },
        ExpressionAttributeValues: { ':ts': { S: messageTs }, ':round': { N: String(round) } },
      }),
    );
  }

  private item(pause: Pause, ttlSeconds: number): Item {
    return {
      ...this.table.key(pauseKey(pause.request_id)),
      pause: { S: JSON.stringify(pause) },
      round: { N: String(pause.round) },
      state: { S: pause.state },
      expires_at: { N: String(this.table.nowSeconds() + Math.ceil(ttlSeconds)) },
    };
  }
}
