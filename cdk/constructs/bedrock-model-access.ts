import type { Stack } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { ExpectedWildcard } from './nag-acknowledgements';

/**
 * Permission to call one Bedrock model through Converse, and nothing else.
 *
 * - Converse is authorized as `bedrock:InvokeModel`, ConverseStream as
 *   `bedrock:InvokeModelWithResponseStream`. The bedrock executor calls ConverseStream for tasks
 *   the verification zone shows live (docs/architecture.md §2.5) and Converse otherwise: both.
 * - An on-demand model id (`anthropic.claude-…`) needs the foundation-model ARN in the stack's region.
 * - A cross-region inference profile id (`us.anthropic.claude-…`) needs the inference-profile ARN
 *   in the stack's region plus the foundation-model ARN in every region the profile routes to: a
 *   request may be served in any of them, and IAM checks the model there. The routing regions per
 *   geography are below; AWS adds regions to profiles over time, so `bedrockModelRegions`
 *   (context) overrides the list, and a `global.` profile, which routes to any commercial region,
 *   is granted the model in every region.
 */
const PROFILE_ROUTING_REGIONS: Readonly<Record<string, readonly string[] | 'any'>> = {
  us: ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2'],
  'us-gov': ['us-gov-east-1', 'us-gov-west-1'],
  eu: ['eu-central-1', 'eu-central-2', 'eu-north-1', 'eu-south-1', 'eu-south-2', 'eu-west-1', 'eu-west-2', 'eu-west-3'],
  apac: ['ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3', 'ap-south-1', 'ap-south-2', 'ap-southeast-1', 'ap-southeast-2', 'ap-southeast-3', 'ap-southeast-4'],
  jp: ['ap-northeast-1', 'ap-northeast-3'],
  au: ['ap-southeast-2', 'ap-southeast-4'],
  global: 'any',
};

/** `us.anthropic.claude-…` → geography `us`; a model id starts with its provider (`anthropic.`, `amazon.`, …). */
const PROFILE_ID = /^([a-z]{2,6}(?:-gov)?)\.([a-z0-9-]+\.[A-Za-z0-9._:-]+)$/;
const MODEL_ID = /^[a-z0-9-]+\.[A-Za-z0-9._:-]+$/;

export type ModelTarget =
  | { kind: 'foundation-model'; modelId: string }
  | { kind: 'inference-profile'; profileId: string; modelId: string; regions: readonly string[] | 'any' };

/** Reads a model id the way Bedrock does: a known geography prefix makes it an inference profile. */
export function modelTargetOf(id: string, regionsOverride?: readonly string[]): ModelTarget {
  if (id.startsWith('arn:')) {
    throw new Error(`bedrockModelId: give a model or inference profile id, not an ARN (got ${id})`);
  }
  const profile = PROFILE_ID.exec(id);
  if (profile && (profile[1]! in PROFILE_ROUTING_REGIONS || regionsOverride)) {
    const regions = regionsOverride ?? PROFILE_ROUTING_REGIONS[profile[1]!]!;
    return { kind: 'inference-profile', profileId: id, modelId: profile[2]!, regions };
  }
  if (profile) {
    // Foundation model ids have one dot (provider.model); two mean a profile of a geography not listed above.
    throw new Error(`bedrockModelId: ${id} looks like an inference profile of an unknown geography (${profile[1]}): set bedrockModelRegions to the regions it routes to`);
  }
  if (!MODEL_ID.test(id)) throw new Error(`bedrockModelId: ${id} is not a Bedrock model id`);
  return { kind: 'foundation-model', modelId: id };
}

export class BedrockModelAccess {
  public readonly target: ModelTarget;

  constructor(
    public readonly modelId: string,
    regionsOverride?: readonly string[],
  ) {
    this.target = modelTargetOf(modelId, regionsOverride);
  }

  /** The ARNs InvokeModel is granted on, for the given stack. */
  resourceArns(stack: Stack): string[] {
    const foundationModel = (region: string) => `arn:${stack.partition}:bedrock:${region}::foundation-model/${this.target.modelId}`;
    if (this.target.kind === 'foundation-model') return [foundationModel(stack.region)];
    const profile = `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${this.target.profileId}`;
    const regions = this.target.regions === 'any' ? ['*'] : this.target.regions;
    return [profile, ...regions.map(foundationModel)];
  }

  grantInvoke(grantee: IGrantable, stack: Stack): Grant {
    return Grant.addToPrincipal({ grantee, actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'], resourceArns: this.resourceArns(stack) });
  }

  /** The wildcard a `global.` profile needs, for the nag acknowledgement. */
  get expectedWildcards(): ExpectedWildcard[] {
    if (this.target.kind !== 'inference-profile' || this.target.regions !== 'any') return [];
    const model = this.target.modelId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return [
      {
        pattern: new RegExp(`^Resource::arn:(?:<AWS::Partition>|aws[a-z-]*):bedrock:\\*::foundation-model/${model}$`),
        reason: `The global inference profile ${this.target.profileId} routes requests to any commercial region, so the model is allowed in every region; the actions are InvokeModel and InvokeModelWithResponseStream on this one model only.`,
      },
    ];
  }
}
