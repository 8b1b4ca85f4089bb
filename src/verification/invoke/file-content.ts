import type { AttachmentType } from '../../contract';

/**
 * Whether a file's bytes are what its type says (docs/contract.md, "Attachments"): a PDF that
 * claims to be a PNG, or Slack's HTML sign-in page served in place of a spreadsheet, is not sent
 * to the model. Signatures, not parsers: enough to refuse a mismatch, cheap on megabytes.
 */
export function contentMatches(type: AttachmentType, bytes: Buffer): boolean {
  switch (type.format) {
    case 'png':
      return startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case 'jpeg':
      return startsWith(bytes, [0xff, 0xd8, 0xff]);
    case 'gif':
      return ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a';
    case 'webp':
      return ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP';
    case 'pdf':
      // The header may follow a little leading junk (the format allows it within the first 1024 bytes).
      return bytes.subarray(0, 1024).includes('%PDF-');
    case 'doc':
    case 'xls':
      return startsWith(bytes, OLE2);
    case 'docx':
      return startsWith(bytes, ZIP) && bytes.includes('word/');
    case 'xlsx':
      return startsWith(bytes, ZIP) && bytes.includes('xl/');
    case 'html':
      return isText(bytes) && /<[a-z!]/i.test(bytes.subarray(0, 4096).toString('utf8'));
    case 'txt':
    case 'md':
    case 'csv':
      return isText(bytes) && !looksLikeHtmlPage(bytes);
    default:
      return false;
  }
}

const OLE2 = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const ZIP = [0x50, 0x4b, 0x03, 0x04];

function startsWith(bytes: Buffer, signature: readonly number[]): boolean {
  return bytes.length >= signature.length && signature.every((byte, index) => bytes[index] === byte);
}

function ascii(bytes: Buffer, start: number, end: number): string {
  return bytes.subarray(start, end).toString('latin1');
}

/**
 * Text, as a txt, md, csv or html file is: UTF-16 with its byte-order mark (Excel's "Unicode
 * text"), or bytes without NUL — UTF-8 and the 8-bit encodings (Windows-1252 CSV exports) alike.
 * A binary file (an image, a PDF's streams, an Office file) has NUL bytes near its start.
 */
function isText(bytes: Buffer): boolean {
  if (startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff])) return bytes.length % 2 === 0;
  return !bytes.includes(0);
}

function looksLikeHtmlPage(bytes: Buffer): boolean {
  return /^\s*(<!doctype html|<html)/i.test(bytes.subarray(0, 1024).toString('utf8').replace(/^\uFEFF/, ''));
}
