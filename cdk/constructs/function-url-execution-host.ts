import { Duration } from 'aws-cdk-lib';
import type { IPrincipal } from 'aws-cdk-lib/aws-iam';
import { FunctionUrlAuthType, InvokeMode, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ExecutionConfigSchema } from '../../src/execution/config';
import type { OperationsAlarms } from './operations-alarms';
import type { StrictGovernance } from './zone-governance';
import { QueueWithDlq } from './queue-with-dlq';
import { ZoneFunction } from './zone-function';

export interface FunctionUrlExecutionHostProps {
  /** The execution runtime's environment (executor, model, task store, budgets). */
  readonly environment: Record<string, string>;
  /** How long one task may run (TASK_TIMEOUT_MS); the worker's timeout is derived from it. */
  readonly taskTimeout: Duration;
  readonly logRetention: RetentionDays;
  readonly alarms: OperationsAlarms;
  /** governance=strict: the worker in the zone's VPC, queues and logs encrypted with its key. */
  readonly governance?: StrictGovernance;
}

/** Receives of a handed-off task before it moves to the worker DLQ. */
export const WORKER_MAX_RECEIVE_COUNT = 3;

/**
 * The execution zone behind a Lambda function URL (`https` transport) with AWS_IAM auth.
 *
 * A Lambda cannot keep working after it answers, so a task that outlives the sync budget is handed
 * to a worker queue and the URL function answers `accepted`; the worker runs it to completion and
 * stores the result, which get_task_result (through the URL function) reads. Params too large
 * for a queue message (a task with attachments) are kept in the task table until the worker is
 * done (src/execution/handoff-message.ts), with the GetItem/PutItem both roles already hold as
 * task runners: no further grant.
 *
 * The URL streams its response (`InvokeMode: RESPONSE_STREAM`): a caller that asks for a streamed
 * answer reads the task's text as the worker writes it (docs/contract.md, "Streamed answers"),
 * and every other answer is one body, as in buffered mode. Auth is AWS_IAM either way.
 *
 * Timeouts: the URL function answers a plain request within the sync budget; a streamed answer
 * lasts at most STREAM_MAX_MS (14 min by default) and ends before the function's time is out, so
 * the function gets STREAM_MAX_MS plus a minute (at most Lambda's 15). The worker gets the
 * task timeout plus a minute to record the outcome. Its queue's visibility timeout is the worker
 * timeout plus 2 minutes, not the usual 6×: a task re-run after the verification zone stopped
 * polling (30 min by default) is model time spent on an answer nobody reads; throttled receives
 * are absorbed by maxReceiveCount 3 instead.
 */
export class FunctionUrlExecutionHost extends Construct {
  public readonly handler: ZoneFunction;
  public readonly worker: ZoneFunction;
  public readonly workerQueue: QueueWithDlq;
  public readonly url: FunctionUrl;

  constructor(scope: Construct, id: string, props: FunctionUrlExecutionHostProps) {
    super(scope, id);
    const workerTimeout = Duration.seconds(Math.min(900, props.taskTimeout.toSeconds() + 60));
    const streamMaxSeconds = Math.ceil(ExecutionConfigSchema.shape.STREAM_MAX_MS.parse(props.environment.STREAM_MAX_MS) / 1000);
    const urlTimeout = Duration.seconds(Math.min(900, Math.max(30, streamMaxSeconds + 60)));
    this.workerQueue = new QueueWithDlq(this, 'WorkerQueue', {
      visibilityTimeout: workerTimeout.plus(Duration.minutes(2)),
      maxReceiveCount: WORKER_MAX_RECEIVE_COUNT,
      alarms: props.alarms,
      purpose: 'Execution worker (handed-off tasks)',
      ...(props.governance ? { encryptionKey: props.governance.key } : {}),
    });
    this.handler = new ZoneFunction(this, 'UrlHandler', {
      entry: 'lambdas/execution/function-url.ts',
      description: 'Execution zone behind a function URL: JSON-RPC execute_task / get_task_result / cancel_task',
      timeout: urlTimeout,
      memorySize: 512,
      environment: { ...props.environment, WORKER_QUEUE_URL: this.workerQueue.queue.queueUrl },
      logRetention: props.logRetention,
      alarms: props.alarms,
      ...(props.governance
        ? {
            governance: props.governance,
            outsideVpcBecause:
              'The function URL streams its answers (InvokeMode RESPONSE_STREAM), which Lambda does not support for a function in a VPC; the worker, which runs the tasks, is in the VPC. Use transport=agentcore to keep the whole execution zone in the VPC.',
          }
        : {}),
    });
    this.workerQueue.queue.grantSendMessages(this.handler.role);
    this.url = this.handler.fn.addFunctionUrl({ authType: FunctionUrlAuthType.AWS_IAM, invokeMode: InvokeMode.RESPONSE_STREAM });

    this.worker = new ZoneFunction(this, 'Worker', {
      entry: 'lambdas/execution/worker.ts',
      description: 'Execution zone worker: finishes tasks the function URL accepted',
      timeout: workerTimeout,
      memorySize: 512,
      environment: props.environment,
      logRetention: props.logRetention,
      alarms: props.alarms,
      ...(props.governance ? { governance: props.governance } : {}),
    });
    this.worker.fn.addEventSource(new SqsEventSource(this.workerQueue.queue, { batchSize: 1, reportBatchItemFailures: true }));
  }

  /** Both roles run tasks: the URL function within the sync budget, the worker after hand-off. */
  get taskRunners(): ZoneFunction[] {
    return [this.handler, this.worker];
  }

  /** Callers in another account (resource-based permissions on the function, for its URL only). */
  allowCaller(principal: IPrincipal): void {
    this.handler.fn.grantInvokeUrl(principal);
  }
}
