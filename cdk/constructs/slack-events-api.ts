import { RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  EndpointType,
  JsonSchemaType,
  JsonSchemaVersion,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
  type Method,
} from 'aws-cdk-lib/aws-apigateway';
import { CfnPermission, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledge, acknowledgeControl } from './nag-acknowledgements';
import type { StrictGovernance } from './zone-governance';

export interface SlackEventsApiProps {
  /** The slack-events function. */
  readonly handler: IFunction;
  /** Steady-state requests per second for the stage. */
  readonly rateLimit: number;
  /** Burst requests for the stage. */
  readonly burstLimit: number;
  readonly logRetention: RetentionDays;
  /** A WAF web ACL protects the stage (the default; nag's APIG3 is then met, not acknowledged). */
  readonly webAclAttached: boolean;
  /**
   * governance=strict: logs encrypted with the zone's key, execution logging (errors) and X-Ray
   * tracing on the stage, and the account's API Gateway CloudWatch role, which logging needs.
   */
  readonly governance?: StrictGovernance;
}

/** The Slack signing headers every Slack request carries (docs.slack.dev, "Verifying requests"). */
export const SLACK_SIGNATURE_HEADERS = ['X-Slack-Signature', 'X-Slack-Request-Timestamp'] as const;

/**
 * The verification zone's only public entry point: REST API `POST /slack/events` → slack-events.
 *
 * Requests without Slack's signing headers are refused by API Gateway itself, with the same 401
 * the function gives for a bad signature, so unsigned traffic never invokes a function; a JSON
 * body must be an object with a string `type`, as every Events API payload is. The stage
 * is throttled and access-logged (status, latency, caller IP; never the body, which holds user
 * messages).
 */
export class SlackEventsApi extends Construct {
  public readonly api: RestApi;
  public readonly method: Method;
  public readonly accessLogs: LogGroup;
  /** governance=strict: the stage's execution log group. */
  public readonly executionLogs?: LogGroup;

  constructor(scope: Construct, id: string, props: SlackEventsApiProps) {
    super(scope, id);
    const governance = props.governance;
    this.accessLogs = governance
      ? governance.logGroup(this, 'AccessLogs')
      : new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });
    this.api = new RestApi(this, 'Api', {
      description: 'Slack Events API request URL for the Slack zone bridge',
      endpointTypes: [EndpointType.REGIONAL],
      // Execution logging needs the account's API Gateway CloudWatch role (AWS::ApiGateway::Account,
      // one per account and region): strict sets it, kept when the stack is deleted (CDK's default),
      // since other APIs of the account may log through it by then.
      cloudWatchRole: Boolean(governance),
      deployOptions: {
        stageName: 'prod',
        throttlingRateLimit: props.rateLimit,
        throttlingBurstLimit: props.burstLimit,
        metricsEnabled: true,
        // Errors only, never the bodies (dataTrace): the bodies hold user messages.
        loggingLevel: governance ? MethodLoggingLevel.ERROR : MethodLoggingLevel.OFF,
        tracingEnabled: Boolean(governance),
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields({
          caller: true,
          httpMethod: true,
          ip: true,
          protocol: true,
          requestTime: true,
          resourcePath: true,
          responseLength: true,
          status: true,
          user: true,
        }),
      },
    });
    const validator = this.api.addRequestValidator('SlackRequest', { validateRequestParameters: true, validateRequestBody: true });
    // Every Events API body is a JSON object with a string `type` (url_verification, event_callback).
    const envelope = this.api.addModel('SlackEnvelope', {
      contentType: 'application/json',
      schema: { schema: JsonSchemaVersion.DRAFT4, type: JsonSchemaType.OBJECT, required: ['type'], properties: { type: { type: JsonSchemaType.STRING } } },
    });
    this.api.addGatewayResponse('MissingSlackHeaders', {
      type: ResponseType.BAD_REQUEST_PARAMETERS,
      statusCode: '401',
      templates: { 'application/json': '{"error":"unauthorized"}' },
    });
    this.method = this.api.root
      .addResource('slack')
      .addResource('events')
      .addMethod('POST', new LambdaIntegration(props.handler, { proxy: true, allowTestInvoke: false }), {
        requestValidator: validator,
        requestModels: { 'application/json': envelope },
        requestParameters: Object.fromEntries(SLACK_SIGNATURE_HEADERS.map((header) => [`method.request.header.${header}`, true])),
      });

    this.requireSourceAccount();
    if (governance) {
      // API Gateway creates its execution log group on first use, unencrypted and kept forever;
      // created here first, it has the key and the retention (the stage waits for it).
      const executionLogs = governance.logGroup(this, 'ExecutionLogs', { logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/prod` });
      this.api.deploymentStage.node.addDependency(executionLogs);
      this.executionLogs = executionLogs;
      const role = this.api.node.tryFindChild('CloudWatchRole');
      if (role) {
        acknowledge(
          role,
          'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
          'AmazonAPIGatewayPushToCloudWatchLogs is the policy AWS documents for the account-wide API Gateway logging role; it holds only CloudWatch Logs actions.',
        );
      }
    }
    acknowledge(this.method, 'AwsSolutions-APIG4', 'Slack cannot present AWS or Cognito credentials. Every request is authenticated by its Slack signature (HMAC-SHA256 over the raw body with the signing secret), which slack-events verifies before doing anything; unsigned requests are refused at the gateway.');
    acknowledge(this.method, 'AwsSolutions-COG4', 'Slack cannot obtain Cognito tokens; requests are authenticated by their Slack signature (see APIG4).');
    if (!governance) {
      acknowledge(
        this.api.deploymentStage,
        'AwsSolutions-APIG6',
        'Execution logging needs the account-wide API Gateway CloudWatch role (AWS::ApiGateway::Account), a singleton this app should not own (governance=strict sets it). The stage has access logs and metrics, and slack-events logs every decision it makes.',
      );
    }
    if (!props.webAclAttached) {
      acknowledge(
        this.api.deploymentStage,
        'AwsSolutions-APIG3',
        'This deployment turned the web ACL off (context waf=false; it is on by default). Every request must still carry a valid Slack signature, unsigned ones are refused by API Gateway, the stage is throttled, and slack-events rate-limits per user; only per-IP blocking in front of API Gateway is lost.',
      );
    }
  }

  /**
   * API Gateway may invoke slack-events for this API's method only (SourceArn), and only from this
   * account (SourceAccount, which AWS advises against confused deputies). Control Tower's
   * CT.LAMBDA.PR.2 reads SourceAccount when it is a literal; the SourceArn is an Fn::Join it cannot
   * read. An environment-agnostic synthesis has no literal account (a deployment always has one, from
   * the CLI's credentials), so there the control is acknowledged instead.
   */
  private requireSourceAccount(): void {
    const account = Stack.of(this).account;
    for (const child of this.method.node.findAll()) {
      if (!(child instanceof CfnPermission) || child.principal !== 'apigateway.amazonaws.com') continue;
      child.sourceAccount = account;
      if (Token.isUnresolved(account)) {
        acknowledgeControl(child, 'ct-lambda-pr-2', 'The permission names its API method (SourceArn) and account (SourceAccount), but the account is the AWS::AccountId pseudo parameter in an environment-agnostic synthesis, and the rule reads only literals; a deployment has the literal account.');
      }
    }
  }

  /** The Request URL to paste into the Slack app's Event Subscriptions. */
  get requestUrl(): string {
    return this.api.urlForPath('/slack/events');
  }
}
