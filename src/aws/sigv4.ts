import type { SignatureV4 } from '@smithy/signature-v4';
import { systemClock } from '../clock';

/**
 * AWS Signature Version 4 (header form) for every AWS call made here without an SDK client —
 * DynamoDB, SQS and Secrets Manager from the verification zone (src/aws/aws-json-client.ts) and
 * the https transport to a function URL or API Gateway with IAM auth
 * (src/transport/sigv4-signer.ts) — done by the SDK's own signer, `@smithy/signature-v4` with
 * `@smithy/hash-node`'s SHA-256 (node:crypto), exactly as the SDK's clients sign. This module only
 * turns a request given as a URL into the signer's HttpRequest and back into the headers to send.
 *
 * The signer is loaded at the first signature, not with the module: a cold start that answers
 * Slack without calling AWS does not pay for it (bench part 1 measured it at ~5 ms, esbuild
 * bundling its ES module build). test/aws/sigv4.test.ts holds the result to AWS's published test
 * suite and to the signer called directly; the AgentCore emulator (src/local) verifies signatures
 * with it too.
 */
export type AwsCredentials = {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (Lambda's role, STS): sent and signed as `x-amz-security-token`. */
  sessionToken?: string;
};

export type SigV4Request = {
  method: string;
  url: URL;
  /** Header names in any case; every one given is signed (but those AWS's SDKs never sign), so none may change after signing. */
  headers: Record<string, string>;
  body: string | Uint8Array;
};

export type SigV4Options = {
  service: string;
  region: string;
  credentials: AwsCredentials;
  /** Adds `x-amz-content-sha256` (Lambda function URLs behind CloudFront ask for it). */
  contentSha256Header?: boolean;
  /** The signing time: the client's clock corrected for skew (src/aws/aws-json-client.ts). @default now, on the system clock */
  now?: Date;
};

type Signer = {
  SignatureV4: typeof SignatureV4;
  sha256: ConstructorParameters<typeof SignatureV4>[0]['sha256'];
};
type SignableRequest = Parameters<SignatureV4['sign']>[0] & { headers: Record<string, string> };

let loading: Promise<Signer> | undefined;
/** The SDK's signer and hash, imported once, at the first signature. */
function signer(): Promise<Signer> {
  loading ??= Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]).then(
    ([{ SignatureV4 }, { Hash }]) => ({ SignatureV4, sha256: Hash.bind(null, 'sha256') }),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/**
 * The headers to send: the given ones (names lower-cased) plus `host`, `x-amz-date`, the token
 * and `authorization`. Sign right before sending: AWS refuses a signature more than 5 minutes old.
 */
export async function signRequest(request: SigV4Request, options: SigV4Options): Promise<Record<string, string>> {
  const { SignatureV4, sha256 } = await signer();
  const { url } = request;

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.host = url.host;

  // The query as the SDK holds it: decoded names and values, a repeated name as a list (in order).
  const query: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of url.searchParams) {
    const previous = query[name];
    query[name] = previous === undefined ? value : ([] as string[]).concat(previous, value);
  }

  const unsigned: SignableRequest = {
    method: request.method.toUpperCase(),
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    // Already percent-encoded, as it goes on the wire: the signer encodes it once more (every service but S3).
    path: url.pathname,
    query,
    headers,
    body: request.body,
  };
  const signed = await new SignatureV4({
    service: options.service,
    region: options.region,
    credentials: options.credentials,
    sha256,
    applyChecksum: options.contentSha256Header === true,
  }).sign(unsigned, { signingDate: options.now ?? new Date(systemClock.now()) });

  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) result[name.toLowerCase()] = value;
  return result;
}
