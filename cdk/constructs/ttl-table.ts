import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
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

  /**
   * Item actions on the items whose partition key starts with one of `keyPrefixes`, and no other:
   * IAM's `dynamodb:LeadingKeys` is the partition key of every item a request names, and
   * `ForAllValues:StringLike` holds only when each is `<prefix>…`. GetItem, PutItem and UpdateItem
   * name one key each; a Scan names none — and "for all values" of nothing holds — so no Scan (nor
   * Query on an index) may ever be granted this way (docs/deploy.md, "Who may touch which keys").
   */
  grantItemsUnder(grantee: IGrantable, keyPrefixes: readonly string[], ...actions: ItemAction[]): Grant {
    if (keyPrefixes.length === 0) throw new Error('grantItemsUnder: no key prefix to grant');
    const wildcard = keyPrefixes.find((prefix) => /[*?]/.test(prefix));
    if (wildcard !== undefined) throw new Error(`grantItemsUnder: the key prefix ${wildcard} holds an IAM wildcard (* or ?)`);
    this.table.encryptionKey?.grant(grantee, 'kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*');
    return Grant.addToPrincipal({
      grantee,
      actions,
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': keyPrefixes.map((prefix) => `${prefix}*`) } },
    });
  }
}
