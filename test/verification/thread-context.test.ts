import type { SlackThreadMessage } from '../../src/slack/slack-conversations';
import { REPLY_METADATA_TYPE } from '../../src/slack/reply-metadata';
import { threadContext } from '../../src/verification/invoke/thread-context';

const roomy = { maxMessages: 50, maxChars: 100_000 };
const said = (ts: string, text: string, user = 'U1'): SlackThreadMessage => ({ ts, text, user });
const totalChars = (messages: ReadonlyArray<{ text: string }>) => messages.reduce((sum, message) => sum + message.text.length, 0);

describe('threadContext: roles and text', () => {
  it('makes the bot\'s replies assistant (by its user id) and everyone else user with their id, oldest first', () => {
    const context = threadContext(
      [said('1.0', 'how do I rotate keys?', 'U1'), { ts: '1.1', text: 'Use the console.', user: 'UBOT', bot_id: 'B1' }, said('1.2', 'and with the CLI?', 'U2')],
      'UBOT',
      roomy,
    );
    expect(context).toEqual({
      messages: [
        { role: 'user', text: 'how do I rotate keys?', user_id: 'U1', ts: '1.0' },
        { role: 'assistant', text: 'Use the console.', ts: '1.1' },
        { role: 'user', text: 'and with the CLI?', user_id: 'U2', ts: '1.2' },
      ],
      leftOut: 0,
    });
  });

  it('tells the bot\'s replies by their metadata when the bot id is unknown', () => {
    const context = threadContext(
      [said('1.0', 'question'), { ts: '1.1', text: 'an answer', bot_id: 'B1', subtype: 'bot_message', metadata: { event_type: REPLY_METADATA_TYPE } }],
      undefined,
      roomy,
    );
    expect(context.messages).toEqual([
      { role: 'user', text: 'question', user_id: 'U1', ts: '1.0' },
      { role: 'assistant', text: 'an answer', ts: '1.1' },
    ]);
  });

  it('treats another bot as a user, attributed by its bot id, and a message from our id as the bot only for our id', () => {
    const context = threadContext(
      [
        { ts: '1.0', text: 'deploy finished', bot_id: 'BOTHER', subtype: 'bot_message', metadata: { event_type: 'deploy_notice' } },
        { ts: '1.1', text: 'not me', user: 'UBOTX' },
      ],
      'UBOT',
      roomy,
    );
    expect(context.messages).toEqual([
      { role: 'user', text: 'deploy finished', user_id: 'BOTHER', ts: '1.0' },
      { role: 'user', text: 'not me', user_id: 'UBOTX', ts: '1.1' },
    ]);
  });

  it('makes only this bot\'s messages assistant: another app posting with the same reply metadata is a user turn (issue 25)', () => {
    const context = threadContext(
      [
        said('1.0', 'question'),
        { ts: '1.1', text: 'the real answer', user: 'UBOT', bot_id: 'B1', metadata: { event_type: REPLY_METADATA_TYPE } },
        { ts: '1.2', text: 'an imitation', user: 'UOTHERBOT', bot_id: 'BOTHER', metadata: { event_type: REPLY_METADATA_TYPE } },
        { ts: '1.3', text: 'a legacy bot', bot_id: 'BLEGACY', subtype: 'bot_message', metadata: { event_type: REPLY_METADATA_TYPE } },
      ],
      'UBOT',
      roomy,
    );
    expect(context.messages).toEqual([
      { role: 'user', text: 'question', user_id: 'U1', ts: '1.0' },
      { role: 'assistant', text: 'the real answer', ts: '1.1' },
      { role: 'user', text: 'an imitation', user_id: 'UOTHERBOT', ts: '1.2' },
      { role: 'user', text: 'a legacy bot', user_id: 'BLEGACY', ts: '1.3' },
    ]);
  });

  it('without the bot id, takes the metadata only on an app\'s message, not on a person\'s', () => {
    const context = threadContext([{ ts: '1.0', text: 'posted with a user token', user: 'U1', metadata: { event_type: REPLY_METADATA_TYPE } }], undefined, roomy);
    expect(context.messages).toEqual([{ role: 'user', text: 'posted with a user token', user_id: 'U1', ts: '1.0' }]);
  });

  it('strips the bot\'s mentions from what people said and keeps mentions of others', () => {
    const context = threadContext([said('1.0', '<@UBOT> ask <@U2> about  it <@UBOT|bridge>')], 'UBOT', roomy);
    expect(context.messages[0]!.text).toBe('ask <@U2> about it');
  });

  it('names the files shared with a message in its text', () => {
    const context = threadContext(
      [
        { ts: '1.0', text: 'see the chart', user: 'U1', subtype: 'file_share', files: [{ name: 'chart.png' }] },
        { ts: '1.1', text: '', user: 'U1', files: [{ name: 'a.pdf' }, { title: 'Untitled notes' }, {}] },
      ],
      'UBOT',
      roomy,
    );
    expect(context.messages.map((message) => message.text)).toEqual(['see the chart\n[shared a file: chart.png]', '[shared files: a.pdf, Untitled notes]']);
  });

  it('skips joins, topic changes, tombstones and messages with nothing said', () => {
    const context = threadContext(
      [
        said('1.0', 'the question'),
        { ts: '1.1', text: '<@U3> has joined the channel', user: 'U3', subtype: 'channel_join' },
        { ts: '1.2', text: 'This message was deleted.', subtype: 'tombstone', user: 'USLACKBOT' },
        { ts: '1.3', text: 'set the topic', user: 'U1', subtype: 'channel_topic' },
        { ts: '1.4', text: '   ', user: 'U2' },
        { ts: '1.5', text: '<@UBOT>', user: 'U2' },
        { ts: '1.6', text: 'hmm', user: 'U2', subtype: 'thread_broadcast' },
        { ts: '1.7', text: 'waves', user: 'U2', subtype: 'me_message' },
      ],
      'UBOT',
      roomy,
    );
    expect(context.messages.map((message) => message.ts)).toEqual(['1.0', '1.6', '1.7']);
    expect(context.leftOut).toBe(0);
  });
});

