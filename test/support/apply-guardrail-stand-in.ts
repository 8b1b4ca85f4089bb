import { createServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { BUILTIN_DETECTORS } from '../../src/guardrail/builtin-detectors';
import { ENTITY_TYPES } from '../../src/guardrail/entity-types';
import { findEntities } from '../../src/guardrail/find-entities';

/**
 * A loopback stand-in for Bedrock Runtime's ApplyGuardrail (POST
 * /guardrail/{id}/version/{version}/apply), so the real SDK client — with its default HTTP/2
 * handler, here over cleartext h2c — is exercised end to end. It plays a guardrail whose
 * sensitive-information policy has an action per entity type (BLOCK, ANONYMIZE, NONE = detect
 * only), finding entities with the built-in detectors, and answers as Bedrock does: action
 * GUARDRAIL_INTERVENED for a block and for a mask alike, `outputs` with `{TYPE}` tags or the
 * blocked message, per-entity assessments (Bedrock's PII types under `piiEntities`, the others
 * as named `regexes`), and usage in text units (one per started 1,000 characters). Faults: an
 * error answer, or no answer at all.
 */
export type StandInAction = 'BLOCK' | 'ANONYMIZE' | 'NONE';
export type ApplyGuardrailStandIn = {
  endpoint: string;
  guardrailId: string;
  guardrailVersion: string;
  /** The policy's action per entity type; types not listed are not looked for. */
  actions: Record<string, StandInAction>;
  /** Every request's body and source, in order. */
  requests: Array<{ source: string; text: string; path: string }>;
  /** The next answers are this error (status and `x-amzn-errortype`) instead. */
  failWith?: { status: number; errorType: string };
  /** The next requests get no answer until the stand-in closes. */
  stall: boolean;
  close(): Promise<void>;
};

const BEDROCK_PII_TYPES: ReadonlySet<string> = new Set([ENTITY_TYPES.email, ENTITY_TYPES.phone, ENTITY_TYPES.card, ENTITY_TYPES.iban, ENTITY_TYPES.awsAccessKey, ENTITY_TYPES.awsSecretKey]);
export const STAND_IN_BLOCKED_MESSAGE = 'Sorry, the model cannot answer this question.';

/** The environment that points the AWS SDK's Bedrock Runtime client at the stand-in (set it on process.env: the SDK reads it there). */
export function applyGuardrailEnv(standIn: ApplyGuardrailStandIn): Record<string, string> {
  return { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: standIn.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKIDSTANDIN', AWS_SECRET_ACCESS_KEY: 'stand-in-secret' };
}

export async function startApplyGuardrailStandIn(actions: Record<string, StandInAction>): Promise<ApplyGuardrailStandIn> {
  const sessions = new Set<ServerHttp2Session>();
  const server: Http2Server = createServer();
  const standIn: ApplyGuardrailStandIn = {
    endpoint: '',
    guardrailId: 'gr0standin0',
    guardrailVersion: '3',
    actions,
    requests: [],
    stall: false,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('request', (req: Http2ServerRequest, res: Http2ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => answer(standIn, req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}

function answer(standIn: ApplyGuardrailStandIn, req: Http2ServerRequest, res: Http2ServerResponse, body: string): void {
  const path = decodeURIComponent(req.url ?? '');
  const expected = `/guardrail/${standIn.guardrailId}/version/${standIn.guardrailVersion}/apply`;
  if (standIn.stall) return;
  const reply = (status: number, json: unknown, errorType?: string) => {
    res.writeHead(status, { 'content-type': 'application/json', ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
    res.end(JSON.stringify(json));
  };
  if (standIn.failWith) return reply(standIn.failWith.status, { message: 'stand-in failure' }, standIn.failWith.errorType);
  if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ')) return reply(403, { message: 'Missing Authentication Token' }, 'AccessDeniedException');
  if (req.method !== 'POST' || path !== expected) return reply(404, { message: `no guardrail at ${path}` }, 'ResourceNotFoundException');
  const request = JSON.parse(body) as { source: string; content: Array<{ text?: { text: string } }> };
  if (request.source !== 'INPUT' && request.source !== 'OUTPUT') return reply(400, { message: 'source must be INPUT or OUTPUT' }, 'ValidationException');
  const text = request.content.map((block) => block.text?.text ?? '').join('');
  standIn.requests.push({ source: request.source, text, path });

  const detectors = BUILTIN_DETECTORS.filter((detector) => detector.type in standIn.actions);
  const spans = findEntities(text, detectors);
  const taken = spans.map((span) => ({ span, match: text.slice(span.start, span.end), action: standIn.actions[span.type]! }));
  const acted = { BLOCK: 'BLOCKED', ANONYMIZE: 'ANONYMIZED', NONE: 'NONE' } as const;
  const items = taken.map((item) => ({ match: item.match, action: acted[item.action], detected: true }));
  const piiEntities = taken.flatMap((item, index) => (BEDROCK_PII_TYPES.has(item.span.type) ? [{ ...items[index], type: item.span.type }] : []));
  const regexes = taken.flatMap((item, index) => (BEDROCK_PII_TYPES.has(item.span.type) ? [] : [{ ...items[index], name: item.span.type, regex: '(stand-in)' }]));
  const blocked = taken.some((item) => item.action === 'BLOCK');
  const anonymized = taken.some((item) => item.action === 'ANONYMIZE');
  let output = text;
  for (const item of [...taken].reverse()) if (item.action === 'ANONYMIZE') output = output.slice(0, item.span.start) + `{${item.span.type}}` + output.slice(item.span.end);
  reply(200, {
    action: blocked || anonymized ? 'GUARDRAIL_INTERVENED' : 'NONE',
    outputs: blocked ? [{ text: STAND_IN_BLOCKED_MESSAGE }] : anonymized ? [{ text: output }] : [],
    assessments: taken.length > 0 ? [{ sensitiveInformationPolicy: { piiEntities, regexes } }] : [],
    usage: { topicPolicyUnits: 0, contentPolicyUnits: 0, wordPolicyUnits: 0, sensitiveInformationPolicyUnits: Math.ceil(text.length / 1000), sensitiveInformationPolicyFreeUnits: 0, contextualGroundingPolicyUnits: 0 },
  });
}
