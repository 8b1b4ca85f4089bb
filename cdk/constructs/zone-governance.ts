import { RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import {
  FlowLogDestination,
  GatewayVpcEndpoint,
  GatewayVpcEndpointAwsService,
  IpAddresses,
  InterfaceVpcEndpoint,
  InterfaceVpcEndpointAwsService,
  type IVpc,
  Peer,
  Port,
  PrefixList,
  SecurityGroup,
  type SubnetSelection,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { LogGroup, type LogGroupProps, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DeploymentConfigError } from '../config';
import type { ExpectedWildcard } from './nag-acknowledgements';

/** The AWS services a zone reaches through an interface endpoint (names as in `com.amazonaws.<region>.<name>`). */
export const INTERFACE_ENDPOINT_SERVICES = {
  sqs: InterfaceVpcEndpointAwsService.SQS,
  secretsmanager: InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  logs: InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
  'bedrock-runtime': InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
  'bedrock-agentcore': InterfaceVpcEndpointAwsService.BEDROCK_AGENTCORE,
} as const;
export type EndpointService = keyof typeof INTERFACE_ENDPOINT_SERVICES;

export type ZoneKind = 'verification' | 'execution';

/** The range of a VPC the app creates (one per zone, so both may use it). */
export const CREATED_VPC_CIDR = '10.0.0.0/16';

/** What cdk/zones.ts decides for one zone under `governance=strict`. */
export interface StrictGovernanceProps {
  readonly zone: ZoneKind;
  /** A customer-managed key to use instead of creating one (its policy must admit CloudWatch Logs). */
  readonly kmsKeyArn?: string;
  /** An existing VPC (looked up) instead of one created for the zone. */
  readonly vpcId?: string;
  /** Interface endpoints this zone creates in its VPC (none when another zone's serve the same VPC). */
  readonly interfaceEndpoints: readonly EndpointService[];
  /** A DynamoDB gateway endpoint on the zone's subnets. */
  readonly dynamodbGateway: boolean;
  /** The Region's DynamoDB prefix list id (-c dynamodbPrefixListId); looked up when left out. */
  readonly dynamodbPrefixListId?: string;
  readonly logRetention: RetentionDays;
}

/** Where a zone's functions run, and the key its data is encrypted with; absent under `governance=standard`. */
export interface ResourceGovernance {
  readonly key: IKey;
  readonly vpc: IVpc;
  readonly subnets: SubnetSelection;
  readonly securityGroup: SecurityGroup;
}

/**
 * `governance=strict` for one zone stack: the customer-managed KMS key its tables, queues and log
 * groups name, and the VPC its functions run in.
 *
 * - The verification zone's VPC has public subnets for one NAT gateway and private subnets for the
 *   functions; their security group allows HTTPS out only, which reaches Slack through the NAT and
 *   AWS through the endpoints.
 * - The execution zone's VPC has isolated subnets only (no internet or NAT gateway, so no route
 *   out); its security group allows HTTPS to the interface endpoints' security group and to the
 *   DynamoDB prefix list (the gateway endpoint), nothing else.
 * - Endpoints admit HTTPS from the whole VPC, so a zone sharing the VPC (`-c vpcId` for both)
 *   uses the endpoints the other zone created: private DNS allows one endpoint per service a VPC.
 * - Created VPCs keep flow logs (to a KMS-encrypted log group) and leave the default security
 *   group as EC2 makes it: restricting it takes a custom-resource Lambda outside any VPC.
 */
export class StrictGovernance extends Construct implements ResourceGovernance {
  public readonly key: IKey;
  public readonly vpc: IVpc;
  public readonly subnets: SubnetSelection;
  public readonly securityGroup: SecurityGroup;
  public readonly endpointSecurityGroup?: SecurityGroup;
  public readonly endpoints: InterfaceVpcEndpoint[] = [];
  public readonly dynamodbGateway?: GatewayVpcEndpoint;
  private readonly logRetention: RetentionDays;

  constructor(scope: Construct, id: string, props: StrictGovernanceProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.logRetention = props.logRetention;
    if (props.kmsKeyArn) {
      this.key = Key.fromKeyArn(this, 'Key', props.kmsKeyArn);
    } else {
      const key = new Key(this, 'Key', {
        description: `${stack.stackName}: tables, queues and log groups (governance=strict)`,
        enableKeyRotation: true,
        // Retained: data and logs encrypted with it outlive the stack (docs/deploy.md, "Teardown").
        removalPolicy: RemovalPolicy.RETAIN,
      });
      // CloudWatch Logs encrypts a log group with the key only if the key policy admits it, for
      // log groups of this account and region (AWS: "Encrypt log data in CloudWatch Logs using KMS").
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'CloudWatchLogsOfThisAccount',
          principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
          actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
          resources: ['*'],
          conditions: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${stack.partition}:logs:${stack.region}:${stack.account}:log-group:*` } },
        }),
      );
      // Only AWS services create grants on it (DynamoDB does, for the tables' callers): CT.KMS.PR.3.
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'GrantsOnlyForAwsResources',
          effect: Effect.DENY,
          principals: [new AnyPrincipal()],
          actions: ['kms:CreateGrant'],
          resources: ['*'],
          conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
        }),
      );
      this.key = key;
    }

    this.vpc = props.vpcId ? Vpc.fromLookup(this, 'Vpc', { vpcId: props.vpcId }) : this.createVpc(props.zone);
    // Functions go where the zone may reach: private subnets with NAT (verification), isolated ones
    // (execution; in an existing VPC without isolated subnets, private ones, and the security group
    // below still lets nothing out but the endpoints).
    const type = props.zone === 'verification' || this.vpc.isolatedSubnets.length === 0 ? SubnetType.PRIVATE_WITH_EGRESS : SubnetType.PRIVATE_ISOLATED;
    this.subnets = { subnetType: type };

    this.securityGroup = new SecurityGroup(this, 'Functions', {
      vpc: this.vpc,
      description: `${props.zone} zone functions: HTTPS out only`,
      allowAllOutbound: false,
    });
    if (props.zone === 'verification') {
      this.securityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'HTTPS: Slack through the NAT gateway, AWS through the endpoints');
    }

    if (props.interfaceEndpoints.length > 0) {
      const endpointSg = new SecurityGroup(this, 'Endpoints', { vpc: this.vpc, description: 'Interface endpoints: HTTPS from the VPC', allowAllOutbound: false });
      // A created VPC's range is written as a literal, so cdk-nag (EC23) can read the rule.
      endpointSg.addIngressRule(Peer.ipv4(props.vpcId ? this.vpc.vpcCidrBlock : CREATED_VPC_CIDR), Port.tcp(443), 'HTTPS from the VPC');
      this.endpointSecurityGroup = endpointSg;
      if (props.zone === 'execution') this.securityGroup.addEgressRule(endpointSg, Port.tcp(443), 'HTTPS to the interface endpoints');
      for (const name of props.interfaceEndpoints) {
        this.endpoints.push(
          new InterfaceVpcEndpoint(this, `Endpoint-${name}`, {
            vpc: this.vpc,
            service: INTERFACE_ENDPOINT_SERVICES[name],
            // One network interface per AZ: an endpoint takes at most one subnet per AZ.
            subnets: { ...this.subnets, onePerAz: true },
            securityGroups: [endpointSg],
            open: false,
            privateDnsEnabled: true,
          }),
        );
      }
    }
    if (props.dynamodbGateway) {
      this.dynamodbGateway = new GatewayVpcEndpoint(this, 'DynamoDbEndpoint', { vpc: this.vpc, service: GatewayVpcEndpointAwsService.DYNAMODB, subnets: [this.subnets] });
      if (props.zone === 'execution') {
        // The gateway endpoint routes to DynamoDB's public addresses, named by an AWS-managed prefix
        // list. CloudFormation cannot name it by its name, so its id is given, or looked up — which an
        // environment-agnostic synthesis (no account or Region) cannot do: it says what to give.
        if (!props.dynamodbPrefixListId && (Token.isUnresolved(stack.account) || Token.isUnresolved(stack.region))) {
          throw new DeploymentConfigError(
            'governance=strict needs the DynamoDB prefix list of the Region for the execution zone: give -c dynamodbPrefixListId=pl-… ' +
              '(aws ec2 describe-managed-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.<region>.dynamodb), ' +
              'or deploy to a named account and Region so it can be looked up',
          );
        }
        const prefixListId = props.dynamodbPrefixListId ?? PrefixList.fromLookup(this, 'DynamoDbPrefixList', { prefixListName: `com.amazonaws.${stack.region}.dynamodb` }).prefixListId;
        this.securityGroup.addEgressRule(Peer.prefixList(prefixListId), Port.tcp(443), 'HTTPS to DynamoDB through the gateway endpoint');
      }
    }
  }

  /** A log group of this zone: encrypted with the key, kept for the retention, retained on deletion. */
  logGroup(scope: Construct, id: string, props: LogGroupProps = {}): LogGroup {
    return new LogGroup(scope, id, { retention: this.logRetention, encryptionKey: this.key, removalPolicy: RemovalPolicy.RETAIN, ...props });
  }

  private createVpc(zone: ZoneKind): Vpc {
    const vpc = new Vpc(this, 'Vpc', {
      ipAddresses: IpAddresses.cidr(CREATED_VPC_CIDR),
      maxAzs: 2,
      // Only the verification zone talks to the internet (Slack), through one NAT gateway.
      natGateways: zone === 'verification' ? 1 : 0,
      restrictDefaultSecurityGroup: false,
      subnetConfiguration:
        zone === 'verification'
          ? [
              // The NAT gateway's subnets: nothing else runs there, and nothing gets a public IP by itself.
              { name: 'nat', subnetType: SubnetType.PUBLIC, cidrMask: 26, mapPublicIpOnLaunch: false },
              { name: 'functions', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
            ]
          : [{ name: 'functions', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 22 }],
    });
    vpc.addFlowLog('FlowLog', { destination: FlowLogDestination.toCloudWatchLogs(this.logGroup(this, 'FlowLogs')) });
    return vpc;
  }
}

/** The wildcards a grant through a customer-managed key writes (CDK's key grants), for cdk-nag IAM5. */
export const KMS_GRANT_WILDCARDS: readonly ExpectedWildcard[] = [
  {
    pattern: /^Action::kms:(ReEncrypt|GenerateDataKey)\*$/,
    reason: 'governance=strict: the grant on a queue or table encrypted with the zone\'s key lets the role re-encrypt and generate data keys with that one key (ReEncryptFrom/To, GenerateDataKey and its variants), as SQS and DynamoDB ask of a caller.',
  },
];
