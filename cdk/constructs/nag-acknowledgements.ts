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
