import type { TransportKind } from '../../transport/transport';

/**
 * Limits on the files one task carries (ATTACHMENT_* settings). The defaults are what Bedrock
 * Converse accepts in one request; the total keeps the request inside the transport's payload
 * limit once base64 has added its third.
 */
export type AttachmentLimits = {
  maxImages: number;
  maxImageBytes: number;
  maxDocuments: number;
  maxDocumentBytes: number;
  maxTotalBytes: number;
};

export const DEFAULT_ATTACHMENT_LIMITS: Omit<AttachmentLimits, 'maxTotalBytes'> = {
  maxImages: 20,
  // Decimal megabytes, as Bedrock states its limits: a binary reading would let files through that Converse refuses.
  maxImageBytes: 3_750_000,
  maxDocuments: 5,
  maxDocumentBytes: 4_500_000,
};

/**
 * The bytes of files one task may carry over each transport, before base64: a Lambda function URL
 * takes a 6 MB request (4 MB of files is 5.3 MB in base64, with room for the rest of the task);
 * AgentCore takes 100 MB, and 32 MB keeps the invoker's memory and the runtime's body limit
 * (MAX_BODY_BYTES, 48 MiB) comfortable.
 */
export function defaultMaxTotalBytes(transport: TransportKind): number {
  return transport === 'https' ? 4_000_000 : 32_000_000;
}

