import { ATTACHMENT_TYPES, type AttachmentType } from '../../src/contract';
import { contentMatches } from '../../src/verification/invoke/file-content';

const type = (mimetype: string): AttachmentType => {
  const found = ATTACHMENT_TYPES[mimetype];
  if (!found) throw new Error(`no attachment type ${mimetype}`);
  return found;
};
const PNG = type('image/png');
const JPEG = type('image/jpeg');
const GIF = type('image/gif');
const WEBP = type('image/webp');
const PDF = type('application/pdf');
const TXT = type('text/plain');
const MD = type('text/markdown');
const CSV = type('text/csv');
const HTML = type('text/html');
const DOC = type('application/msword');
const XLS = type('application/vnd.ms-excel');
const DOCX = type('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
const XLSX = type('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');

const bytes = (...parts: Array<string | number[] | Buffer>) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));

// Real file signatures, followed by a little of what such a file holds.
const png = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0, 0, 0, 13], 'IHDR', [0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
const jpeg = bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10], 'JFIF', [0]);
const gif87 = bytes('GIF87a', [1, 0, 1, 0, 0x80, 0, 0]);
const gif89 = bytes('GIF89a', [1, 0, 1, 0, 0x80, 0, 0]);
const webp = bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 ', [0x18, 0, 0, 0]);
const pdf = bytes('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n');
const ole2 = bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], Buffer.alloc(32));
/** A ZIP local file header (stored, no data) for one entry: how every Office Open XML file starts. */
const zipEntry = (name: string) => {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(Buffer.byteLength(name), 26);
  return Buffer.concat([header, Buffer.from(name, 'latin1')]);
};
const docx = bytes(zipEntry('[Content_Types].xml'), zipEntry('word/document.xml'));
const xlsx = bytes(zipEntry('[Content_Types].xml'), zipEntry('xl/workbook.xml'));
const plainZip = bytes(zipEntry('readme.txt'));
const htmlPage = Buffer.from('<!DOCTYPE html>\n<html lang="en"><head><title>Slack</title></head><body>Sign in</body></html>');

describe('contentMatches accepts real signatures', () => {
  it.each<[string, AttachmentType, Buffer]>([
    ['PNG', PNG, png],
    ['JPEG', JPEG, jpeg],
    ['GIF87a', GIF, gif87],
    ['GIF89a', GIF, gif89],
    ['WebP', WEBP, webp],
    ['PDF', PDF, pdf],
    ['PDF after a little leading junk', PDF, bytes(Buffer.alloc(100, 0x20), pdf)],
    ['DOC (OLE2)', DOC, ole2],
    ['XLS (OLE2)', XLS, ole2],
    ['DOCX (a zip with word/)', DOCX, docx],
    ['XLSX (a zip with xl/)', XLSX, xlsx],
    ['HTML declared as HTML', HTML, htmlPage],
    ['an HTML fragment', HTML, Buffer.from('<p>hello</p>')],
    ['plain text', TXT, Buffer.from('hello, world\n')],
    ['UTF-8 text with accents and a BOM', TXT, Buffer.from('\uFEFFcafé, naïve, 日本語\n')],
    ['Markdown', MD, Buffer.from('# Title\n\n- item with <b>inline</b> html\n')],
    ['CSV', CSV, Buffer.from('name,size\n"a,b",3\n')],
    ['an empty text file', TXT, Buffer.alloc(0)],
    ['a Windows-1252 CSV (an Excel export)', CSV, Buffer.from('name;price\ncaf\xe9;3\x80\n', 'latin1')],
    ['UTF-16 text with its BOM (Excel "Unicode text")', TXT, Buffer.from('\uFEFFname\tsize\n', 'utf16le')],
  ])('%s', (_label, declared, content) => {
    expect(contentMatches(declared, content)).toBe(true);
  });
});

describe('contentMatches refuses what is not what its type says', () => {
  it.each<[string, AttachmentType, Buffer]>([
    ['a PDF declared as PNG', PNG, pdf],
    ['a PNG declared as PDF', PDF, png],
    ['a PNG declared as JPEG', JPEG, png],
    ['a truncated PNG signature', PNG, png.subarray(0, 4)],
    ['an empty PNG', PNG, Buffer.alloc(0)],
    ['GIF88a', GIF, bytes('GIF88a', [0])],
    ['a RIFF that is not WebP (WAV)', WEBP, bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt ')],
    ['a PDF header past the first 1024 bytes', PDF, bytes(Buffer.alloc(1100, 0x20), pdf)],
    ['an HTML page declared as txt', TXT, htmlPage],
    ['an HTML page declared as csv', CSV, htmlPage],
    ['an HTML page declared as md', MD, htmlPage],
    ['an HTML page after whitespace and a BOM, declared as txt', TXT, Buffer.from('\uFEFF\n  <html><body>Sign in</body></html>')],
    ['binary with a NUL byte declared as txt', TXT, bytes('abc', [0], 'def')],
    ['a PNG declared as csv', CSV, png],
    ['UTF-16 without an even length declared as txt', TXT, bytes('', [0xff, 0xfe, 0x41, 0x00, 0x42])],
    ['plain text declared as HTML', HTML, Buffer.from('just words, no tags')],
    ['a docx declared as xlsx', XLSX, docx],
    ['an xlsx declared as docx', DOCX, xlsx],
    ['a zip without word/ declared as docx', DOCX, plainZip],
    ['a zip without xl/ declared as xlsx', XLSX, plainZip],
    ['"word/" without a zip signature declared as docx', DOCX, Buffer.from('word/document.xml')],
    ['a docx declared as doc', DOC, docx],
    ['a zip declared as xls', XLS, xlsx],
  ])('%s', (_label, declared, content) => {
    expect(contentMatches(declared, content)).toBe(false);
  });

  it('refuses a format it does not know', () => {
    expect(contentMatches({ kind: 'document', format: 'rtf', aliases: ['rtf'] }, Buffer.from('{\\rtf1 hello}'))).toBe(false);
  });
});
