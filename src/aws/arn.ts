/** The region field of an ARN (`arn:partition:service:region:account:resource`), if it has one. */
export function regionOfArn(arn: string): string | undefined {
  const parts = arn.split(':');
  return parts[0] === 'arn' && parts.length >= 6 && parts[3] ? parts[3] : undefined;
}
