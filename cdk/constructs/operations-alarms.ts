import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledge } from './nag-acknowledgements';

export interface OperationsAlarmsProps {
  /**
   * An address subscribed to the topic (it must confirm the subscription).
   * @default - no subscription; subscribe the topic (output AlarmTopicArn) to your paging tool
   */
  readonly email?: string;
}

/**
 * One SNS topic per zone that every alarm of the zone notifies: a message in a dead-letter queue
 * (a user got an error reply, or will), any function error, and the pipeline's own metrics
 * (pipeline-alarms.ts).
 */
export class OperationsAlarms extends Construct {
  public readonly topic: Topic;
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: OperationsAlarmsProps = {}) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', { enforceSSL: true, displayName: 'Slack zone bridge alarms' });
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
    this.action = new SnsAction(this.topic);
    acknowledge(
      this.topic,
      'AwsSolutions-SNS2',
      'Alarm notifications carry only alarm names and states, no message content. CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key, and a customer-managed key would add a key policy and cost without protecting anything sensitive.',
    );
  }

  /** Alarms as soon as one message waits in the dead-letter queue. */
  deadLetterQueue(scope: Construct, id: string, queue: IQueue, what: string): Alarm {
    return this.alarm(scope, id, queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }), `${what}: messages in the dead-letter queue (inspect, then redrive or purge)`);
  }

  /** Alarms on any invocation error of the function within five minutes. */
  functionErrors(scope: Construct, id: string, fn: IFunction, what: string): Alarm {
    return this.alarm(scope, id, fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }), `${what}: function errors`);
  }

  /** Alarms when the metric's value reaches `threshold` (default 1) in one period. The alarm lives beside what it watches. */
  alarm(scope: Construct, id: string, metric: IMetric, description: string, threshold = 1): Alarm {
    const alarm = new Alarm(scope, id, {
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    alarm.addAlarmAction(this.action);
    return alarm;
  }
}
