import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { boundedClientConfig } from '../../../src/aws/bounded-client';
import { SqsQueue } from '../../../src/queue/sqs-queue';
import { DynamoDbBotThreads } from '../../../src/verification/stores/dynamodb-bot-threads';
import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { DynamoDbLiveReplies } from '../../../src/verification/stores/dynamodb-live-replies';

/**
 * SDK clients and adapters built once per container, outside the handler, so warm invocations
 * reuse their connections. Each Lambda imports only the builders it uses, so its bundle carries
 * only the SDK clients it calls. Names and URLs come from the parsed configuration; a missing
 * one fails the cold start with the variable's name.
 */
export function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

let sqs: SQSClient | undefined;
export function sqsQueue<T>(queueUrl: string | undefined, name: string): SqsQueue<T> {
  sqs ??= new SQSClient(boundedClientConfig());
  return new SqsQueue<T>({ client: sqs, queueUrl: required(queueUrl, name) });
}

let dynamodb: DynamoDBClient | undefined;
export function dynamoDb(): DynamoDBClient {
  dynamodb ??= new DynamoDBClient(boundedClientConfig());
  return dynamodb;
}

export function claimStore(tableName: string | undefined): DynamoDbClaimStore {
  return new DynamoDbClaimStore({ client: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

export function botThreads(tableName: string | undefined): DynamoDbBotThreads {
  return new DynamoDbBotThreads({ client: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

export function liveReplies(tableName: string | undefined): DynamoDbLiveReplies {
  return new DynamoDbLiveReplies({ client: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}
