import { BuiltinGuardrail } from '../../src/guardrail/builtin-guardrail';
import type { GuardrailMode } from '../../src/guardrail/guardrail';
import { guardedFileNames } from '../../src/verification/post/guard-file-names';

/** The names of an answer's files through the output guardrail (src/verification/post/guard-file-names.ts), on its own. */
const file = (name: string) => ({ name, media_type: 'text/plain', data: '' });
const guard = (mode: GuardrailMode) => new BuiltinGuardrail({ input: 'mask', output: mode });

describe('file names through the output guardrail', () => {
  it('mask: one numbering for all the names, the extension kept', async () => {
    const named = await guardedFileNames(guard('mask'), [file('a@example.com.csv'), file('notes for b@example.org.txt'), file('plain.png')], [{ name: 'a@example.com.csv', reason: 'too large' }], {});
    expect(named.files.map((f) => f.name)).toEqual(['[EMAIL-1].csv', 'notes for [EMAIL-2].txt', 'plain.png']);
    // The same name is the same entity: the same number.
    expect(named.refused).toEqual([{ name: '[EMAIL-1].csv', reason: 'too large' }]);
  });

  it('block: a name with an entity becomes file-<n> with its extension; detect leaves names as they are', async () => {
    const blocked = await guardedFileNames(guard('block'), [file('AKIAABCDEFGHIJKLMNOP.txt'), file('ok.csv'), file('c@example.com.pdf')], [], {});
    expect(blocked.files.map((f) => f.name)).toEqual(['file-1.txt', 'ok.csv', 'file-2.pdf']);
    const detected = await guardedFileNames(guard('detect'), [file('c@example.com.pdf')], [], {});
    expect(detected.files[0]!.name).toBe('c@example.com.pdf');
  });
});
