import { CfnResource, Validations } from 'aws-cdk-lib';
import { CfnPolicy, CfnRole } from 'aws-cdk-lib/aws-iam';
import { rules } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag 3 acknowledgements, always per resource and with a reason.
 *
 * IAM5 (wildcard permissions) reports one finding per wildcard string, e.g.
 * `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:…:/aws/bedrock-agentcore/runtimes/*]`, and
 * v3 acknowledges findings one by one. Those strings embed logical ids and tokens, so they are
 * not written by hand: `acknowledgeWildcards` evaluates the same rule on each IAM policy under a
 * scope and acknowledges only the findings an expected pattern explains. A wildcard nobody
 * expected stays unacknowledged and fails `cdk synth`.
 */
export type ExpectedWildcard = {
  /** Matched against the finding, e.g. /^Action::s3:GetObject\*$/ or /^Resource::.*\/runtimes\/\*$/. */
  pattern: RegExp;
  reason: string;
};

export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/** Call once the scope's grants are all made (at the end of a construct's or stack's constructor). */
export function acknowledgeWildcards(scope: IConstruct, expected: readonly ExpectedWildcard[]): void {
  for (const node of scope.node.findAll()) {
    if (!(node instanceof CfnPolicy || node instanceof CfnRole)) continue;
    const findings = rules.iam.IAMNoWildcardPermissions(node as CfnResource);
    if (!Array.isArray(findings)) continue;
    for (const finding of findings) {
      const match = expected.find((candidate) => candidate.pattern.test(finding));
      if (match) acknowledge(node, `AwsSolutions-IAM5[${finding}]`, match.reason);
    }
  }
}

/**
 * AWS Control Tower proactive controls, as `@cdklabs/cdk-validator-cfnguard` checks them at every
 * synthesis (cdk/zones.ts). The plugin reports a violation under its guard rule's name and the
 * control id only in the message, so this table maps the ids the docs use (docs/deploy.md,
 * "Governed accounts") to the names an acknowledgement must carry.
 */
export const CONTROL_TOWER_RULES = {
  'ct-apigateway-pr-1': 'api_gw_v1_execution_logging_enabled_check',
  'ct-apigateway-pr-2': 'api_gw_xray_enabled_check',
  'ct-cloudwatch-pr-2': 'cloudwatch_log_group_retention_period_check',
  'ct-cloudwatch-pr-3': 'cloudwatch_log_group_encrypted_check',
  'ct-dynamodb-pr-2': 'dynamodb_table_encrypted_kms_check',
  'ct-lambda-pr-2': 'lambda_function_public_access_prohibited_check',
  'ct-lambda-pr-3': 'lambda_inside_vpc_check',
  'ct-sqs-pr-1': 'sqs_dlq_check',
} as const;
export type ControlTowerRule = keyof typeof CONTROL_TOWER_RULES;

/** The plugin's name, which namespaces its rule names in an acknowledgement. */
export const CFN_GUARD_PLUGIN = 'cdk-validator-cfnguard';

/** Acknowledges one Control Tower control for a scope and everything under it, with the reason. */
export function acknowledgeControl(scope: IConstruct, rule: ControlTowerRule, reason: string): void {
  acknowledge(scope, `${CFN_GUARD_PLUGIN}::${CONTROL_TOWER_RULES[rule]}`, `${rule.toUpperCase().replace(/-/g, '.')}: ${reason}`);
}

/**
 * What the default deployment (`governance=standard`) does not meet, and why: each is met by
 * `-c governance=strict`, at the cost docs/deploy.md states. Acknowledged per stack, so a new
 * resource of the same kind is covered by the same reason.
 */
export const STANDARD_ACKNOWLEDGEMENTS: Readonly<Partial<Record<ControlTowerRule, string>>> = {
  'ct-dynamodb-pr-2': 'The tables use the AWS-owned key (no key to manage or pay for); governance=strict encrypts them with a customer-managed KMS key.',
  'ct-cloudwatch-pr-2': 'Log retention is logRetentionDays (30 days by default, to keep log storage small); governance=strict keeps logs at least a year.',
  'ct-cloudwatch-pr-3': 'Log groups use CloudWatch Logs\' own encryption; governance=strict encrypts them with a customer-managed KMS key.',
  'ct-apigateway-pr-1': 'Execution logging needs the account-wide API Gateway CloudWatch role, a singleton the default deployment does not own; the stage has access logs and metrics. governance=strict sets the role and turns logging on.',
  'ct-apigateway-pr-2': 'X-Ray tracing is billed per trace and the functions are not traced either; governance=strict turns it on.',
  'ct-lambda-pr-3': 'Functions outside a VPC need no NAT gateway or interface endpoints (about US$110–140 a month, docs/deploy.md); governance=strict puts them in VPCs.',
};
