import type { ContentBlock, DocumentFormat, ImageFormat, Message } from '@aws-sdk/client-bedrock-runtime';
import { attachmentTypeOf, type Attachment, type ExecuteTaskParams } from '../../contract';

/** An attachment left out of the model input because its type is not one Converse takes. */
export type SkippedAttachment = { index: number; mimetype: string; size: number };

export type ConverseInput = {
  /** Converse `messages`: alternating roles, first and last `user`; the last one is the current message. */
  messages: Message[];
  /** Attachments left out (the caller logs them). */
  skipped: SkippedAttachment[];
};

/** Converse's limit on a document name's length. */
const MAX_DOCUMENT_NAME_LENGTH = 200;

/**
 * The Converse `messages` of a task, without calling anything (so it is testable without the SDK):
 *
 * - each earlier thread message (`params.messages`, oldest first) is a turn with its role; the
 *   current message (`params.text`) is the final `user` turn; empty thread texts are skipped;
 * - Converse wants roles to alternate, starting with `user`: leading `assistant` turns are
 *   dropped and consecutive turns of one role are merged (texts joined by a blank line, other
 *   content blocks kept in order) — so a thread ending with a user's message merges into the
 *   current one;
 * - when user turns come from more than one person (distinct `user_id`s among the thread's user
 *   messages and `params.user_id`), every user text with a known id is prefixed `<@USERID>: ` so
 *   the model knows who said what; with one person, no prefixes;
 * - attachments become content blocks of the final turn, after its text: images as `image`,
 *   documents as `document` with a name Converse accepts (see `documentNames`). A type not in
 *   ATTACHMENT_TYPES is left out and reported in `skipped`.
 */
export function converseMessages(params: ExecuteTaskParams): ConverseInput {
  const thread = (params.messages ?? []).filter((message) => message.text.trim() !== '');
  const people = new Set<string>();
  for (const message of thread) if (message.role === 'user' && message.user_id) people.add(message.user_id);
  if (params.user_id) people.add(params.user_id);
  const attribute = people.size > 1;
  const userText = (text: string, userId: string | undefined) => (attribute && userId ? `<@${userId}>: ${text}` : text);

  const turns: Message[] = thread.map((message) => ({
    role: message.role,
    content: [{ text: message.role === 'user' ? userText(message.text, message.user_id) : message.text }],
  }));
  const { blocks, skipped } = attachmentBlocks(params.attachments ?? []);
  turns.push({ role: 'user', content: [{ text: userText(params.text, params.user_id) + lookingAt(params) }, ...blocks] });

  const messages: Message[] = [];
  for (const turn of turns) {
    if (messages.length === 0 && turn.role === 'assistant') continue;
    const last = messages[messages.length - 1];
    if (last && last.role === turn.role) last.content = mergeContent(last.content ?? [], turn.content ?? []);
    else messages.push({ role: turn.role, content: [...(turn.content ?? [])] });
  }
  return { messages, skipped };
}

/** One turn's blocks after another's of the same role: a text meeting a text becomes one text. */
function mergeContent(first: ContentBlock[], second: ContentBlock[]): ContentBlock[] {
  const merged = [...first];
  for (const block of second) {
    const last = merged[merged.length - 1];
    if (last && isText(last) && isText(block)) merged[merged.length - 1] = { text: `${last.text}\n\n${block.text}` };
    else merged.push(block);
  }
  return merged;
}

function isText(block: ContentBlock): block is ContentBlock.TextMember {
  return typeof (block as { text?: unknown }).text === 'string';
}

function attachmentBlocks(attachments: readonly Attachment[]): { blocks: ContentBlock[]; skipped: SkippedAttachment[] } {
  const blocks: ContentBlock[] = [];
  const skipped: SkippedAttachment[] = [];
  const names = new UniqueNames();
  attachments.forEach((attachment, index) => {
    const type = attachmentTypeOf(attachment.mimetype);
    if (!type) {
      skipped.push({ index, mimetype: attachment.mimetype, size: attachment.size });
      return;
    }
    const bytes = Buffer.from(attachment.data, 'base64');
    if (type.kind === 'image') blocks.push({ image: { format: type.format as ImageFormat, source: { bytes } } });
    else blocks.push({ document: { format: type.format as DocumentFormat, name: names.take(documentName(attachment.name)), source: { bytes } } });
  });
  return { blocks, skipped };
}

/**
 * A file name as Converse takes a document name: only (ASCII) alphanumerics, whitespace,
 * hyphens, parentheses and square brackets, never two whitespace characters in a row. Leading
 * dots and the extension go (the format says it), accents are dropped (`résumé` → `resume`), underscores
 * and dots become hyphens, any other character a space; whitespace is collapsed and trimmed.
 * Nothing left → `document`.
 */
export function documentName(fileName: string): string {
  const bare = fileName.replace(/^\.+/, '');
  const dot = bare.lastIndexOf('.');
  const stem = dot > 0 ? bare.slice(0, dot) : bare;
  const name = stem
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[_.]/g, '-')
    .replace(/[^A-Za-z0-9\s()[\]-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_DOCUMENT_NAME_LENGTH - 8)
    .trim();
  return name === '' ? 'document' : name;
}

/** Document names unique within one request (case-insensitively): repeats get ` (2)`, ` (3)`, … */
class UniqueNames {
  private readonly taken = new Set<string>();

  take(name: string): string {
    let candidate = name;
    for (let n = 2; this.taken.has(candidate.toLowerCase()); n += 1) candidate = `${name} (${n})`;
    this.taken.add(candidate.toLowerCase());
    return candidate;
  }
}

/**
 * What the user was looking at in Slack (docs/contract.md, "Context"), as a note after their
 * question, so "this channel" has a referent; the ids are Slack's, which the model can quote back.
 */
function lookingAt(params: ExecuteTaskParams): string {
  const entities = params.context?.entities ?? [];
  if (entities.length === 0) return '';
  const described = entities.map((entity) => (entity.type === 'channel' ? `channel <#${entity.id}>` : entity.type === 'message' ? `a message (ts ${entity.id}) in <#${entity.channel ?? ''}>` : `${entity.type} ${entity.id}`));
  return `\n\n(While asking, I am looking at: ${described.join('; ')}.)`;
}
