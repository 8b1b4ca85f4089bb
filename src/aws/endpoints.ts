import { partition } from '@aws-sdk/core/client';

/**
 * A service's regional endpoint, as AWS's SDKs resolve it: the partition of the region from the
 * SDK's own table (`partition` of @aws-sdk/core, formerly @aws-sdk/util-endpoints: aws, aws-cn,
 * aws-us-gov, aws-iso, aws-iso-b, aws-iso-e, aws-iso-f, aws-eusc, and `aws` for a region it does
 * not know), its DNS suffixes and whether it has FIPS and dual-stack endpoints; then the service's
 * own ruleset (its client's endpoint rules) for the host:
 *
 *   https://<prefix>[-fips].<region>.<dnsSuffix | dualStackDnsSuffix>
 *
 * with the exceptions each ruleset makes (`EndpointRules`). test/aws/endpoints.test.ts holds every
 * partition and variant to the SDK clients' own resolvers. Loaded by src/aws/aws-json-client.ts at
 * the first call without a configured endpoint, not with it.
 */
export type EndpointVariant = {
  /** AWS_USE_FIPS_ENDPOINT */
  fips: boolean;
  /** AWS_USE_DUALSTACK_ENDPOINT */
  dualStack: boolean;
};

/** Where a service's ruleset departs from the rule above, by partition name. */
export type EndpointRules = {
  /** FIPS alone keeps the standard host (it is FIPS already): DynamoDB and SQS in aws-us-gov. */
  fipsIsStandardIn?: readonly string[];
  /** Dual-stack alone keeps the standard host (it is dual-stack already): Secrets Manager in aws, aws-cn, aws-us-gov. */
  dualStackIsStandardIn?: readonly string[];
  /** FIPS with dual-stack is the FIPS host on the standard suffix: Secrets Manager in aws, aws-us-gov. */
  fipsDualStackIsFipsIn?: readonly string[];
};

export function regionalEndpoint(prefix: string, region: string, variant: EndpointVariant, rules: EndpointRules = {}): string {
  const found = partition(region);
  // The SDK's own refusals (no partition lacks either today).
  if (variant.fips && !found.supportsFIPS) throw new Error(`AWS_USE_FIPS_ENDPOINT: partition ${found.name} (region ${region}) has no FIPS endpoints`);
  if (variant.dualStack && !found.supportsDualStack) throw new Error(`AWS_USE_DUALSTACK_ENDPOINT: partition ${found.name} (region ${region}) has no dual-stack endpoints`);
  let { fips, dualStack } = variant;
  if (fips && dualStack) dualStack = !rules.fipsDualStackIsFipsIn?.includes(found.name);
  else if (fips) fips = !rules.fipsIsStandardIn?.includes(found.name);
  else if (dualStack) dualStack = !rules.dualStackIsStandardIn?.includes(found.name);
  return `https://${prefix}${fips ? '-fips' : ''}.${region}.${dualStack ? found.dualStackDnsSuffix : found.dnsSuffix}`;
}
