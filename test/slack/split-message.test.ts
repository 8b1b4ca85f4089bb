import fc from 'fast-check';
import { SLACK_CHUNK_LIMIT, splitForSlack } from '../../src/slack/split-message';

const visible = (text: string) => text.replace(/\s/g, '');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const FENCE_COUNT = (text: string) => text.split('```').length - 1;

/** `count` copies of `word` separated by single spaces: one long sentence with no end. */
const words = (count: number, word = 'word') => Array.from({ length: count }, () => word).join(' ');

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
