import { Duration } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Queue, QueueEncryption, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { OperationsAlarms } from './operations-alarms';

export interface QueueWithDlqProps {
  /** Set with the consumer's timeout: at least its timeout, AWS advises 6× for Lambda. */
  readonly visibilityTimeout: Duration;
  /** Receives before a message moves to the DLQ; the consumer reads the same number (last-receive replies). */
  readonly maxReceiveCount: number;
  /** Alarms on the DLQ's depth. */
  readonly alarms: OperationsAlarms;
  /** What the queue carries, for the alarm description. */
  readonly purpose: string;
  /** @default 4 days (SQS default) */
  readonly retentionPeriod?: Duration;
  /** Encrypt both queues with this customer-managed key (governance=strict). @default SQS-managed encryption */
  readonly encryptionKey?: IKey;
}

/**
 * A standard queue with its dead-letter queue: TLS-only, SQS-managed encryption (or a
 * customer-managed key), and an alarm when anything lands in the DLQ. The DLQ keeps messages for 14 days, the longest SQS allows, so
 * an operator has time to inspect and redrive them.
 */
export class QueueWithDlq extends Construct {
  public readonly queue: Queue;
  public readonly deadLetterQueue: Queue;
  public readonly maxReceiveCount: number;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps) {
    super(scope, id);
    if (!Number.isInteger(props.maxReceiveCount) || props.maxReceiveCount < 1 || props.maxReceiveCount > 1000) {
      throw new Error(`${this.node.path}: maxReceiveCount must be an integer in 1..1000 (got ${props.maxReceiveCount})`);
    }
    this.maxReceiveCount = props.maxReceiveCount;
    const encryption = props.encryptionKey
      ? { encryption: QueueEncryption.KMS, encryptionMasterKey: props.encryptionKey }
      : { encryption: QueueEncryption.SQS_MANAGED };
    this.deadLetterQueue = new Queue(this, 'Dlq', {
      ...encryption,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      // Written out, this is what SQS does when it is absent (any queue of the account may use it as
      // its DLQ); naming only the source queue would make the two queues refer to each other. Written
      // out, it also marks the queue as a DLQ for Control Tower's CT.SQS.PR.1, which asks every other
      // queue for a DLQ of its own.
      redriveAllowPolicy: { redrivePermission: RedrivePermission.ALLOW_ALL },
    });
    this.queue = new Queue(this, 'Queue', {
      ...encryption,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      ...(props.retentionPeriod ? { retentionPeriod: props.retentionPeriod } : {}),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
    props.alarms.deadLetterQueue(this, 'DlqAlarm', this.deadLetterQueue, props.purpose);
  }
}
