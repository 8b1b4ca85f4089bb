import { randomBytes } from 'node:crypto';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { slackSignatureHeaders } from '../../src/verification/slack-signature';
import { eventually } from '../support/http';
import { startSdkA2aAgent } from '../support/a2a-agents';

/** `zone start`'s stack with each transport: a signed event in through real HTTP, a reply out. */
async function replyTo(stack: LocalStack, text: string): Promise<string> {
  const sent = await stack.say(text);
  expect(sent.status).toBe(200);
  const trace = await eventually(() => {
    const found = stack.traces.byEventId(sent.eventId);
    return found?.events.some((e) => e.hop === 'reply-posted') ? found : undefined;
  }, 15_000);
  const ingress = trace.events.find((e) => e.hop === 'ingress');
  const reply = stack.consoleReplies!.posted.find((r) => r.threadTs === ingress?.detail?.ts);
  return reply!.text;
}

const quiet = { POWERTOOLS_LOG_LEVEL: 'SILENT', SYNC_BUDGET_MS: '200', POLL_FIRST_DELAY_S: '1' };

describe.each(['https', 'in-process', 'agentcore'])('local stack with TRANSPORT=%s', (transport) => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ env: { ...quiet, TRANSPORT: transport }, verificationPort: 0, executionPort: 0, timeScale: 0.1, replyWriter: () => undefined });
  });
  afterAll(() => stack.stop());

  it('answers a quick and an accepted task through the real ingress', async () => {
    expect(stack.agent.transport).toBe(transport);
    expect(await replyTo(stack, 'hello')).toBe('echo: hello');
    expect(await replyTo(stack, 'later #sleep=600')).toBe('echo: later #sleep=600');
    const accepted = stack.traces.all().find((t) => t.events.some((e) => e.hop === 'accepted'));
    expect(accepted?.events.map((e) => e.hop)).toEqual(expect.arrayContaining(['ingress', 'queued', 'execute-sent', 'accepted', 'poll', 'reply-queued', 'reply-posted']));
  });

  it('generated a signing secret and refuses requests not signed with it', async () => {
    expect(stack.signingSecretGenerated).toBe(true);
    expect(stack.signingSecret).toMatch(/^[0-9a-f]{32}$/);
    // A fresh event, with a current timestamp: only the secret it is signed with differs.
    const { body } = appMentionEnvelope({ text: 'who signed this?' });
    const send = (secret: string) => fetch(stack.ingressUrl, { method: 'POST', body, headers: { 'content-type': 'application/json', ...slackSignatureHeaders(secret, body) } });
    const forged = await send(randomBytes(16).toString('hex'));
    expect(forged.status).toBe(401);
    const signed = await send(stack.signingSecret);
    expect(signed.status).toBe(200);
  });
});

describe('local stack pointed at another execution agent', () => {
  it('talks A2A 1.0 to an @a2a-js/sdk agent through EXECUTION_URL and EXECUTION_PROTOCOL', async () => {
    const agent = await startSdkA2aAgent();
    const stack = await startLocalStack({
      env: { ...quiet, EXECUTION_PROTOCOL: 'a2a', EXECUTION_URL: agent.url },
      verificationPort: 0,
      timeScale: 0.1,
      replyWriter: () => undefined,
    });
    try {
      expect(stack.executionUrl).toBeUndefined();
      expect(stack.agent.protocol).toBe('a2a');
      expect(await replyTo(stack, 'hi agent')).toMatch(/hi agent/);
    } finally {
      await stack.stop();
      await agent.close();
    }
  });
});
