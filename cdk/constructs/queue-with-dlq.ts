import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
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
}

/**
 * A standard queue with its dead-letter queue: TLS-only, SQS-managed encryption, and an alarm
 * when anything lands in the DLQ. The DLQ keeps messages for 14 days, the longest SQS allows, so
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
    this.deadLetterQueue = new Queue(this, 'Dlq', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      ...(props.retentionPeriod ? { retentionPeriod: props.retentionPeriod } : {}),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
    props.alarms.deadLetterQueue(this, 'DlqAlarm', this.deadLetterQueue, props.purpose);
  }
}
