import fc from 'fast-check';
import { SPLITTER_SHAPES } from '../../bench/reply-splitter';
import { SLACK_CHUNK_LIMIT, splitForSlack } from '../../src/slack/split-message';

const visible = (text: string) => text.replace(/\s/g, '');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const FENCE_COUNT = (text: string) => text.split('```').length - 1;

/** `count` copies of `word` separated by single spaces: one long sentence with no end. */
const words = (count: number, word = 'word') => Array.from({ length: count }, () => word).join(' ');

/** The chunks are the text, in order, less only whitespace dropped between them. */
function expectChunksOf(text: string, chunks: readonly string[]): void {
  let at = 0;
  for (const chunk of chunks) {
    while (at < text.length && /\s/.test(text[at]!)) at += 1;
    expect(text.startsWith(chunk, at)).toBe(true);
    at += chunk.length;
  }
  expect(text.slice(at).trim()).toBe('');
}

/** Slack control sequences and escapes left whole: nothing of `<`, `>` or `&` remains once they are taken out. */
const SEQUENCES = /<[^<>\n]*>|&(?:amp|lt|gt);/g;
const brokenSequence = (chunk: string) => /[<>&]/.test(chunk.replace(SEQUENCES, ''));
const REGIONAL_INDICATOR = /\uD83C[\uDDE6-\uDDFF]/g;

