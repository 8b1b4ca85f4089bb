import { DynamoDbPauses } from '../../../src/verification/stores/dynamodb-pauses';
import { DynamoDb } from '../../../src/aws/dynamodb';
import type { AwsJsonClient } from '../../../src/aws/aws-json-client';
import { SqsQueue, sqsClient } from '../../../src/queue/sqs-queue';
import { DynamoDbBotThreads } from '../../../src/verification/stores/dynamodb-bot-threads';
import { DynamoDbClaimStore } from '../../../src/verification/stores/dynamodb-claim-store';
import { DynamoDbCounterStore } from '../../../src/verification/stores/dynamodb-counter-store';
import { DynamoDbLiveReplies } from '../../../src/verification/stores/dynamodb-live-replies';
import { DynamoDbRecords } from '../../../src/verification/stores/dynamodb-records';
import { DynamoDbUsageStore } from '../../../src/verification/stores/dynamodb-usage-store';
import { DynamoDbFileUploadStates } from '../../../src/verification/files-out/dynamodb-upload-states';
import { DynamoDbOutgoingFiles } from '../../../src/verification/files-out/dynamodb-outgoing-files';

/**
 * AWS clients and adapters built once per container, outside the handler, so warm invocations
 * reuse their connections. DynamoDB and SQS are reached with the small JSON client
 * (src/aws/aws-json-client.ts), not the SDK's clients: bench part 1 and the README's dependency
 * table say why. Names and URLs come from the parsed configuration; a missing one fails the cold
 * start with the variable's name.
 */
export function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

let sqs: AwsJsonClient | undefined;
export function sqsQueue<T>(queueUrl: string | undefined, name: string): SqsQueue<T> {
  sqs ??= sqsClient();
  return new SqsQueue<T>({ client: sqs, queueUrl: required(queueUrl, name) });
}

let dynamodb: DynamoDb | undefined;
function dynamoDb(): DynamoDb {
  dynamodb ??= new DynamoDb();
  return dynamodb;
}

export function claimStore(tableName: string | undefined): DynamoDbClaimStore {
  return new DynamoDbClaimStore({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

export function counterStore(tableName: string | undefined): DynamoDbCounterStore {
  return new DynamoDbCounterStore({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

export function botThreads(tableName: string | undefined): DynamoDbBotThreads {
  return new DynamoDbBotThreads({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

export function liveReplies(tableName: string | undefined): DynamoDbLiveReplies {
  return new DynamoDbLiveReplies({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

/** The daily usage counters (zone usage, budgets) in the state table. */
export function usageStore(tableName: string | undefined): DynamoDbUsageStore {
  return new DynamoDbUsageStore({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

/** Where an answer's files wait for slack-poster, in the state table. */
export function outgoingFiles(tableName: string | undefined): DynamoDbOutgoingFiles {
  return new DynamoDbOutgoingFiles({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

/** How far each file's upload got, in the state table. */
export function fileUploadStates(tableName: string | undefined): DynamoDbFileUploadStates {
  return new DynamoDbFileUploadStates({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

/** The agent surface's records (running tasks, Stops, contexts, feedback) in the state table. */
/** Tasks paused on a question (src/verification/stores/pauses.ts), and the claims that resume and expire them once. */
export function questionPorts(tableName: string | undefined): { pauses: DynamoDbPauses; claims: ReturnType<typeof claimStore> } {
  return { pauses: pauses(tableName), claims: claimStore(tableName) };
}

export function pauses(tableName: string | undefined): DynamoDbPauses {
  return new DynamoDbPauses({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}

export function records(tableName: string | undefined): DynamoDbRecords {
  return new DynamoDbRecords({ dynamodb: dynamoDb(), tableName: required(tableName, 'STATE_TABLE_NAME') });
}
