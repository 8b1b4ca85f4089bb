import { classifyEvent, SlackEnvelopeSchema, stripMentions, type SlackEventCallback } from '../../src/verification/slack-event';

const envelope = (event: Record<string, unknown>, authorizations = [{ user_id: 'UBOT', is_bot: true }]): SlackEventCallback =>
  SlackEnvelopeSchema.parse({ type: 'event_callback', team_id: 'T1', event_id: 'Ev1', event, authorizations }) as SlackEventCallback;

describe('classifyEvent', () => {
  it('takes an app mention, strips the bot mention, keeps the thread', () => {
    const decision = classifyEvent(envelope({ type: 'app_mention', user: 'U1', text: '<@UBOT> what is  up?', ts: '1.1', thread_ts: '1.0', channel: 'C1' }));
    expect(decision).toEqual({ kind: 'task', user: 'U1', channel: 'C1', ts: '1.1', thread_ts: '1.0', text: 'what is up?' });
  });

  it('takes a plain direct message', () => {
    expect(classifyEvent(envelope({ type: 'message', channel_type: 'im', user: 'U1', text: 'hi', ts: '2.2', channel: 'D1' }))).toMatchObject({ kind: 'task', text: 'hi' });
  });

  it.each([
    ['a reaction event', { type: 'reaction_added', user: 'U1' }, 'event-type'],
    ['a bot message', { type: 'app_mention', bot_id: 'B1', user: 'U2', text: 'x', ts: '1', channel: 'C' }, 'bot-message'],
    ['an edit', { type: 'message', subtype: 'message_changed', channel_type: 'im', ts: '1', channel: 'D' }, 'subtype'],
    ['its own message', { type: 'message', channel_type: 'im', user: 'UBOT', text: 'x', ts: '1', channel: 'D' }, 'own-message'],
    ['a channel message without mention', { type: 'message', channel_type: 'channel', user: 'U1', text: 'x', ts: '1', channel: 'C' }, 'not-a-dm'],
  ])('ignores %s', (_label, event, reason) => {
    expect(classifyEvent(envelope(event))).toEqual({ kind: 'ignore', reason });
  });

  it('uses SLACK_BOT_USER_ID when the envelope has no authorizations', () => {
    const decision = classifyEvent(envelope({ type: 'message', channel_type: 'im', user: 'UME', text: 'x', ts: '1', channel: 'D' }, []), 'UME');
    expect(decision).toEqual({ kind: 'ignore', reason: 'own-message' });
  });
});

describe('stripMentions', () => {
  it('removes only the bot\'s mentions, with or without a label', () => {
    expect(stripMentions('<@UBOT|bot> ask <@U2> about it <@UBOT>', new Set(['UBOT']))).toBe('ask <@U2> about it');
  });

  it('removes a leading mention when the bot id is unknown', () => {
    expect(stripMentions('<@UX> hello <@UY>', new Set())).toBe('hello <@UY>');
  });
});
