import { BuiltinGuardrail } from '../../src/guardrail/builtin-guardrail';
import { StreamMasker } from '../../src/guardrail/stream-masker';
import { guardrailCorpus, seededRandom } from '../support/guardrail-corpus';

const corpus = guardrailCorpus(37, 200);
const masking = new BuiltinGuardrail({ input: 'mask', output: 'mask' });

async function streamed(guardrail: BuiltinGuardrail, chunks: string[]): Promise<{ shown: string[]; blocked: boolean }> {
  const masker = new StreamMasker(guardrail);
  const shown: string[] = [];
  for (const chunk of chunks) shown.push((await masker.push(chunk)).text);
  shown.push((await masker.end()).text);
  return { shown, blocked: masker.isBlocked };
}

describe('StreamMasker with GUARDRAIL=builtin', () => {
  it('shows, piece by piece, exactly what masking the whole answer shows: no entity is ever visible, not even in part', async () => {
    const random = seededRandom(7);
    for (const message of [...corpus, ...corpus, ...corpus]) {
      const chunks: string[] = [];
      for (let at = 0; at < message.text.length; ) {
        const size = 1 + Math.floor(random() * 12);
        chunks.push(message.text.slice(at, at + size));
        at += size;
      }
      const { shown } = await streamed(masking, chunks);
      // Appends only: what was visible at any moment is a start of this, which holds no entity.
      expect(shown.join('')).toBe((await masking.check(message.text, 'output')).text);
    }
  });

  it('cut at every point of a message, two pieces still show what the whole does', async () => {
    for (const message of corpus.filter((_, index) => index % 20 === 0)) {
      const whole = (await masking.check(message.text, 'output')).text;
      for (let cut = 1; cut < message.text.length; cut++) {
        const { shown } = await streamed(masking, [message.text.slice(0, cut), message.text.slice(cut)]);
        expect(shown.join('')).toBe(whole);
      }
    }
  });

  it('answers of several messages glued together, streamed a word at a time, show what the whole does', async () => {
    const random = seededRandom(8);
    for (let answer = 0; answer < 300; answer++) {
      const words: string[] = [];
      while (words.length < 60) words.push(...corpus[Math.floor(random() * corpus.length)]!.text.split(/(?<=\s)/));
      const { shown } = await streamed(masking, words);
      expect(shown.join('')).toBe((await masking.check(words.join(''), 'output')).text);
    }
  });

  it('releases plain words as they come, holding back only the word that may still grow', async () => {
    const masker = new StreamMasker(masking);
    expect((await masker.push('The build is green, ')).text).toBe('The build is green, ');
    expect((await masker.push('mail taro@exa')).text).toBe('mail ');
    expect((await masker.push('mple.com now')).text).toBe('[EMAIL-1] ');
    expect((await masker.end()).text).toBe('now');
  });

  it('holds a phone number written in groups until its last group, and a private key until its footer', async () => {
    const masker = new StreamMasker(masking);
    expect((await masker.push('call +1 415 ')).text).toBe('call ');
    expect((await masker.push('555 0100 today')).text).toBe('[PHONE-1] ');
    expect((await masker.push('\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow')).text).toBe('today\n');
    expect((await masker.push('IBAAKCAQEA\n-----END RSA PRIVATE KEY----- ok')).text).toBe('[PRIVATE_KEY-1] ');
  });

  it('numbers placeholders across the whole answer: the same address keeps its number in a later piece', async () => {
    const { shown } = await streamed(masking, ['Write to a@example.com or ', 'b@example.com; again: a@exa', 'mple.com.']);
    expect(shown.join('')).toBe('Write to [EMAIL-1] or [EMAIL-2]; again: [EMAIL-1].');
  });

  it('in block mode stops at the piece with an entity: nothing of it or after it is shown', async () => {
    const blocking = new BuiltinGuardrail({ input: 'block', output: 'block' });
    const { shown, blocked } = await streamed(blocking, ['Here it is: ', 'AKIAABCDEFGHIJKLMNOP', ' and more text', ' later.']);
    expect(blocked).toBe(true);
    expect(shown.join('')).toBe('Here it is: ');
  });

  it('in detect mode shows the answer unchanged', async () => {
    const detecting = new BuiltinGuardrail({ input: 'detect', output: 'detect' });
    const text = 'reach me at 090-1234-5678 or a@example.com';
    const { shown } = await streamed(detecting, [text.slice(0, 17), text.slice(17)]);
    expect(shown.join('')).toBe(text);
  });
});
