import { RemovalPolicy } from 'aws-cdk-lib';
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
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledge } from './nag-acknowledgements';

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

  constructor(scope: Construct, id: string, props: SlackEventsApiProps) {
    super(scope, id);
    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });
    this.api = new RestApi(this, 'Api', {
      description: 'Slack Events API request URL for the Slack zone bridge',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: false,
      deployOptions: {
        stageName: 'prod',
        throttlingRateLimit: props.rateLimit,
        throttlingBurstLimit: props.burstLimit,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.OFF,
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

    acknowledge(this.method, 'AwsSolutions-APIG4', 'Slack cannot present AWS or Cognito credentials. Every request is authenticated by its Slack signature (HMAC-SHA256 over the raw body with the signing secret), which slack-events verifies before doing anything; unsigned requests are refused at the gateway.');
    acknowledge(this.method, 'AwsSolutions-COG4', 'Slack cannot obtain Cognito tokens; requests are authenticated by their Slack signature (see APIG4).');
    acknowledge(
      this.api.deploymentStage,
      'AwsSolutions-APIG6',
      'Execution logging needs the account-wide API Gateway CloudWatch role (AWS::ApiGateway::Account), a singleton this app should not own. The stage has access logs and metrics, and slack-events logs every decision it makes.',
    );
    if (!props.webAclAttached) {
      acknowledge(
        this.api.deploymentStage,
        'AwsSolutions-APIG3',
        'This deployment turned the web ACL off (context waf=false; it is on by default). Every request must still carry a valid Slack signature, unsigned ones are refused by API Gateway, the stage is throttled, and slack-events rate-limits per user; only per-IP blocking in front of API Gateway is lost.',
      );
    }
  }

  /** The Request URL to paste into the Slack app's Event Subscriptions. */
  get requestUrl(): string {
    return this.api.urlForPath('/slack/events');
  }
}
