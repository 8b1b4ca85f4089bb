import type {
  AttributeValue,
  GetItemCommandInput,
  GetItemCommandOutput,
  PutItemCommandInput,
  PutItemCommandOutput,
  UpdateItemCommandInput,
  UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { AwsJsonClient, DYNAMODB, isAwsError, type AwsJsonClientOptions, type AwsServiceError, type CallOptions } from './aws-json-client';

/**
 * The DynamoDB operations the verification zone's stores use, on the small JSON client
 * (src/aws/aws-json-client.ts). Inputs and outputs are the SDK's types — only types are imported,
 * so no SDK code is bundled: on the wire they are the same JSON (the stores use no binary values).
 */
export type Item = Record<string, AttributeValue>;
type Output<T> = Omit<T, '$metadata'>;

export class DynamoDb {
  private readonly client: AwsJsonClient;

  constructor(options: Omit<AwsJsonClientOptions, 'service'> = {}) {
    this.client = new AwsJsonClient({ ...options, service: DYNAMODB });
  }

  getItem(input: GetItemCommandInput, options?: CallOptions): Promise<Output<GetItemCommandOutput>> {
    return this.client.call('GetItem', input, options);
  }

  putItem(input: PutItemCommandInput, options?: CallOptions): Promise<Output<PutItemCommandOutput>> {
    return this.client.call('PutItem', input, options);
  }

  updateItem(input: UpdateItemCommandInput, options?: CallOptions): Promise<Output<UpdateItemCommandOutput>> {
    return this.client.call('UpdateItem', input, options);
  }
}

export function isConditionCheckFailure(error: unknown): error is AwsServiceError {
  return isAwsError(error, 'ConditionalCheckFailedException');
}

/** What a refused write met, when it asked for it with ReturnValuesOnConditionCheckFailure: ALL_OLD. */
export function itemMetBy(failure: AwsServiceError): Item | undefined {
  const item = failure.body.Item;
  return item && typeof item === 'object' ? (item as Item) : undefined;
}
