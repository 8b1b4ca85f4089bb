import { randomBytes } from 'node:crypto';
import { startLocalStack, type LocalStack } from '../../src/local/local-stack';
import { appMentionEnvelope } from '../../src/local/slack-event-builder';
import { slackSignatureHeaders } from '../../src/verification/intake/slack-signature';
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

// Streams are held (STREAM_HOLD_S 30 by default); a task quiet for a second is let go to polling.
const quiet = { POWERTOOLS_LOG_LEVEL: 'SILENT', SYNC_BUDGET_MS: '200', POLL_FIRST_DELAY_S: '1', STREAM_QUIET_S: '1' };

describe.each(['https', 'in-process', 'agentcore'])('local stack with TRANSPORT=%s', (transport) => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ env: { ...quiet, TRANSPORT: transport }, verificationPort: 0, executionPort: 0, timeScale: 0.1, replyWriter: () => undefined });
  });
  afterAll(() => stack.stop());

  it('answers a quick task, a slow one on its held stream, and a quiet one by polling, through the real ingress', async () => {
    expect(stack.agent.transport).toBe(transport);
    expect(await replyTo(stack, 'hello')).toBe('echo: hello');
    // Half a second of quiet: the hold reads it to its end, no poll.
    expect(await replyTo(stack, 'held #sleep=600')).toBe('echo: held #sleep=600');
    // Quiet for longer than STREAM_QUIET_S: the hold lets it go and polls follow it.
    expect(await replyTo(stack, 'later #sleep=2500')).toBe('echo: later #sleep=2500');
    const traces = stack.traces.all();
    const held = traces.find((t) => t.events.some((e) => e.hop === 'reply-posted') && t.events.some((e) => e.hop === 'accepted') && !t.events.some((e) => e.hop === 'poll'));
    const polled = traces.find((t) => t.events.some((e) => e.hop === 'poll'));
    expect(held?.events.map((e) => e.hop)).toEqual(expect.arrayContaining(['ingress', 'queued', 'execute-sent', 'accepted', 'reply-queued', 'reply-posted']));
    expect(polled?.events.map((e) => e.hop)).toEqual(expect.arrayContaining(['ingress', 'queued', 'execute-sent', 'accepted', 'poll', 'reply-queued', 'reply-posted']));
    expect(traces.filter((t) => t.events.some((e) => e.hop === 'poll'))).toHaveLength(1);
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
