import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { acknowledge } from './nag-acknowledgements';

export interface OperatorSecretProps {
  readonly description: string;
  /** Use an existing secret of this name instead of creating one. */
  readonly existingName?: string;
}

/**
 * A Secrets Manager secret whose value an operator sets (`aws secretsmanager put-secret-value`).
 *
 * Created, it has no value in the template: CloudFormation asks Secrets Manager to generate a
 * random placeholder, so the template and cdk.out never hold the real secret, and a function that
 * reads it before the operator sets it fails closed (Slack signatures do not verify, Slack calls
 * are refused). Imported by name, the secret is untouched by this app.
 */
export function operatorSecret(scope: Construct, id: string, props: OperatorSecretProps): ISecret {
  if (props.existingName) return Secret.fromSecretNameV2(scope, id, props.existingName);
  const secret = new Secret(scope, id, { description: props.description });
  acknowledge(
    secret,
    'AwsSolutions-SMG4',
    'Slack credentials are rotated in Slack (app settings), not by a rotation Lambda; the operator writes the new value here (docs/deploy.md) and the functions re-read it.',
  );
  return secret;
}