describe('splitForSlack', () => {
  it('returns short text as one chunk, and nothing for blank text', () => {
    // Prepare / Act / Assess
    expect(splitForSlack('Hello there.')).toEqual(['Hello there.']);
    expect(splitForSlack('  \n\n \t')).toEqual([]);
    expect(splitForSlack('')).toEqual([]);
  });

  it('defaults to a limit under Slack’s 4,000-character guidance', () => {
    expect(SLACK_CHUNK_LIMIT).toBeLessThan(4000);
    const chunks = splitForSlack(words(2000)); // 9,999 units
    expect(chunks.length).toBe(3);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(SLACK_CHUNK_LIMIT);
  });

  it('breaks between paragraphs, keeping each paragraph whole', () => {
    const paragraphs = [`First. ${words(10, 'aaaa')}.`, `Second. ${words(10, 'bbbb')}.`, `Third. ${words(10, 'cccc')}.`];
    const chunks = splitForSlack(paragraphs.join('\n\n'), 120);
    // Two paragraphs (2 × 57 + 2) would fit in 120; three would not.
    expect(chunks).toEqual([`${paragraphs[0]}\n\n${paragraphs[1]}`, paragraphs[2]]);
  });

  it('does not pull the first sentence of the next paragraph into a chunk', () => {
    const first = `${words(16, 'aaaa')}.`; // 80 units
    const second = `Next. ${words(12, 'bbbb')}.`; // 66 units: "Next." alone would still fit after the first
    expect(splitForSlack(`${first}\n\n${second}`, 120)).toEqual([first, second]);
  });

  it('breaks a long paragraph after a sentence, not inside one', () => {
    const sentences = ['This is the first sentence here.', 'Is this the second one?', 'Yes, and it ends with some emphasis!', 'The end.'];
    const chunks = splitForSlack(`${sentences.join(' ')} ${words(12, 'tail')}`, 70);
    for (const chunk of chunks.slice(0, -1)) expect(chunk).toMatch(/[.!?]$/);
    expect(chunks[0]).toBe(`${sentences[0]} ${sentences[1]}`);
  });

  it('breaks Japanese text after 。 with no space after it', () => {
    const sentence = 'これは日本語の文章で、句点のあとに空白はありません。'; // 26 units
    const chunks = splitForSlack(sentence.repeat(6), 64);
    expect(chunks.length).toBe(3);
    for (const chunk of chunks) {
      expect(chunk.endsWith('。')).toBe(true);
      expect(chunk.startsWith('これは')).toBe(true);
    }
  });

  it('breaks Chinese text after ！ and ？, keeping closing brackets and runs like ？！ together', () => {
    const text = `${'你好吗？'.repeat(6)}「真的吗？！」${'太好了！'.repeat(20)}`;
    const chunks = splitForSlack(text, 64);
    expect(chunks.join('')).toBe(text);
    for (const chunk of chunks.slice(0, -1)) expect(chunk).toMatch(/[！？」]$/);
    expect(chunks.some((chunk) => chunk.includes('「真的吗？！」'))).toBe(true);
  });

  it('breaks after a full-width period ．', () => {
    const chunks = splitForSlack('全角の句点で終わる文です．'.repeat(8), 64);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.endsWith('．')).toBe(true);
  });

  it('leaves decimals and domain names alone when looking for sentence ends', () => {
    const text = `Version 3.14 of example.com shipped ${words(20, 'x')}`;
    const chunks = splitForSlack(text, 64);
    expect(chunks[0]).toContain('3.14 of example.com');
  });

  it('falls back to word boundaries when a sentence is too long', () => {
    const chunks = splitForSlack(words(100, 'lorem'), 64);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(64);
      expect(chunk.split(' ').every((word) => word === 'lorem')).toBe(true);
    }
    expect(visible(chunks.join(''))).toBe('lorem'.repeat(100));
  });

  it('cuts a word longer than the limit, and never through a surrogate pair', () => {
    const url = `https://example.com/${'a'.repeat(150)}`;
    const emoji = '😀'.repeat(100); // 200 units, no boundary but graphemes
    // One grapheme of 151 units (a ZWJ chain): only a code-unit cut is left, and 64 falls mid-pair.
    const zwjChain = `${'😀\u200d'.repeat(50)}😀`;
    for (const text of [url, emoji, `x${emoji}`, zwjChain]) {
      const chunks = splitForSlack(text, 64);
      expect(chunks.join('')).toBe(text);
      for (const chunk of chunks) {
        expect(chunk.length).toBeLessThanOrEqual(64);
        expect(chunk).not.toMatch(LONE_SURROGATE);
      }
    }
  });

  it('keeps a code block whole, even when a break inside it would fill the chunk better', () => {
    const code = '```\nconst a = 1;\n\nconst b = 2. Still code.\nconsole.log(a + b);\n```';
    const text = `${words(8, 'intro')}\n${code}\nAfter the code.`;
    const chunks = splitForSlack(text, 80);
    expect(chunks).toContain(code);
    expect(visible(chunks.join(''))).toBe(visible(text));
  });

  it('splits an oversized code block by lines, closing and re-opening the fence in every chunk', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${String(i).padStart(2, '0')} = compute(${i});`);
    const text = `Here:\n\`\`\`python\n${lines.join('\n')}\n\`\`\`\nDone.`;
    const chunks = splitForSlack(text, 200);
    const codeChunks = chunks.filter((chunk) => chunk.includes('```'));
    expect(codeChunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(200);
      expect(FENCE_COUNT(chunk) % 2).toBe(0);
    }
    // The language tag stays on the first fence only; every line survives, whole and in order.
    expect(chunks.join('\n').match(/python/g)).toHaveLength(1);
    const codeLines = chunks.join('\n').split('\n').filter((line) => line.startsWith('line '));
    expect(codeLines).toEqual(lines);
  });

  it('cuts a code line longer than a whole chunk and still fences every piece', () => {
    const text = `\`\`\`\n${'x'.repeat(300)}\n\`\`\``;
    const chunks = splitForSlack(text, 100);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(100);
      expect(chunk.startsWith('```')).toBe(true);
      expect(chunk.endsWith('```')).toBe(true);
    }
    expect(chunks.join('').replace(/```|\s/g, '')).toBe('x'.repeat(300));
  });

  it('refuses a limit too small to hold a fenced piece', () => {
    expect(() => splitForSlack('text', 10)).toThrow(RangeError);
  });

  it('never breaks inside a link, a mention or an escape, even where its label has spaces and sentence ends', () => {
    const link = '<https://example.com/docs|the docs. Read them>';
    const text = `${words(5, 'see')} ${link} &amp; <@U0123ABC> ${words(4, 'and')} ${link}. `.repeat(30);
    const chunks = splitForSlack(text, 80);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(80);
      expect(brokenSequence(chunk)).toBe(false);
    }
    expect(chunks.filter((chunk) => chunk.includes(link)).length).toBeGreaterThan(20);
    expectChunksOf(text, chunks);
  });

  it('cuts text without whitespace between escapes and links, not through them', () => {
    for (const text of ['&amp;'.repeat(200), 'a&lt;b'.repeat(150), '<https://example.com/a>'.repeat(40), `x${'<@U0123ABC>'.repeat(60)}`]) {
      const chunks = splitForSlack(text, 64);
      expect(chunks.join('')).toBe(text);
      for (const chunk of chunks) {
        expect(chunk.length).toBeLessThanOrEqual(64);
        expect(brokenSequence(chunk)).toBe(false);
      }
    }
  });

  it('cuts a link longer than a whole chunk rather than fail', () => {
    const text = `<https://example.com/${'a'.repeat(300)}|${words(40, 'label')}>`;
    const chunks = splitForSlack(text, 100);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(100);
    expect(visible(chunks.join(''))).toBe(visible(text));
  });

  it('never splits a flag (two regional indicators), however the flags line up with the limit', () => {
    for (const prefix of ['', 'x', 'xy', '🇯']) {
      for (const limit of [64, 65, 66, 67]) {
        const text = `${prefix}${'🇯🇵🇺🇸'.repeat(200)}`;
        const chunks = splitForSlack(text, limit);
        expect(chunks.join('')).toBe(text);
        // Regional indicators pair up from the first: every cut has an even number of them before it.
        let before = 0;
        for (const chunk of chunks.slice(0, -1)) {
          before += chunk.match(REGIONAL_INDICATOR)?.length ?? 0;
          expect(before % 2).toBe(0);
        }
      }
    }
  });

  it('splits a very long text of tiny sentences without running out of stack', () => {
    const text = 'a. '.repeat(200_000);
    const chunks = splitForSlack(text);
    expect(chunks.length).toBe(Math.ceil(text.trim().length / (SLACK_CHUNK_LIMIT + 1)));
    expectChunksOf(text, chunks);
  });
});

