import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * SigV4 for the https transport: Lambda function URLs with AWS_IAM auth (service `lambda`) and
 * API Gateway IAM auth (service `execute-api`), docs/architecture.md §10.5.
 */
export type SigV4Credentials = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

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
  private readonly signer: SignatureV4;

  constructor(
    readonly target: SigV4Target,
    credentials: SigV4Credentials,
    /** Injected so a test can re-derive the exact signature. */
    private readonly now: () => Date = () => new Date(),
  ) {
    this.signer = new SignatureV4({ service: target.service, region: target.region, credentials, sha256: Hash.bind(null, 'sha256') });
  }

  /**
   * The headers to send: the given ones plus `host`, `x-amz-date`, `x-amz-content-sha256`,
   * `authorization` (and `x-amz-security-token` for temporary credentials). Every given header
   * is signed, so none may change after this.
   */
  async sign(request: SignableRequest): Promise<Record<string, string>> {
    const { url } = request;
    const query: Record<string, string | string[]> = {};
    for (const [key, value] of url.searchParams) {
      const previous = query[key];
      query[key] = previous === undefined ? value : ([] as string[]).concat(previous, value);
    }
    const unsigned = new HttpRequest({
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      // The signed host must be the one fetch sends, port included.
      headers: { ...request.headers, host: url.host },
      body: request.body,
    });
    const signed = await this.signer.sign(unsigned, { signingDate: this.now() });
    return signed.headers;
  }
}
