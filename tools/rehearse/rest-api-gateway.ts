import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox } from './lambda-sandbox';
import { requestBody } from './request-body';
import type { Stack } from './template-functions';

/**
 * An API Gateway REST API's Lambda proxy routes (AWS::ApiGateway::Method with an AWS_PROXY
 * integration), on loopback: the request becomes the proxy event (payload 1.0) the function
 * receives, its `{statusCode, headers, body, isBase64Encoded}` the HTTP answer. The paths and the
 * required request headers (`method.request.header.*`) come from the template; a request
 * missing one is refused with 400 before the function, as API Gateway's validator refuses it. The
 * JSON model check, WAF and throttling are API Gateway's and not rehearsed.
 */
export type RestApiGateway = { url: string; routes: Array<{ method: string; path: string; functionLogicalId: string }>; failures: string[]; close(): Promise<void> };

type Route = { method: string; path: string; functionLogicalId: string; requiredHeaders: string[] };

export function proxyRoutesOf(stack: Stack): Route[] {
  const resources = stack.template.Resources;
  const pathOf = (ref: unknown): string => {
    const id = (ref as { Ref?: string })?.Ref;
    const resource = id ? resources[id] : undefined;
    if (!resource || resource.Type !== 'AWS::ApiGateway::Resource') return '';
    return `${pathOf(resource.Properties?.ParentId)}/${resource.Properties?.PathPart as string}`;
  };
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties?.Integration?.Type === 'AWS_PROXY')
    .flatMap((r) => {
      const target = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(JSON.stringify(r.Properties!.Integration.Uri))?.[1];
      if (!target) return [];
      const requiredHeaders = Object.entries((r.Properties!.RequestParameters as Record<string, boolean> | undefined) ?? {})
        .filter(([name, required]) => required && name.startsWith('method.request.header.'))
        .map(([name]) => name.slice('method.request.header.'.length).toLowerCase());
      return [{ method: String(r.Properties!.HttpMethod), path: pathOf(r.Properties!.ResourceId) || '/', functionLogicalId: target, requiredHeaders }];
    });
}

export async function startRestApiGateway(routes: Route[], sandboxOf: (functionLogicalId: string) => Sandbox, options: { accountId: string; timeoutMs: number }): Promise<RestApiGateway> {
  const failures: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const route = routes.find((r) => r.method === req.method && r.path === url.pathname);
      if (!route) return void res.writeHead(403, { 'content-type': 'application/json' }).end('{"message":"Missing Authentication Token"}');
      const missing = route.requiredHeaders.filter((name) => req.headers[name] === undefined);
      if (missing.length) return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `Missing required request parameters: [${missing.join(', ')}]` }));
      const body = await requestBody(req);
      try {
        const result = await sandboxOf(route.functionLogicalId).invokeJson<{ statusCode?: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean }>(proxyEvent(req, url, route, body, options.accountId), { timeoutMs: options.timeoutMs });
        res.writeHead(result?.statusCode ?? 200, result?.headers ?? {}).end(result?.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
      } catch (error) {
        failures.push((error as Error).message);
        res.writeHead(502, { 'content-type': 'application/json' }).end('{"message": "Internal server error"}');
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routes,
    failures,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function proxyEvent(req: IncomingMessage, url: URL, route: Route, body: Buffer, accountId: string) {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const [name, value] = [req.rawHeaders[i]!, req.rawHeaders[i + 1]!];
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query = url.search ? Object.fromEntries(url.searchParams) : null;
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: req.method,
    headers,
    multiValueHeaders,
    queryStringParameters: query,
    multiValueQueryStringParameters: query ? Object.fromEntries([...url.searchParams.keys()].map((key) => [key, url.searchParams.getAll(key)])) : null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {
      accountId,
      apiId: 'rehearsal',
      resourcePath: route.path,
      httpMethod: req.method,
      path: `/prod${url.pathname}`,
      stage: 'prod',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      protocol: `HTTP/${req.httpVersion}`,
      identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: req.headers['user-agent'] ?? null },
    },
    body: body.length ? body.toString('utf8') : null,
    isBase64Encoded: false,
  };
}
