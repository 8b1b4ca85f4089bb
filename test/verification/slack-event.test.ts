import { classifyEvent, SlackEnvelopeSchema, stripMentions, type SlackEventCallback } from '../../src/verification/intake/slack-event';

const envelope = (event: Record<string, unknown>, authorizations = [{ user_id: 'UBOT', is_bot: true }]): SlackEventCallback =>
  SlackEnvelopeSchema.parse({ type: 'event_callback', team_id: 'T1', event_id: 'Ev1', event, authorizations }) as SlackEventCallback;

describe('classifyEvent', () => {
  it('takes an app mention, strips the bot mention, keeps the thread', () => {
    const decision = classifyEvent(envelope({ type: 'app_mention', user: 'U1', text: '<@UBOT> what is  up?', ts: '1.1', thread_ts: '1.0', channel: 'C1' }));
    expect(decision).toEqual({ kind: 'task', user: 'U1', channel: 'C1', ts: '1.1', thread_ts: '1.0', text: 'what is up?', botUserId: 'UBOT' });
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

describe('classifyEvent: files and threads', () => {
  const file = { id: 'F1', name: 'chart.png', mimetype: 'image/png', filetype: 'png', size: 1234, url_private_download: 'https://files.slack.com/files-pri/T1-F1/download/chart.png' };

  it('takes a direct message with files (subtype file_share) and passes the files through', () => {
    const decision = classifyEvent(envelope({ type: 'message', subtype: 'file_share', channel_type: 'im', user: 'U1', text: 'what is this?', ts: '3.3', channel: 'D1', files: [file] }));
    expect(decision).toEqual({ kind: 'task', user: 'U1', channel: 'D1', ts: '3.3', text: 'what is this?', files: [file], botUserId: 'UBOT' });
  });

  it('takes an app mention with files and no text', () => {
    const decision = classifyEvent(envelope({ type: 'app_mention', user: 'U1', text: '<@UBOT>', ts: '3.4', channel: 'C1', files: [file] }));
    expect(decision).toMatchObject({ kind: 'task', text: '', files: [file] });
    expect(decision).not.toHaveProperty('followUp');
  });

  it('leaves files out when the list is empty', () => {
    const decision = classifyEvent(envelope({ type: 'message', channel_type: 'im', user: 'U1', text: 'hi', ts: '3.5', channel: 'D1', files: [] }));
    expect(decision).toMatchObject({ kind: 'task' });
    expect(decision).not.toHaveProperty('files');
  });

  it('makes a thread_broadcast reply in a channel thread a follow-up candidate', () => {
    const decision = classifyEvent(envelope({ type: 'message', subtype: 'thread_broadcast', channel_type: 'channel', user: 'U1', text: 'and also this', ts: '5.2', thread_ts: '5.0', channel: 'C1' }));
    expect(decision).toEqual({ kind: 'task', user: 'U1', channel: 'C1', ts: '5.2', thread_ts: '5.0', text: 'and also this', botUserId: 'UBOT', followUp: true });
  });

  it.each([['channel'], ['group']])('makes a %s thread reply without a mention a follow-up candidate', (channelType) => {
    const decision = classifyEvent(envelope({ type: 'message', channel_type: channelType, user: 'U1', text: 'one more thing', ts: '6.1', thread_ts: '6.0', channel: 'C1' }));
    expect(decision).toEqual({ kind: 'task', user: 'U1', channel: 'C1', ts: '6.1', thread_ts: '6.0', text: 'one more thing', botUserId: 'UBOT', followUp: true });
  });

  it('does not mark a direct message in a DM thread as a follow-up', () => {
    const decision = classifyEvent(envelope({ type: 'message', channel_type: 'im', user: 'U1', text: 'more', ts: '7.1', thread_ts: '7.0', channel: 'D1' }));
    expect(decision).toMatchObject({ kind: 'task', thread_ts: '7.0' });
    expect(decision).not.toHaveProperty('followUp');
  });

  it.each([
    ['a channel thread reply that mentions the bot', { type: 'message', channel_type: 'channel', user: 'U1', text: '<@UBOT> and this?', ts: '8.1', thread_ts: '8.0', channel: 'C1' }, 'mention-event'],
    ['a channel thread reply that mentions the bot with a label', { type: 'message', channel_type: 'channel', user: 'U1', text: 'hey <@UBOT|bridge> and this?', ts: '8.1', thread_ts: '8.0', channel: 'C1' }, 'mention-event'],
    ['a thread reply that mentions another person', { type: 'message', channel_type: 'channel', user: 'U1', text: '<@U2> what do you think?', ts: '8.2', thread_ts: '8.0', channel: 'C1' }, 'addressed-to-someone-else'],
    ['a private-channel thread reply that mentions another person', { type: 'message', channel_type: 'group', user: 'U1', text: 'ask <@U2|ann>', ts: '8.2', thread_ts: '8.0', channel: 'G1' }, 'addressed-to-someone-else'],
    ['a top-level channel message', { type: 'message', channel_type: 'channel', user: 'U1', text: 'hello all', ts: '9.0', channel: 'C1' }, 'not-a-dm'],
    ['a thread parent in a channel (thread_ts === ts)', { type: 'message', channel_type: 'channel', user: 'U1', text: 'the parent', ts: '9.0', thread_ts: '9.0', channel: 'C1' }, 'not-a-dm'],
    ['a multi-person DM thread reply', { type: 'message', channel_type: 'mpim', user: 'U1', text: 'x', ts: '9.1', thread_ts: '9.0', channel: 'G2' }, 'not-a-dm'],
    ['an edit in a channel thread', { type: 'message', subtype: 'message_changed', channel_type: 'channel', ts: '9.2', thread_ts: '9.0', channel: 'C1', message: { text: 'x' } }, 'subtype'],
    ['a deletion in a DM', { type: 'message', subtype: 'message_deleted', channel_type: 'im', ts: '9.3', channel: 'D1', deleted_ts: '9.1' }, 'subtype'],
    ['a deletion in a channel thread', { type: 'message', subtype: 'message_deleted', channel_type: 'channel', ts: '9.3', thread_ts: '9.0', channel: 'C1' }, 'subtype'],
    ['a join message in a channel thread', { type: 'message', subtype: 'channel_join', channel_type: 'channel', user: 'U1', text: 'joined', ts: '9.4', thread_ts: '9.0', channel: 'C1' }, 'subtype'],
    ['a bot reply in a channel thread', { type: 'message', subtype: 'bot_message', channel_type: 'channel', bot_id: 'B9', text: 'beep', ts: '9.5', thread_ts: '9.0', channel: 'C1' }, 'bot-message'],
    ['the bot\'s own thread reply', { type: 'message', channel_type: 'channel', user: 'UBOT', text: 'answer', ts: '9.6', thread_ts: '9.0', channel: 'C1' }, 'own-message'],
  ])('ignores %s', (_label, event, reason) => {
    expect(classifyEvent(envelope(event))).toEqual({ kind: 'ignore', reason });
  });

  // Issue 25: a reply in an answered thread is a follow-up only when a person wrote it to the thread.
  const reply = (fields: Record<string, unknown>) => ({ type: 'message', channel_type: 'channel', user: 'U1', ts: '10.1', thread_ts: '10.0', channel: 'C1', ...fields });
  it.each([
    ['a reply that pings @here', reply({ text: '<!here> the deploy is done' }), 'pings-a-group'],
    ['a reply that pings @channel (with a label)', reply({ text: 'heads up <!channel|@channel>' }), 'pings-a-group'],
    ['a reply that pings @everyone', reply({ text: '<!everyone> lunch' }), 'pings-a-group'],
    ['a reply that pings the legacy @group', reply({ text: '<!group> hi' }), 'pings-a-group'],
    ['a reply that pings a user group', reply({ text: 'can <!subteam^S0123ABC|@oncall> look?' }), 'pings-a-group'],
    ['a reply that pings a user group without a label', reply({ text: '<!subteam^S0123ABC> look' }), 'pings-a-group'],
    ['a reply an app posted with a user token (app_id)', reply({ text: 'automated summary', app_id: 'A0OTHER' }), 'posted-by-an-app'],
    ['a reply an app posted with a user token (bot_profile)', reply({ text: 'automated summary', bot_profile: { id: 'B0OTHER', app_id: 'A0OTHER', name: 'other' } }), 'posted-by-an-app'],
    ['a reply another bot posted (bot_id)', reply({ text: 'beep', bot_id: 'B0OTHER', app_id: 'A0OTHER' }), 'bot-message'],
  ])('is not a follow-up: %s', (_label, event, reason) => {
    expect(classifyEvent(envelope(event))).toEqual({ kind: 'ignore', reason });
  });

  it('keeps a follow-up that only looks like a ping: a channel link, a date, the word "here"', () => {
    const decision = classifyEvent(envelope(reply({ text: 'see <#C0OTHER|general> at <!date^1700000000^{time}|3pm>, here and now' })));
    expect(decision).toMatchObject({ kind: 'task', followUp: true });
  });

  it('still answers a mention that pings a group, or that an app posted with a user token: the bot was asked by name', () => {
    expect(classifyEvent(envelope({ type: 'app_mention', user: 'U1', text: '<@UBOT> <!here> what happened?', ts: '11.1', channel: 'C1' }))).toMatchObject({ kind: 'task', text: '<!here> what happened?' });
    expect(classifyEvent(envelope({ type: 'app_mention', user: 'U1', app_id: 'A0OTHER', text: '<@UBOT> summarize', ts: '11.2', channel: 'C1' }))).toMatchObject({ kind: 'task', text: 'summarize' });
  });

  it('knows the bot by the argument when the envelope has no authorizations', () => {
    const mention = classifyEvent(envelope({ type: 'app_mention', user: 'U1', text: '<@UARG> hi', ts: '1', channel: 'C1' }, []), 'UARG');
    expect(mention).toEqual({ kind: 'task', user: 'U1', channel: 'C1', ts: '1', text: 'hi', botUserId: 'UARG' });
    const reply = classifyEvent(envelope({ type: 'message', channel_type: 'channel', user: 'U1', text: '<@UARG> hi', ts: '2', thread_ts: '1', channel: 'C1' }, []), 'UARG');
    expect(reply).toEqual({ kind: 'ignore', reason: 'mention-event' });
  });

  it('takes the bot id from the authorizations, not from a user authorization', () => {
    const decision = classifyEvent(envelope({ type: 'app_mention', user: 'U1', text: '<@UBOT2> hi', ts: '1', channel: 'C1' }, [{ user_id: 'UHUMAN', is_bot: false }, { user_id: 'UBOT2', is_bot: true }]));
    expect(decision).toMatchObject({ kind: 'task', text: 'hi', botUserId: 'UBOT2' });
  });

  it('leaves botUserId out when neither the envelope nor the argument names the bot', () => {
    const decision = classifyEvent(envelope({ type: 'message', channel_type: 'im', user: 'U1', text: 'hi', ts: '1', channel: 'D1' }, []));
    expect(decision).toEqual({ kind: 'task', user: 'U1', channel: 'D1', ts: '1', text: 'hi' });
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
