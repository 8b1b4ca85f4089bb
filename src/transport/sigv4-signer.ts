import { signRequest, type AwsCredentials } from '../aws/sigv4';
import { systemClock, type Clock } from '../clock';

/**
 * SigV4 for the https transport: Lambda function URLs with AWS_IAM auth (service `lambda`) and
 * API Gateway IAM auth (service `execute-api`), docs/architecture.md §10.5. The signing itself is
 * src/aws/sigv4.ts: the SDK's signer (@smithy/signature-v4), loaded at the first signature.
 */
/** Credentials, or a provider of them (the SDK's default chain caches and refreshes its own). */
export type SigV4Credentials = AwsCredentials | (() => Promise<AwsCredentials>);

export type SigV4Target = { service: string; region: string };

const LAMBDA_URL_HOST = /^[a-z0-9-]+\.lambda-url\.([a-z0-9-]+)\.on\.aws$/;
const EXECUTE_API_HOST = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/;

/**
 * Service and region as far as the host tells them. A custom domain tells neither, so the
 * operator names the service (EXECUTION_SIGV4_SERVICE) and the region comes from AWS_REGION.
 */
export function sigv4TargetOfHost(hostname: string): Partial<SigV4Target> {
  const host = hostname.toLowerCase();
  const lambda = LAMBDA_URL_HOST.exec(host);
  if (lambda) return { service: 'lambda', region: lambda[1] };
  const api = EXECUTE_API_HOST.exec(host);
  if (api) return { service: 'execute-api', region: api[1] };
  return {};
}

export type SignableRequest = { url: URL; method: string; headers: Record<string, string>; body: string };

export class SigV4Signer {
  constructor(
    readonly target: SigV4Target,
    private readonly credentials: SigV4Credentials,
    /** The signing time; injected so a test can re-derive the exact signature. */
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * The headers to send: the given ones plus `host`, `x-amz-date`, `x-amz-content-sha256`,
   * `authorization` (and `x-amz-security-token` for temporary credentials). Every given header
   * is signed, so none may change after this.
   */
  async sign(request: SignableRequest): Promise<Record<string, string>> {
    const credentials = typeof this.credentials === 'function' ? await this.credentials() : this.credentials;
    return signRequest(
      { method: request.method, url: request.url, headers: request.headers, body: request.body },
      { service: this.target.service, region: this.target.region, credentials, contentSha256Header: true, now: new Date(this.clock.now()) },
    );
  }
}