describe('splitForSlack on pathological shapes (bench part 6 times the same shapes)', () => {
  // Big enough to need many cuts at either limit; the bench runs them at 100,000 characters.
  const CHARS = 30_000;

  describe.each(SPLITTER_SHAPES.map((shape) => [shape.name, shape] as const))('%s', (_name, shape) => {
    it.each([64, SLACK_CHUNK_LIMIT])('splits correctly at a limit of %i', (limit) => {
      const text = shape.build(CHARS);
      const chunks = splitForSlack(text, limit);
      // Where every <, > and & of the text belongs to a sequence, each chunk must hold whole ones.
      const onlySequences = !brokenSequence(text);
      // One assertion over all chunks (hundreds at 64), naming the chunks that break a rule.
      const faults = chunks.flatMap((chunk, index) => [
        ...(chunk.length > limit ? [`${index}: ${chunk.length} units`] : []),
        ...(chunk.trim() === '' ? [`${index}: blank`] : []),
        ...(LONE_SURROGATE.test(chunk) ? [`${index}: half a surrogate pair`] : []),
        ...(onlySequences && brokenSequence(chunk) ? [`${index}: a cut link or escape`] : []),
        ...(FENCE_COUNT(chunk) % 2 === 1 && text.includes('```\n') ? [`${index}: an unclosed fence`] : []),
      ]);
      expect(faults).toEqual([]);
      if (text.includes('```\n')) {
        // A code line longer than a chunk is re-fenced: the fences are the only addition.
        expect(chunks.join('').replace(/```|\s/g, '')).toBe(text.replace(/```|\s/g, ''));
      } else {
        expectChunksOf(text, chunks);
      }
    });
  });
});

