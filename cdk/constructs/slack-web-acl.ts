import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface SlackWebAclProps {
  /** The API Gateway stage to protect (`stage.stageArn`). */
  readonly stageArn: string;
  /** Requests per source IP per 5 minutes before the rate rule blocks. */
  readonly rateLimit: number;
}

/**
 * A regional WAF web ACL in front of the Slack request URL: the AWS managed common rule set and a
 * per-IP rate rule. On by default (context `waf`): a flood from one address is blocked before it
 * costs an API Gateway request or a Lambda invocation, for the price of a web ACL and two rules
 * (docs/deploy.md, "Context reference").
 *
 * The common rule set's body rules (size, XSS, LFI/RFI patterns) only count here: the body is a
 * user's Slack message signed by Slack, and people legitimately paste code, HTML and long text to
 * an assistant. Blocking those would drop the event without a reply; the Slack signature is the
 * gate for bodies. Slack sends from a shared pool of addresses, so keep the rate limit well above
 * the workspace's peak events per 5 minutes.
 */
export class SlackWebAcl extends Construct {
  public readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: SlackWebAclProps) {
    super(scope, id);
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    const countOnly = ['SizeRestrictions_BODY', 'CrossSiteScripting_BODY', 'GenericLFI_BODY', 'GenericRFI_BODY'];
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('SlackEventsWebAcl'),
      rules: [
        {
          name: 'AWSManagedRulesCommonRuleSet',
          priority: 0,
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: 'AWSManagedRulesCommonRuleSet',
              ruleActionOverrides: countOnly.map((name) => ({ name, actionToUse: { count: {} } })),
            },
          },
          visibilityConfig: visibility('CommonRuleSet'),
        },
        {
          name: 'RatePerIp',
          priority: 1,
          action: { block: {} },
          statement: { rateBasedStatement: { limit: props.rateLimit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility('RatePerIp'),
        },
      ],
    });
    new CfnWebACLAssociation(this, 'Association', { resourceArn: props.stageArn, webAclArn: this.webAcl.attrArn });
  }
}
