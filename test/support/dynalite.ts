import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { AddressInfo } from 'node:net';
import { DynamoDb } from '../../src/aws/dynamodb';
// dynalite ships no types; it is a real DynamoDB API implementation on top of LevelDB (in memory here).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: { createTableMs: number; deleteTableMs: number; updateTableMs: number }) => import('node:http').Server;

export type LocalDynamoDb = {
  /** The SDK's client: tables, and the execution zone's task store. */
  client: DynamoDBClient;
  /** The verification zone's client (src/aws/dynamodb.ts), on the same endpoint. */
  dynamodb: DynamoDb;
  endpoint: string;
  close(): Promise<void>;
};

/** Starts dynalite on loopback and returns real DynamoDB clients pointed at it. */
export async function startLocalDynamoDb(): Promise<LocalDynamoDb> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const dynamodb = new DynamoDb({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  return {
    client,
    dynamodb,
    endpoint,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Creates a table with a single string partition key and (optionally) a TTL attribute. */
export async function createTable(client: DynamoDBClient, tableName: string, keyName: string, ttlAttribute?: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      KeySchema: [{ AttributeName: keyName, KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: keyName, AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  if (ttlAttribute) {
    await client
      .send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true } }))
      .catch(() => undefined); // dynalite does not implement TTL settings; expiry is enforced by the stores themselves.
  }
}

/**
 * A dynalite with the verification zone's state table (`state`: key `pk`, TTL on `expires_at`) for
 * the whole test file: started before its tests, closed after. Returns a getter (the database
 * exists only once beforeAll has run).
 */
export function useStateTable(): () => LocalDynamoDb {
  let db: LocalDynamoDb | undefined;
  beforeAll(async () => {
    db = await startLocalDynamoDb();
    await createTable(db.client, 'state', 'pk', 'expires_at');
  });
  afterAll(() => db?.close());
  return () => {
    if (!db) throw new Error('the state table is started in beforeAll');
    return db;
  };
}
