import { readFiles, type FilesReading } from '../contract';

/**
 * Files an A2A agent returns, as the contract's files (docs/contract.md, "Files"). A2A carries a
 * file as a part of a message or an artifact:
 * - 0.3 `FilePart`: `{kind: "file", file: {name, mimeType, bytes}}` or `{… uri}` (bytes in base64);
 * - 1.0 `Part`: `{raw, filename, mediaType}` or `{url, filename, mediaType}` (raw in base64;
 *   protojson also accepts the proto's own `media_type`).
 * Each becomes `{name, media_type, data}` or `{name, media_type, url}`, and `readFiles` checks
 * them as it checks an execute_task agent's: a part that breaks the rules is refused with its reason.
 * A part without a name is named by its place (`file 2`), without a type `application/octet-stream`.
 */

/** The file parts of a list of parts, in the contract's shape (not yet checked). */
export function fileEntriesOf(parts: unknown): Record<string, unknown>[] {
  if (!Array.isArray(parts)) return [];
  const entries: Record<string, unknown>[] = [];
  for (const part of parts) {
    const entry = fileEntryOf(part, entries.length + 1);
    if (entry) entries.push(entry);
  }
  return entries;
}

/** The reading of these entries; nothing when there are none (most answers carry no files). */
export function filesField(entries: readonly Record<string, unknown>[]): { files?: FilesReading } {
  return entries.length === 0 ? {} : { files: readFiles(entries) };
}

function fileEntryOf(part: unknown, place: number): Record<string, unknown> | undefined {
  if (!isRecord(part)) return undefined;
  // 0.3: the file sits in `file`, the part says `kind: "file"` (hand-written agents may drop the kind).
  if (isRecord(part.file) && (part.kind ?? 'file') === 'file') {
    const file = part.file;
    const source = file.bytes !== undefined ? { data: file.bytes } : file.uri !== undefined ? { url: file.uri } : {};
    return { name: nameOr(file.name, place), media_type: typeOr(file.mimeType ?? file.mediaType), ...source };
  }
  // 1.0: one `Part` whose content is `raw` or `url`.
  if (part.raw !== undefined || part.url !== undefined) {
    const source = part.raw !== undefined ? { data: part.raw } : { url: part.url };
    return { name: nameOr(part.filename, place), media_type: typeOr(part.mediaType ?? part.media_type), ...source };
  }
  return undefined;
}

function nameOr(name: unknown, place: number): unknown {
  return name === undefined || name === '' ? `file ${place}` : name;
}

function typeOr(type: unknown): unknown {
  return type === undefined || type === '' ? 'application/octet-stream' : type;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
