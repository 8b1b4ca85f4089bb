/**
 * The file types a task may carry (docs/contract.md, "Attachments"): the types Bedrock Converse
 * takes as image and document blocks. Both zones read this table: the verification zone to decide
 * what to download and check, the execution zone to turn an attachment into a model input.
 */
export type AttachmentKind = 'image' | 'document';

export type AttachmentType = {
  kind: AttachmentKind;
  /** The Converse format name (`ImageFormat` / `DocumentFormat`). */
  format: string;
  /** File-name extensions (lower case, no dot) and Slack `filetype` values that mean this type. */
  aliases: readonly string[];
};

export const ATTACHMENT_TYPES: Readonly<Record<string, AttachmentType>> = {
  'image/png': { kind: 'image', format: 'png', aliases: ['png'] },
  'image/jpeg': { kind: 'image', format: 'jpeg', aliases: ['jpg', 'jpeg'] },
  'image/gif': { kind: 'image', format: 'gif', aliases: ['gif'] },
  'image/webp': { kind: 'image', format: 'webp', aliases: ['webp'] },
  'application/pdf': { kind: 'document', format: 'pdf', aliases: ['pdf'] },
  'text/plain': { kind: 'document', format: 'txt', aliases: ['txt', 'text'] },
  'text/markdown': { kind: 'document', format: 'md', aliases: ['md', 'markdown'] },
  'text/csv': { kind: 'document', format: 'csv', aliases: ['csv'] },
  'text/html': { kind: 'document', format: 'html', aliases: ['html', 'htm'] },
  'application/msword': { kind: 'document', format: 'doc', aliases: ['doc'] },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { kind: 'document', format: 'docx', aliases: ['docx'] },
  'application/vnd.ms-excel': { kind: 'document', format: 'xls', aliases: ['xls'] },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { kind: 'document', format: 'xlsx', aliases: ['xlsx'] },
};

/** The table entry for a mimetype (parameters such as `; charset=utf-8` ignored), if the type is supported. */
export function attachmentTypeOf(mimetype: string): AttachmentType | undefined {
  return ATTACHMENT_TYPES[mimetype.split(';')[0]!.trim().toLowerCase()];
}
