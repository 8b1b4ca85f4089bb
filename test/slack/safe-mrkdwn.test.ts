import fc from 'fast-check';
import { createLogger } from '../../src/observability/logger';
import { labelMisleads, toSafeMrkdwn } from '../../src/slack/safe-mrkdwn';
import { WebApiSlackReplies, createSlackWebClient } from '../../src/slack/slack-replies';
import { splitForSlack } from '../../src/slack/split-message';
import { createSlackPoster } from '../../src/verification/post/slack-poster';
import { MemoryClaimStore } from '../../src/verification/stores/memory-claim-store';
import { startFakeSlackApi, type FakeSlackApi } from '../support/fake-slack-api';

/** What Slack can act on in posted text: every `<…>` sequence. */
const sequencesIn = (text: string) => text.match(/<[^<>]*>/g) ?? [];
/** The sequences the safe text may contain: user mentions, channel links, dates and links. */
const ALLOWED_SEQUENCE = /^<(?:@[UW][A-Z0-9]+|#[CGD][A-Z0-9]+(?:\|[^|]*)?|!date\^[^>]*|(?:https?|mailto):[^\s|>]+(?:\|[^>]*)?)>$/i;

describe('toSafeMrkdwn', () => {
  it.each([
    ['<!channel>', '@channel'],
    ['<!here>', '@here'],
    ['<!everyone>', '@everyone'],
    ['<!group>', '@group'],
    ['<!here|here>', '@here'],
    ['<!channel|everyone, look>', '@channel'],
    ['<!subteam^S0123ABC|@oncall>', '@oncall'],
    ['<!subteam^S0123ABC|oncall>', '@oncall'],
    ['<!subteam^S0123ABC>', '@S0123ABC'],
  ])('neutralizes the broadcast %s as the plain text %s', (mention, plain) => {
    // Act
    const safe = toSafeMrkdwn(`Heads up ${mention}: the deploy is done.`);
    // Assess
    expect(safe).toBe(`Heads up ${plain}: the deploy is done.`);
    expect(safe).not.toContain('<!');
  });

  it('shows a special command it does not know as literal text, and keeps a date', () => {
    expect(toSafeMrkdwn('<!unknown^x|y> and <!channel^now>')).toBe('&lt;!unknown^x|y&gt; and &lt;!channel^now&gt;');
    expect(toSafeMrkdwn('Due <!date^1392734382^{date_short}|Feb 18, 2014>.')).toBe('Due <!date^1392734382^{date_short}|Feb 18, 2014>.');
    // A date may carry a link; a date is not a link, so that goes.
    expect(toSafeMrkdwn('<!date^1392734382^{date}^https://evil.example|https://bank.example>')).toBe('<!date^1392734382^{date}|https://bank.example>');
  });

  it('keeps user mentions (without a label, so Slack shows the real name) and channel links', () => {
    expect(toSafeMrkdwn('<@U0123ABC>, see <#C0123ABC|deploys>.')).toBe('<@U0123ABC>, see <#C0123ABC|deploys>.');
    expect(toSafeMrkdwn('<@W0123ABC|@channel> asked')).toBe('<@W0123ABC> asked');
    expect(toSafeMrkdwn('<@everyone> and <#general>')).toBe('&lt;@everyone&gt; and &lt;#general&gt;');
  });

  it('keeps ordinary links, labelled or not', () => {
    const text = 'See <https://docs.aws.amazon.com/lambda/|the Lambda guide>, <https://example.com/a?b=1&amp;c=2> and <mailto:team@example.com|write to us>.';
    expect(toSafeMrkdwn(text)).toBe(text);
    // An & in a link that was not escaped is escaped; Slack decodes it back.
    expect(toSafeMrkdwn('<https://example.com/?a=1&b=2|results>')).toBe('<https://example.com/?a=1&amp;b=2|results>');
  });

  it.each([
    ['<https://evil.example|https://bank.example>', '<https://evil.example>'],
    ['<https://evil.example/login|bank.example>', '<https://evil.example/login>'],
    ['<https://evil.example|www.bank.example>', '<https://evil.example>'],
    ['<https://evil.example|*https://bank.example/login*>', '<https://evil.example>'],
    ['<https://evil.example|Log in at bank.example now>', '<https://evil.example>'],
    ['<https://bank.example@evil.example/|https://bank.example/>', '<https://bank.example@evil.example/>'],
    ['<https://bank.example.evil.example|bank.example>', '<https://bank.example.evil.example>'],
    ['<http://bank.example|https://bank.example>', '<http://bank.example>'],
    ['<https://xn--bnk-sna.example|bank.example>', '<https://xn--bnk-sna.example>'],
    ['<mailto:thief@evil.example|ceo@bank.example>', '<mailto:thief@evil.example>'],
    ['<https://evil.example|ceo@bank.example>', '<https://evil.example>'],
  ])('shows the real target of %s', (link, shown) => {
    expect(toSafeMrkdwn(`Click ${link} today`)).toBe(`Click ${shown} today`);
  });

  it.each([
    '<https://bank.example/login|https://bank.example/login>',
    '<https://www.bank.example/a/b|bank.example>',
    '<https://bank.example/docs/page?x=1|bank.example/docs>',
    '<https://Bank.Example/|https://bank.example>',
    '<https://bänk.example/|bänk.example>',
    '<mailto:ceo@bank.example|ceo@bank.example>',
    '<https://github.com/org/repo/blob/main/README.md|README.md>',
    '<https://nodejs.org/api/|the Node.js docs>',
    '<https://example.com/pi|3.14 and e.g. more>',
  ])('keeps %s: its label says where it goes, or is no address', (link) => {
    expect(toSafeMrkdwn(link)).toBe(link);
  });

  it('escapes stray control characters and anything in angle brackets that Slack should not parse', () => {
    expect(toSafeMrkdwn('if a < b && c > d')).toBe('if a &lt; b &amp;&amp; c &gt; d');
    expect(toSafeMrkdwn('a Map<String, List<int>> and <div class="x">')).toBe('a Map&lt;String, List&lt;int&gt;&gt; and &lt;div class="x"&gt;');
    expect(toSafeMrkdwn('<std::vector> <javascript:alert(1)|click> <www.example.com>')).toBe('&lt;std::vector&gt; &lt;javascript:alert(1)|click&gt; &lt;www.example.com&gt;');
    expect(toSafeMrkdwn('<https://example.com/a b|spaced>')).toBe('&lt;https://example.com/a b|spaced&gt;');
    expect(toSafeMrkdwn('Fish &amp; chips &lt;3 &nbsp;')).toBe('Fish &amp; chips &lt;3 &amp;nbsp;');
  });

  it('keeps > that starts a line as a block quote', () => {
    expect(toSafeMrkdwn('> quoted\n>>> all of this\nnot > this')).toBe('> quoted\n>>> all of this\nnot &gt; this');
  });

  it('neutralizes inside code blocks too: Slack parses <…> there as well', () => {
    expect(toSafeMrkdwn('```\necho "<!here>" && <b>bold</b>\n```')).toBe('```\necho "@here" &amp;&amp; &lt;b&gt;bold&lt;/b&gt;\n```');
  });

  it('can be applied twice with the same result, and leaves only sequences it allows', () => {
    const pieces = fc.constantFrom(
      '<!channel>',
      '<!here|x>',
      '<!subteam^S1|@team>',
      '<@U0123ABC|name>',
      '<#C0123ABC|general>',
      '<https://evil.example|https://bank.example>',
      '<https://a.example|label>',
      '<mailto:a@b.example>',
      '<!date^1^{date}|d>',
      '<', '>', '&', '&amp;', '&lt;', '|', '!', '@', '\n', ' ', '>>> ', 'text', 'https://x.example',
    );
    const texts = fc.array(fc.oneof(pieces, fc.string({ maxLength: 6 })), { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(texts, (text) => {
        const safe = toSafeMrkdwn(text);
        expect(toSafeMrkdwn(safe)).toBe(safe);
        for (const sequence of sequencesIn(safe)) expect(sequence).toMatch(ALLOWED_SEQUENCE);
        // Every < starts an allowed sequence and every & an entity.
        expect(safe.replace(/<[^<>]*>/g, '')).not.toMatch(/</);
        expect(safe).not.toMatch(/&(?!(?:amp|lt|gt);)/);
        expect(safe).not.toMatch(/<!(?!date\^)/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('labelMisleads', () => {
  it('reads the label word by word, ignoring formatting and punctuation around each', () => {
    expect(labelMisleads('https://evil.example/', 'Sign in (bank.example).')).toBe(true);
    expect(labelMisleads('https://bank.example/login', 'Sign in (bank.example).')).toBe(false);
    expect(labelMisleads('https://evil.example/', 'Sign in here')).toBe(false);
  });
});

describe('safe text, split for Slack', () => {
  it('never cuts an escape or a link it kept', () => {
    const text = `${'<a&b> 1 < 2 & <https://example.com/x?y=1&z=2|a link. With words> <!here> '.repeat(200)}`;
    const chunks = splitForSlack(toSafeMrkdwn(text), 100);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(100);
      // Nothing of <, > or & left once whole sequences and escapes are taken out: none was cut.
      expect(chunk.replace(/<[^<>]*>|&(?:amp|lt|gt);/g, '')).not.toMatch(/[<>&]/);
    }
  });
});

describe('the posting path', () => {
  let slack: FakeSlackApi;
  beforeEach(async () => {
    slack = await startFakeSlackApi();
  });
  afterEach(async () => {
    await slack.close();
  });

  const post = async (text: string) => {
    const replies = new WebApiSlackReplies(createSlackWebClient({ token: slack.token, apiUrl: slack.apiUrl, retries: 0 }));
    const poster = createSlackPoster({ replies, claims: new MemoryClaimStore(), reactions: false, log: createLogger('test') });
    const body = { team_id: 'T1', channel: 'C1', ts: '1700000000.000200', request_id: 'req-safe', kind: 'answer', text };
    await poster({ messageId: 'm-1', body: JSON.stringify(body), receiveCount: 1, attributes: {} });
    return slack.posts.map((posted) => posted.text);
  };

  it('posts a broadcast as plain text and a disguised link as its real target', async () => {
    // Act
    const posted = await post('<!channel> urgent: log in at <https://evil.example/login|https://bank.example/login> & <!subteam^S0123ABC|@admins>');
    // Assess
    expect(posted).toEqual(['@channel urgent: log in at <https://evil.example/login> &amp; @admins']);
  });

  it('asks Slack for no name linking, so plain @channel stays plain text', async () => {
    await post('@channel @here hello');
    const request = slack.requests.find((r) => r.method === 'chat.postMessage');
    expect(request?.body.text).toBe('@channel @here hello');
    expect(request?.body).not.toHaveProperty('link_names');
    expect(request?.body.parse ?? 'none').toBe('none');
  });
});
