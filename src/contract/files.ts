import { z } from 'zod';

/**
 * Files an agent made (docs/contract.md, "Files"): optional on a final `success` result — of
 * execute_task, of get_task_result, and as the last event of a streamed answer. The verification
 * zone uploads each one to the Slack thread after the answer's text.
 *
 * Each file carries either its bytes (`data`, base64) or an https `url` the verification zone
 * fetches from an allow-listed host (FILE_URL_ALLOWLIST). Like `usage`, `files` is read apart from
 * the answer: a file that breaks these rules is refused on its own, with a reason the thread shows,
 * and never costs the answer or the other files.
 */

/**
 * At most this many bytes in one file sent inline. Slack takes far larger files; the bound is the
 * answer's journey: the whole result travels as one AgentCore streaming chunk (10 MB) and as one
 * JSON value the verification function holds while it uploads, and base64 makes 5 MiB into about
 * 7 MB. Larger files go by `url`.
 */
export const MAX_INLINE_FILE_BYTES = 5 * 1024 * 1024;

/**
 * At most this many inline bytes in one answer, all files together: 6 MiB is 8 MiB of base64,
 * which leaves 2 MB of the 10 MB AgentCore chunk for the text and the envelope. An agent behind a
 * buffered Lambda function URL (6 MB answer) must stream its answer (RESPONSE_STREAM) or send URLs.
 */
export const MAX_INLINE_ANSWER_BYTES = 6 * 1024 * 1024;

/** At most this many files in one answer: each is three Slack calls, and a thread of more reads poorly. */
export const MAX_ANSWER_FILES = 10;

/** Longest file name: Slack shows about this much, and a longer one is an agent's mistake. */
export const MAX_FILE_NAME_LENGTH = 255;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The byte length a padded base64 string decodes to. */
function decodedLength(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}

const fileName = z
  .string({ error: 'name is required and must be a string' })
  .min(1, 'name must not be empty')
  .max(MAX_FILE_NAME_LENGTH, `name must be at most ${MAX_FILE_NAME_LENGTH} characters`)
  // A path would name a folder Slack does not have; a control character breaks the line that names it.
  .refine((name) => !/[/\\\u0000-\u001f\u007f]/.test(name), 'name must not hold a slash or a control character');

const mediaType = z
  .string({ error: 'media_type is required and must be a string' })
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'media_type must be a type/subtype such as text/csv');

export const AgentFileSchema = z
  .object({
    name: fileName,
    media_type: mediaType,
    /** The file's bytes, base64 (standard alphabet, padded). */
    data: z
      .string({ error: 'data must be a base64 string' })
      .refine((data) => data.length % 4 === 0 && BASE64.test(data), 'data must be base64 (standard alphabet, padded)')
      .refine((data) => data.length % 4 !== 0 || decodedLength(data) <= MAX_INLINE_FILE_BYTES, `data must be at most ${MAX_INLINE_FILE_BYTES} bytes (send a larger file by url)`)
      .optional(),
    /** Where to fetch the file: https, on a host the operator allows (FILE_URL_ALLOWLIST). */
    url: z
      .string({ error: 'url must be a string' })
      .refine((url) => URL.canParse(url) && new URL(url).protocol === 'https:', 'url must be an https URL')
      .optional(),
  })
  .loose()
  .refine((file) => (file.data === undefined) !== (file.url === undefined), { message: 'a file must carry exactly one of data and url' });

/** One file an agent made, as both zones hold it: the known fields only. */
export type AgentFile = { name: string; media_type: string } & ({ data: string; url?: undefined } | { url: string; data?: undefined });

/** A file left out of the thread, and why — the verification zone says so in one line. */
export type RefusedFile = { name: string; reason: string };

/** What the reader of a result made of its `files`. */
export type FilesReading = { files: AgentFile[]; refused: RefusedFile[] };

export const NO_FILES: FilesReading = Object.freeze({ files: [], refused: [] }) as FilesReading;

/** The byte length of a file's inline data (0 for a URL file). */
export function inlineBytesOf(file: AgentFile): number {
  return file.data === undefined ? 0 : decodedLength(file.data);
}

/**
 * Reads a result's `files` value (undefined: none sent). Each file is checked alone; files past
 * MAX_ANSWER_FILES or past MAX_INLINE_ANSWER_BYTES (in order) are refused, the earlier ones kept.
 */
export function readFiles(value: unknown): FilesReading {
  if (value === undefined || value === null) return NO_FILES;
  if (!Array.isArray(value)) return { files: [], refused: [{ name: 'files', reason: 'files must be a list' }] };
  const reading: FilesReading = { files: [], refused: [] };
  let inlineBytes = 0;
  value.forEach((entry: unknown, index) => {
    const name = nameOf(entry, index);
    const parsed = AgentFileSchema.safeParse(entry);
    if (!parsed.success) {
      reading.refused.push({ name, reason: parsed.error.issues.map((issue) => issue.message).join('; ') });
      return;
    }
    const file = fileOf(parsed.data);
    if (reading.files.length >= MAX_ANSWER_FILES) {
      reading.refused.push({ name, reason: `an answer carries at most ${MAX_ANSWER_FILES} files` });
      return;
    }
    if (inlineBytes + inlineBytesOf(file) > MAX_INLINE_ANSWER_BYTES) {
      reading.refused.push({ name, reason: `an answer carries at most ${MAX_INLINE_ANSWER_BYTES} bytes of files inline (send larger ones by url)` });
      return;
    }
    inlineBytes += inlineBytesOf(file);
    reading.files.push(file);
  });
  return reading;
}

/** The name to refuse a file by: its own when it has a usable one, else its place in the list. */
function nameOf(entry: unknown, index: number): string {
  const name = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>).name : undefined;
  return typeof name === 'string' && fileName.safeParse(name).success ? name : `file ${index + 1}`;
}

function fileOf(fields: z.infer<typeof AgentFileSchema>): AgentFile {
  return fields.data !== undefined ? { name: fields.name, media_type: fields.media_type, data: fields.data } : { name: fields.name, media_type: fields.media_type, url: fields.url! };
}
