import { crc32, deflateSync } from 'node:zlib';
import { ATTACHMENT_TYPES, type AgentFile } from '../../contract';

/**
 * The files the echo executor makes for `#file=<name>` and `#file=<name>:<bytes>` (docs/contract.md,
 * "Files"), so the local stack, the playground and the tests see an agent's files without a model:
 * `.csv` a few rows, `.png` a small valid image (a 16×16 gradient), anything else text. With a byte
 * count the file has exactly that many bytes: text repeats its rows and is cut there, an image
 * gets a private ancillary chunk that viewers skip (or stays as it is when the count is smaller
 * than the image). The bytes depend only on the name and the count, so a test can make them again.
 */

/** The most an echo file may ask for: enough for any limit a test tries, not enough to exhaust memory. */
export const ECHO_FILE_MAX_BYTES = 64 * 1024 * 1024;

const FILE_DIRECTIVE = /#file=([^\s:#]+)(?::(\d+))?/g;

/** The files a task's text asks for, in order. */
export function echoFilesOf(text: string): AgentFile[] {
  return [...text.matchAll(FILE_DIRECTIVE)].map(([, name, bytes]) => {
    const size = bytes === undefined ? undefined : Math.min(Number(bytes), ECHO_FILE_MAX_BYTES);
    const mediaType = mediaTypeOf(name!);
    return { name: name!, media_type: mediaType, data: echoFileBytes(name!, size).toString('base64') };
  });
}

/** The bytes of the echo file of this name (and size). */
export function echoFileBytes(name: string, size?: number): Buffer {
  const extension = extensionOf(name);
  if (extension === 'png') return padPng(gradientPng(), size);
  const text = extension === 'csv' ? csvRows() : `This is ${name}, a file the echo agent made.\n`;
  return size === undefined ? Buffer.from(text) : repeatedTo(Buffer.from(text), size);
}

/** The media type of a file name's extension, from the contract's table; unknown ones are bytes. */
export function mediaTypeOf(name: string): string {
  const extension = extensionOf(name);
  const entry = Object.entries(ATTACHMENT_TYPES).find(([, type]) => type.aliases.includes(extension));
  return entry?.[0] ?? 'application/octet-stream';
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
}

function csvRows(): string {
  return 'city,visits,share\nParis,3,0.25\nLima,5,0.42\nOslo,4,0.33\n';
}

function repeatedTo(unit: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let offset = 0; offset < size; offset += unit.length) unit.copy(out, offset, 0, Math.min(unit.length, size - offset));
  return out;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHUNK_OVERHEAD = 12;

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A 16×16 RGB gradient: small, valid, and visibly an image in a preview. */
function gradientPng(): Buffer {
  const side = 16;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, deflate, no filter, no interlace
  const rows = Buffer.alloc(side * (1 + side * 3));
  for (let y = 0; y < side; y++) {
    const row = y * (1 + side * 3);
    for (let x = 0; x < side; x++) rows.set([x * 16, y * 16, 160], row + 1 + x * 3);
  }
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** The image padded to `size` bytes with a private chunk (`pdNg`) placed before IEND. */
function padPng(png: Buffer, size?: number): Buffer {
  if (size === undefined || size < png.length + CHUNK_OVERHEAD) return png;
  const end = png.length - CHUNK_OVERHEAD;
  return Buffer.concat([png.subarray(0, end), chunk('pdNg', Buffer.alloc(size - png.length - CHUNK_OVERHEAD, 0x2e)), png.subarray(end)]);
}
