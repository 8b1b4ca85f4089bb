import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './http';

/**
 * A loopback fake of Secrets Manager's GetSecretValue, for the verification zone's client
 * (src/aws/aws-json-client.ts) and the SDK's. While it runs, `AWS_ENDPOINT_URL_SECRETS_MANAGER`
 * points at it (restored by `close`), so clients built the default way reach it. It speaks the service's JSON protocol
 * (`X-Amz-Target: secretsmanager.GetSecretValue`, `application/x-amz-json-1.1`), answers errors
 * as the service does (HTTP 4xx with `__type`), and records which secret each request asked for
 * and the region its SigV4 credential scope names.
 */
export type FakeSecretsManagerFailure = {
  /** The service's error code. @default 'AccessDeniedException' */
  type?: string;
  /** @default 400 */
  status?: number;
  message?: string;
};

export type FakeSecretsManager = {
  endpoint: string;
  /** Every GetSecretValue received, in order: the SecretId and the region it was signed for. */
  requests: Array<{ secretId: string; region: string | undefined }>;
  /** Sets (or rotates) a secret: requests by its full id or by the name in its ARN get `value`. */
  setSecret(secretId: string, value: string): void;
  /** Makes the next GetSecretValue fail. */
  failNext(failure?: FakeSecretsManagerFailure): void;
  /** Stops the server and puts AWS_ENDPOINT_URL_SECRETS_MANAGER back as it was. */
  close(): Promise<void>;
};

export async function startFakeSecretsManager(): Promise<FakeSecretsManager> {
  const secrets = new Map<string, { arn: string; value: string; version: number }>();
  const requests: FakeSecretsManager['requests'] = [];
  const failures: FakeSecretsManagerFailure[] = [];

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => answer(response, 500, { __type: 'InternalServiceError', message: String(error) }));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
      return answer(response, 400, { __type: 'UnknownOperationException', message: `not faked: ${String(request.headers['x-amz-target'])}` });
    }
    const { SecretId: secretId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId: string };
    const region = /Credential=[^/]+\/\d{8}\/([^/]+)\/secretsmanager\//.exec(String(request.headers.authorization))?.[1];
    requests.push({ secretId, region });

    const failure = failures.shift();
    if (failure) return answer(response, failure.status ?? 400, { __type: failure.type ?? 'AccessDeniedException', message: failure.message ?? 'not allowed to read this secret' });
    const secret = secrets.get(secretId);
    if (!secret) return answer(response, 400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
    answer(response, 200, {
      ARN: secret.arn,
      Name: nameOf(secret.arn),
      SecretString: secret.value,
      VersionId: `v-${secret.version}`,
      VersionStages: ['AWSCURRENT'],
      CreatedDate: Date.now() / 1000,
    });
  }

  const endpoint = await listenOnLoopback(server);
  const previousEndpoint = process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = endpoint;

  return {
    endpoint,
    requests,
    setSecret(secretId, value) {
      const version = (secrets.get(secretId)?.version ?? 0) + 1;
      const entry = { arn: secretId, value, version };
      secrets.set(secretId, entry);
      secrets.set(nameOf(secretId), entry);
    },
    failNext(failure = {}) {
      failures.push(failure);
    },
    async close() {
      if (previousEndpoint === undefined) delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
      else process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = previousEndpoint;
      await closeServer(server);
    },
  };
}

/** `arn:aws:secretsmanager:<region>:<account>:secret:<name>` → `<name>`; a name stays itself. */
function nameOf(secretId: string): string {
  return secretId.startsWith('arn:') ? secretId.split(':').slice(6).join(':') : secretId;
}

function answer(response: ServerResponse, status: number, body: Record<string, unknown>): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'content-length': Buffer.byteLength(payload) });
  response.end(payload);
}
