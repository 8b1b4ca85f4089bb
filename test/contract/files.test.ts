import { MAX_ANSWER_FILES, MAX_INLINE_ANSWER_BYTES, MAX_INLINE_FILE_BYTES, SuccessResultSchema, readFiles } from '../../src/contract';

const csv = Buffer.from('a,b\n1,2\n').toString('base64');

describe('readFiles (docs/contract.md, "Files")', () => {
  it('takes inline and URL files, keeping only the known fields', () => {
    // Act
    const reading = readFiles([
      { name: 'report.csv', media_type: 'text/csv', data: csv, extra: 1 },
      { name: 'chart.png', media_type: 'image/png', url: 'https://files.example.com/chart.png' },
    ]);
    // Assess
    expect(reading).toEqual({
      files: [
        { name: 'report.csv', media_type: 'text/csv', data: csv },
        { name: 'chart.png', media_type: 'image/png', url: 'https://files.example.com/chart.png' },
      ],
      refused: [],
    });
  });

  it('is nothing when absent', () => {
    expect(readFiles(undefined)).toEqual({ files: [], refused: [] });
    expect(readFiles(null)).toEqual({ files: [], refused: [] });
  });

  it.each([
    ['no bytes nor url', { name: 'a.txt', media_type: 'text/plain' }, 'a.txt', /exactly one of data and url/],
    ['both bytes and url', { name: 'a.txt', media_type: 'text/plain', data: csv, url: 'https://x.example/a' }, 'a.txt', /exactly one of data and url/],
    ['bytes that are not base64', { name: 'a.txt', media_type: 'text/plain', data: 'not base64!' }, 'a.txt', /data must be base64/],
    ['a plain http url', { name: 'a.txt', media_type: 'text/plain', url: 'http://x.example/a' }, 'a.txt', /url must be an https URL/],
    ['a path for a name', { name: '../etc/passwd', media_type: 'text/plain', data: csv }, 'file 1', /must not hold a slash/],
    ['no media type', { name: 'a.txt', data: csv }, 'a.txt', /media_type is required/],
    ['a file too large to carry inline', { name: 'big.bin', media_type: 'application/octet-stream', data: Buffer.alloc(MAX_INLINE_FILE_BYTES + 1).toString('base64') }, 'big.bin', /at most 5242880 bytes/],
  ])('refuses a file with %s, by name and why, and keeps the others', (_what, bad, name, why) => {
    // Act
    const reading = readFiles([bad, { name: 'ok.csv', media_type: 'text/csv', data: csv }]);
    // Assess
    expect(reading.refused).toEqual([{ name, reason: expect.stringMatching(why) }]);
    expect(reading.files.map((file) => file.name)).toEqual(['ok.csv']);
  });

  it('refuses files past the count, keeping the first ones', () => {
    // Act
    const reading = readFiles(Array.from({ length: MAX_ANSWER_FILES + 2 }, (_, index) => ({ name: `f${index}.txt`, media_type: 'text/plain', data: csv })));
    // Assess
    expect(reading.files).toHaveLength(MAX_ANSWER_FILES);
    expect(reading.refused).toEqual([
      { name: `f${MAX_ANSWER_FILES}.txt`, reason: expect.stringContaining('at most 10 files') },
      { name: `f${MAX_ANSWER_FILES + 1}.txt`, reason: expect.stringContaining('at most 10 files') },
    ]);
  });

  it('refuses the file that takes the answer past its inline budget, and still takes a URL file after it', () => {
    // Prepare: two 4 MiB files make 8 MiB, past the 6 MiB an answer carries inline.
    const fourMiB = Buffer.alloc(4 * 1024 * 1024, 1).toString('base64');
    // Act
    const reading = readFiles([
      { name: 'one.bin', media_type: 'application/octet-stream', data: fourMiB },
      { name: 'two.bin', media_type: 'application/octet-stream', data: fourMiB },
      { name: 'three.bin', media_type: 'application/octet-stream', url: 'https://files.example.com/three.bin' },
    ]);
    // Assess
    expect(reading.files.map((file) => file.name)).toEqual(['one.bin', 'three.bin']);
    expect(reading.refused).toEqual([{ name: 'two.bin', reason: expect.stringContaining(`at most ${MAX_INLINE_ANSWER_BYTES} bytes`) }]);
  });

  it('refuses a files value that is not a list', () => {
    expect(readFiles({ name: 'a.txt' })).toEqual({ files: [], refused: [{ name: 'files', reason: 'files must be a list' }] });
  });

  it('never makes a success result break the contract: a malformed file is the reader\'s to refuse', () => {
    expect(SuccessResultSchema.safeParse({ status: 'success', response_text: 'hi', files: 'nonsense' }).success).toBe(true);
  });
});
