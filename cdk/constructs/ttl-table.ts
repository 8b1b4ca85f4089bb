import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/** No DeleteItem: no store deletes an item — TTL removes them, and a release or an erase is a write. */
export type ItemAction = 'dynamodb:GetItem' | 'dynamodb:PutItem' | 'dynamodb:UpdateItem';

export interface TtlTableProps {
  /** The string partition key. */
  readonly partitionKey: string;
  /** The number attribute (epoch seconds) DynamoDB expires items by. @default 'expires_at' */
  readonly ttlAttribute?: string;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** A customer-managed key (governance=strict). @default the AWS-owned key */
  readonly encryptionKey?: IKey;
}

/**
 * A DynamoDB table of short-lived items looked up by key: on-demand, TTL, point-in-time
 * recovery, encrypted with the AWS-owned key (or a customer-managed one). Grants name item actions exactly, on the table
 * only (no index ARNs, since there are no indexes and no queries).
 */
export class TtlTable extends Construct {
  public readonly table: Table;

  constructor(scope: Construct, id: string, props: TtlTableProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: props.partitionKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: props.ttlAttribute ?? 'expires_at',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(props.encryptionKey ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey } : { encryption: TableEncryption.DEFAULT }),
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
  }

  grantItems(grantee: IGrantable, ...actions: ItemAction[]): Grant {
    // Table.grant names table actions only; a customer-managed key must let the caller read and
    // write through it too (the key actions grantReadWriteData would add).
    this.table.encryptionKey?.grant(grantee, 'kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*');
    return this.table.grant(grantee, ...actions);
  }
}
