import { createServer, type IncomingMessage } from 'node:http';
import { createLogger } from '../../src/observability/logger';
import { encodeFeedbackValue, feedbackFormView } from '../../src/slack/feedback-blocks';
import { agentSessionStoppedEnvelope, appContextChangedEnvelope, appHomeOpenedEnvelope } from '../../src/local/slack-event-builder';
import { feedbackClickPayload, feedbackFormSubmission, postSignedInteraction } from '../../src/local/slack-interaction-builder';
import { DEFAULT_AGENT_PROMPTS } from '../../src/verification/surface/suggested-prompts';
import type { IntakeContext } from '../../src/verification/intake/intake';
import { EVENT_HANDLERS, INTERACTION_HANDLERS } from '../../src/verification/intake/intake-table';
import { readSlackRequest } from '../../src/verification/intake/slack-request';
import { verifySlackSignature } from '../../src/verification/intake/slack-signature';
import { closeServer, listenOnLoopback } from '../support/http';

const REQUEST_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const context: IntakeContext = { prompts: DEFAULT_AGENT_PROMPTS, log: createLogger('test'), now: 1_800_000_000_000 };

/** What the intake decides for a body the local builders made, read as slack-events reads it. */
async function decide(body: string, contentType: string) {
  const read = readSlackRequest(body, contentType);
  if (read.kind === 'event') return EVENT_HANDLERS[read.envelope.event.type]!(read.envelope, context);
  if (read.kind === 'interaction') return INTERACTION_HANDLERS[read.payload.type]!(read.payload, context);
  throw new Error(`not read: ${JSON.stringify(read)}`);
}

describe('the local builders of the agent surface\'s Slack requests: what the intake takes', () => {
  it('agent_session_stopped: a Stop of the thread, in the local channel unless told', async () => {
    const { body, eventId } = agentSessionStoppedEnvelope({ threadTs: '1800000000.000100' });
    const decision = await decide(body, 'application/json');
    expect(decision).toMatchObject({ kind: 'accept', claimKey: `event#${eventId}`, results: [{ kind: 'stop', thread: { team_id: 'TLOCAL', channel: 'CLOCAL', ts: '1800000000.000100', thread_ts: '1800000000.000100' }, user: 'ULOCALUSER', streamingTs: [] }] });
    const elsewhere = await decide(agentSessionStoppedEnvelope({ threadTs: '1.000001', channel: 'C9', streamingTs: ['1.000002'] }).body, 'application/json');
    expect(decision.kind === 'accept' && elsewhere.kind === 'accept' && elsewhere.results[0]).toMatchObject({ thread: { channel: 'C9' }, streamingTs: ['1.000002'] });
  });

  it('app_home_opened (messages tab) offers the prompts in the agent\'s DM; the Home tab offers none', async () => {
    expect(await decide(appHomeOpenedEnvelope().body, 'application/json')).toMatchObject({ kind: 'accept', results: [{ kind: 'slack', action: { type: 'set-prompts', channel: 'DLOCAL', prompts: DEFAULT_AGENT_PROMPTS.home } }] });
    expect(await decide(appHomeOpenedEnvelope({ tab: 'home' }).body, 'application/json')).toEqual({ kind: 'ignore', reason: 'not-the-messages-tab' });
  });

  it('app_context_changed: what the user looks at is remembered, and the channel prompts name it', async () => {
    const { body } = appContextChangedEnvelope({ entities: [{ type: 'slack#/types/channel_id', value: 'C42' }] });
    const decision = await decide(body, 'application/json');
    expect(decision).toMatchObject({ kind: 'accept', results: [{ kind: 'context', context: { team_id: 'TLOCAL', user: 'ULOCALUSER', entities: [{ type: 'channel', id: 'C42' }] } }, { kind: 'slack', action: { type: 'set-prompts', channel: 'DLOCAL' } }] });
  });

  it('block_actions: a feedback click on the answer its button names; view_submission: the form\'s text for that answer', async () => {
    const click = feedbackClickPayload({ value: encodeFeedbackValue({ rating: 'negative', requestId: REQUEST_ID, agent: 'main' }), channel: 'CLOCAL', messageTs: '2.000001', threadTs: '1.000001', triggerId: 'trigger-1' });
    const form = new URLSearchParams({ payload: JSON.stringify(click) }).toString();
    expect(await decide(form, 'application/x-www-form-urlencoded')).toMatchObject({
      kind: 'accept',
      results: [{ kind: 'feedback', feedback: { team_id: 'TLOCAL', channel: 'CLOCAL', message_ts: '2.000001', thread_ts: '1.000001', user: 'ULOCALUSER', request_id: REQUEST_ID, agent: 'main', value: 'negative', trigger_id: 'trigger-1' } }],
    });

    const view = feedbackFormView({ requestId: REQUEST_ID, agent: 'main', channel: 'CLOCAL', messageTs: '2.000001', threadTs: '1.000001' }, { title: 'What went wrong?', label: 'Tell us', submit: 'Send' });
    const submitted = new URLSearchParams({ payload: JSON.stringify(feedbackFormSubmission({ view, text: 'wrong numbers' })) }).toString();
    expect(await decide(submitted, 'application/x-www-form-urlencoded')).toMatchObject({ kind: 'accept', results: [{ kind: 'feedback', feedback: { request_id: REQUEST_ID, message_ts: '2.000001', comment: 'wrong numbers' } }] });
  });

  it('posts interactivity as Slack does: a form with one payload field, signed like an event', async () => {
    let received: { headers: IncomingMessage['headers']; body: string } | undefined;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received = { headers: req.headers, body };
        res.end();
      });
    });
    const base = await listenOnLoopback(server);
    try {
      const payload = { type: 'block_actions', user: { id: 'U1' } };
      expect((await postSignedInteraction(`${base}/slack/events`, payload, 'secret-1')).status).toBe(200);
      expect(received!.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(JSON.parse(new URLSearchParams(received!.body).get('payload')!)).toEqual(payload);
      const check = verifySlackSignature({ secret: 'secret-1', timestamp: String(received!.headers['x-slack-request-timestamp']), signature: String(received!.headers['x-slack-signature']), rawBody: received!.body, nowSeconds: Math.floor(Date.now() / 1000) });
      expect(check.ok).toBe(true);
    } finally {
      await closeServer(server);
    }
  });
});
