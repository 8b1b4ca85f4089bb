import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsQueue } from '../../../src/queue/sqs-queue';

/**
 * SDK clients and adapters built once per container, outside the handler, so warm invocations
 * reuse their connections. Each Lambda imports only the builders it uses, so its bundle carries
 * only the SDK clients it calls.
 */
export function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

let sqs: SQSClient | undefined;
export function sqsQueue<T>(urlVariable: string): SqsQueue<T> {
  sqs ??= new SQSClient({});
  return new SqsQueue<T>({ client: sqs, queueUrl: required(urlVariable) });
}

let dynamodb: DynamoDBClient | undefined;
export function dynamoDb(): DynamoDBClient {
  dynamodb ??= new DynamoDBClient({});
  return dynamodb;
}