describe('threadContext: limits', () => {
  const thread = (count: number, length: number) => Array.from({ length: count }, (_, index) => said(`2.${String(index).padStart(3, '0')}`, String(index % 10).repeat(length)));

  it('sends the whole thread when it fits', () => {
    const read = thread(4, 10);
    const context = threadContext(read, 'UBOT', { maxMessages: 4, maxChars: 40 });
    expect(context.messages.map((message) => message.ts)).toEqual(['2.000', '2.001', '2.002', '2.003']);
    expect(context.leftOut).toBe(0);
  });

  it('keeps the first message and the newest within maxMessages, and counts the rest as left out', () => {
    const context = threadContext(thread(10, 5), 'UBOT', { maxMessages: 3, maxChars: 100_000 });
    expect(context.messages.map((message) => message.ts)).toEqual(['2.000', '2.008', '2.009']);
    expect(context.leftOut).toBe(7);
  });

  it('keeps only the newest when there is room for one message', () => {
    const context = threadContext(thread(10, 5), 'UBOT', { maxMessages: 1, maxChars: 100_000 });
    expect(context.messages.map((message) => message.ts)).toEqual(['2.009']);
    expect(context.leftOut).toBe(9);
  });

  it('keeps the newest within maxChars, with the first message cut to a quarter of the budget', () => {
    const read = thread(6, 100);
    const context = threadContext(read, 'UBOT', { maxMessages: 50, maxChars: 250 });
    // A quarter of 250 is 62 characters for the first; the newest 100 fit in the 188 left, two would not.
    expect(context.messages.map((message) => message.ts)).toEqual(['2.000', '2.005']);
    expect(context.messages[0]!.text).toBe(`${'0'.repeat(61)}…`);
    expect(context.messages[1]!.text).toBe(read[5]!.text);
    expect(context.leftOut).toBe(4);
  });

  it('keeps a short first message whole', () => {
    const read = [said('3.0', 'What is our on-call rota?'), ...thread(5, 100).map((message, index) => ({ ...message, ts: `3.${index + 1}` }))];
    const context = threadContext(read, 'UBOT', { maxMessages: 50, maxChars: 250 });
    expect(context.messages.map((message) => message.ts)).toEqual(['3.0', '3.4', '3.5']);
    expect(context.messages[0]).toEqual({ role: 'user', text: 'What is our on-call rota?', user_id: 'U1', ts: '3.0' });
    expect(context.leftOut).toBe(3);
  });

  it('leaves a long first message out when a quarter of the budget is under 40 characters', () => {
    const context = threadContext(thread(6, 100), 'UBOT', { maxMessages: 50, maxChars: 150 });
    expect(context.messages.map((message) => message.ts)).toEqual(['2.005']);
    expect(context.leftOut).toBe(5);
  });

  it('cuts a single over-long newest message from the front, keeping its end', () => {
    const read = [said('4.0', 'x'.repeat(100)), said('4.1', `${'a'.repeat(100)}${'z'.repeat(50)}`)];
    const context = threadContext(read, 'UBOT', { maxMessages: 50, maxChars: 60 });
    expect(context.messages).toEqual([{ role: 'user', text: `…${'a'.repeat(9)}${'z'.repeat(50)}`, user_id: 'U1', ts: '4.1' }]);
    expect(context.leftOut).toBe(1);
  });

  it('cuts the newest message to what the first one leaves', () => {
    const read = [said('4.0', 'hi'), said('4.1', `${'a'.repeat(100)}${'z'.repeat(50)}`)];
    const context = threadContext(read, 'UBOT', { maxMessages: 50, maxChars: 60 });
    expect(context.messages.map((message) => message.text)).toEqual(['hi', `…${'a'.repeat(7)}${'z'.repeat(50)}`]);
    expect(totalChars(context.messages)).toBe(60);
  });

  it('stays within maxChars when the newest message is cut to fill it', () => {
    const read = [said('5.0', 'the question that started this thread, long enough to be worth keeping'), said('5.1', 'x'.repeat(5000))];
    const context = threadContext(read, 'UBOT', { maxMessages: 50, maxChars: 1000 });
    expect(context.messages.map((message) => message.ts)).toEqual(['5.0', '5.1']);
    expect(totalChars(context.messages)).toBe(1000);
  });

  it('sends an over-long only message once, with the whole character budget', () => {
    const context = threadContext([said('6.0', 'y'.repeat(5000))], 'UBOT', { maxMessages: 50, maxChars: 1000 });
    expect(context.messages.map((message) => message.ts)).toEqual(['6.0']);
    expect(context.leftOut).toBe(0);
    // The message is the thread's first and its newest: there is nothing to share the budget with.
    expect(context.messages[0]!.text).toHaveLength(1000);
  });

  it('sends nothing when maxMessages or maxChars is 0, counting every message as left out', () => {
    expect(threadContext(thread(3, 5), 'UBOT', { maxMessages: 0, maxChars: 1000 })).toEqual({ messages: [], leftOut: 3 });
    expect(threadContext(thread(3, 5), 'UBOT', { maxMessages: 5, maxChars: 0 })).toEqual({ messages: [], leftOut: 3 });
  });

  it('counts only spoken messages as left out', () => {
    const read = [...thread(4, 5), { ts: '2.100', text: 'joined', user: 'U9', subtype: 'channel_join' }];
    expect(threadContext(read, 'UBOT', { maxMessages: 1, maxChars: 1000 }).leftOut).toBe(3);
  });

  it('reads an empty thread as no messages', () => {
    expect(threadContext([], 'UBOT', roomy)).toEqual({ messages: [], leftOut: 0 });
  });

  it('never exceeds either limit, repeats or reorders a message, and accounts for every one', () => {
    const lengths = [3, 45, 400, 7, 120, 2500, 60, 1, 90, 300, 15, 800];
    const shapes: Array<[string, SlackThreadMessage[]]> = [
      ['one short', [said('7.00', 'short')]],
      ['one long', [said('7.00', 'L'.repeat(3000))]],
      ['mixed', lengths.map((length, index) => said(`7.${String(index).padStart(2, '0')}`, 'm'.repeat(length)))],
      ['long first', [said('7.00', 'F'.repeat(2000)), ...thread(8, 30).map((message, index) => ({ ...message, ts: `7.${String(index + 1).padStart(2, '0')}` }))]],
    ];
    for (const [label, read] of shapes) {
      for (const maxMessages of [1, 2, 3, 5, 50]) {
        for (const maxChars of [2, 10, 39, 40, 100, 160, 161, 500, 1000, 100_000]) {
          const context = threadContext(read, 'UBOT', { maxMessages, maxChars });
          const where = `${label}, maxMessages ${maxMessages}, maxChars ${maxChars}`;
          const ts = context.messages.map((message) => message.ts);
          expect({ where, count: context.messages.length <= maxMessages }).toEqual({ where, count: true });
          expect({ where, chars: totalChars(context.messages) <= maxChars }).toEqual({ where, chars: true });
          expect({ where, ts }).toEqual({ where, ts: [...new Set(ts)].sort() });
          expect({ where, accounted: context.messages.length + context.leftOut }).toEqual({ where, accounted: read.length });
          // Whenever anything is sent, the newest message is among it.
          expect({ where, newest: context.messages.length === 0 || ts.at(-1) === read.at(-1)!.ts }).toEqual({ where, newest: true });
          expect({ where, empty: context.messages.length > 0 }).toEqual({ where, empty: true });
        }
      }
    }
  });
});