describe('splitForSlack properties', () => {
  // Pieces chosen to hit every boundary kind: paragraphs, lines, Latin and CJK sentence ends,
  // long words, astral characters and combining marks.
  const prose = fc
    .array(
      fc.oneof(
        fc.constantFrom(' ', '  ', '\n', '\n\n', '\n \n', '\t', '\u3000'),
        fc.constantFrom('.', '!', '?', '。', '！', '？', '．', '」', ')', '"'),
        fc.constantFrom('word', 'Slack', 'é', 'e\u0301', '日本語', '中文', '😀', '👩‍💻', '𠀋'),
        fc.string({ unit: 'grapheme', maxLength: 12 }),
        fc.constantFrom('a'.repeat(90), 'あ'.repeat(70), '😀'.repeat(40)),
      ),
      { maxLength: 400 },
    )
    .map((parts) => parts.join(''))
    .filter((text) => !text.includes('```'));

  it('never exceeds the limit, never returns blank chunks, never cuts a surrogate pair, and loses no visible character', () => {
    fc.assert(
      fc.property(prose, fc.integer({ min: 64, max: 400 }), (text, limit) => {
        const chunks = splitForSlack(text, limit);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(chunk.trim()).not.toBe('');
          expect(chunk).not.toMatch(LONE_SURROGATE);
        }
        expect(visible(chunks.join(''))).toBe(visible(text));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every link, mention and escape that fits in a chunk whole', () => {
    const withSequences = fc
      .array(
        fc.oneof(
          prose,
          fc.constantFrom('<https://example.com/a?b=1&amp;c=2|a label. With a sentence! And more>', '<@U0123ABC>', '<#C0123ABC|general>', '&amp;', '&lt;', '&gt;', '<mailto:a@example.com>', `<https://example.com/${'long'.repeat(30)}|${'words '.repeat(20)}>`),
        ),
        { maxLength: 30 },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(withSequences, fc.integer({ min: 64, max: 400 }), (text, limit) => {
        const chunks = splitForSlack(text, limit);
        const whole = (text.match(/<[^<>\n]*>/g) ?? []).filter((sequence) => sequence.length <= limit);
        for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(limit);
        // Every sequence that fits arrives in one chunk, as many times as it was written.
        for (const sequence of new Set(whole)) {
          const count = (haystack: string) => haystack.split(sequence).length - 1;
          expect(chunks.reduce((sum, chunk) => sum + count(chunk), 0)).toBe(count(text));
        }
        expect(visible(chunks.join(''))).toBe(visible(text));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps every code block that fits whole, and fences every piece of one that does not', () => {
    const codeBody = fc.array(fc.constantFrom('let x = 1;', 'if (x) {', '}', '', '  return x.y();', 'z'.repeat(70)), { maxLength: 40 }).map((lines) => lines.join('\n'));
    const document = fc.array(fc.oneof(prose, codeBody.map((body) => `\`\`\`\n${body}\n\`\`\``)), { minLength: 1, maxLength: 6 }).map((parts) => parts.join('\n'));
    fc.assert(
      fc.property(document, fc.integer({ min: 64, max: 400 }), (text, limit) => {
        const chunks = splitForSlack(text, limit);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(FENCE_COUNT(chunk) % 2).toBe(0);
        }
        for (const block of text.match(/```[\s\S]*?```/g) ?? []) {
          if (block.length <= limit) expect(chunks.some((chunk) => chunk.includes(block))).toBe(true);
        }
        // Re-opened fences are the only addition.
        expect(chunks.join('').replace(/```|\s/g, '')).toBe(text.replace(/```|\s/g, ''));
      }),
      { numRuns: 200 },
    );
  });
});
