/**
 * The two A2A dialects found in the field, as wire shapes (verified against @a2a-js/sdk 1.3:
 * its JSON-RPC handler, its protojson types and its compat/v0_3 translators).
 *
 * - 1.0 (`SendMessage`/`GetTask`/`CancelTask`): parts `{text}`, roles `ROLE_USER`/`ROLE_AGENT`,
 *   SendMessage's result wraps `{message}` or `{task}`, GetTask/CancelTask return the bare task,
 *   states `TASK_STATE_*`. The SDK routes a request without `A2A-Version: 1.0` to its 0.3 layer
 *   (or refuses it with -32009), so every 1.0 request carries that header.
 * - 0.3 (`message/send`/`tasks/get`/`tasks/cancel`): parts `{kind: "text", text}`, roles
 *   `user`/`agent`, results are a bare Message (`kind: "message"`) or Task (`kind: "task"`),
 *   lowercase states. Hand-written agents drop `kind`, ids and context ids, so reading is lenient
 *   and shared by both dialects: a task is whatever has a `status`.
 *
 * What a task carries beyond its text, in the parts each dialect defines (A2A spec 0.3 §6.5 and
 * 1.0 a2a.proto `Part`), always in this order after the text part:
 * - the earlier messages of the Slack thread: one data part `{"slack_thread": {"messages": […]}}`
 *   (0.3 `{kind: "data", data}`, 1.0 `{data, mediaType: "application/json"}`), only when there are any;
 * - each attachment: one file part with its bytes inline (0.3 `{kind: "file", file: {name,
 *   mimeType, bytes}}`, 1.0 `{raw, filename, mediaType}`; base64 in both).
 */

import type { Attachment, FilesReading, ThreadMessage, UsageReading } from '../contract';
import { fileEntriesOf, filesField } from './a2a-files';
import { usageOfA2aMetadata } from './a2a-usage';

export const A2A_VERSIONS = ['1.0', '0.3'] as const;
export type A2aVersion = (typeof A2A_VERSIONS)[number];

export const A2A_VERSION_HEADER = 'A2A-Version';

/** What we ask of an agent: one user message. */
export type OutgoingMessage = {
  /** Stable across retries of the same task. */
  messageId: string;
  text: string;
  /** The conversation the message belongs to: the same for every task of one Slack thread. */
  contextId?: string | undefined;
  /** The interrupted task this message answers (docs/contract.md, "Questions"); none for a new task. */
  taskId?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** Earlier messages of the Slack thread, oldest first, as the task gave them. */
  thread?: readonly ThreadMessage[] | undefined;
  /** Files that came with the message, bytes in base64. */
  files?: readonly Attachment[] | undefined;
};

/** The key of the data part that carries the earlier messages of the Slack thread. */
export const SLACK_THREAD_DATA_KEY = 'slack_thread';

/** The data of the thread part: `{"slack_thread": {"messages": […]}}`. */
function threadData(thread: readonly ThreadMessage[]): Record<string, unknown> {
  return { [SLACK_THREAD_DATA_KEY]: { messages: thread } };
}

/** The text part, then the thread's data part (if any), then one file part per attachment. */
function partsOf(message: OutgoingMessage, shape: { text(text: string): unknown; data(data: Record<string, unknown>): unknown; file(file: Attachment): unknown }): unknown[] {
  return [
    shape.text(message.text),
    ...(message.thread?.length ? [shape.data(threadData(message.thread))] : []),
    ...(message.files ?? []).map((file) => shape.file(file)),
  ];
}

export interface A2aDialect {
  readonly version: A2aVersion;
  /**
   * `stream`: the send whose answer is a stream of events (for an agent whose card says it
   * streams); `subscribe`: the same events of a task already running, from the task as it stands.
   */
  readonly methods: { readonly send: string; readonly stream: string; readonly subscribe: string; readonly get: string; readonly cancel: string };
  /** Protocol headers every request of this dialect carries. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * `blocking: false` asks the agent to answer at once with the task it started (a Lambda must
   * not wait out an agent's whole run); agents that ignore it simply answer when done.
   */
  sendParams(message: OutgoingMessage, options: { blocking: boolean }): Record<string, unknown>;
}

const V1_0: A2aDialect = {
  version: '1.0',
  methods: { send: 'SendMessage', stream: 'SendStreamingMessage', subscribe: 'SubscribeToTask', get: 'GetTask', cancel: 'CancelTask' },
  headers: { [A2A_VERSION_HEADER]: '1.0' },
  sendParams: (message, { blocking }) => ({
    message: {
      messageId: message.messageId,
      ...(message.contextId ? { contextId: message.contextId } : {}),
      ...(message.taskId ? { taskId: message.taskId } : {}),
      role: 'ROLE_USER',
      parts: partsOf(message, {
        text: (text) => ({ text }),
        data: (data) => ({ data, mediaType: 'application/json' }),
        file: ({ name, mimetype, data }) => ({ raw: data, filename: name, mediaType: mimetype }),
      }),
      ...(message.metadata ? { metadata: message.metadata } : {}),
    },
    configuration: { returnImmediately: !blocking },
  }),
};

const V0_3: A2aDialect = {
  version: '0.3',
  methods: { send: 'message/send', stream: 'message/stream', subscribe: 'tasks/resubscribe', get: 'tasks/get', cancel: 'tasks/cancel' },
  // 0.3 clients sent no version header; servers that know the header read its absence as 0.3.
  headers: {},
  sendParams: (message, { blocking }) => ({
    message: {
      kind: 'message',
      messageId: message.messageId,
      ...(message.contextId ? { contextId: message.contextId } : {}),
      ...(message.taskId ? { taskId: message.taskId } : {}),
      role: 'user',
      parts: partsOf(message, {
        text: (text) => ({ kind: 'text', text }),
        data: (data) => ({ kind: 'data', data }),
        file: ({ name, mimetype, data }) => ({ kind: 'file', file: { name, mimeType: mimetype, bytes: data } }),
      }),
      ...(message.metadata ? { metadata: message.metadata } : {}),
    },
    configuration: { blocking },
  }),
};

export const A2A_DIALECTS: Readonly<Record<A2aVersion, A2aDialect>> = { '1.0': V1_0, '0.3': V0_3 };

export function isA2aVersion(value: unknown): value is A2aVersion {
  return typeof value === 'string' && (A2A_VERSIONS as readonly string[]).includes(value);
}

export type A2aState = 'submitted' | 'working' | 'completed' | 'failed' | 'canceled' | 'rejected' | 'input-required' | 'auth-required' | 'unknown';

const STATES: ReadonlySet<string> = new Set<A2aState>(['submitted', 'working', 'completed', 'failed', 'canceled', 'rejected', 'input-required', 'auth-required', 'unknown']);
/** protojson may carry enums as numbers. */
const STATE_NUMBERS: readonly A2aState[] = ['unknown', 'submitted', 'working', 'completed', 'failed', 'canceled', 'input-required', 'rejected', 'auth-required'];

/** `TASK_STATE_INPUT_REQUIRED`, `input-required` and `input_required` are the same state. */
export function normaliseState(raw: unknown): A2aState {
  if (typeof raw === 'number') return STATE_NUMBERS[raw] ?? 'unknown';
  if (typeof raw !== 'string') return 'unknown';
  const state = raw.trim().toLowerCase().replace(/^task_state_/, '').replace(/_/g, '-');
  if (state === 'cancelled') return 'canceled';
  return STATES.has(state) ? (state as A2aState) : 'unknown';
}

/**
 * `usage`: what the agent's metadata says the answer cost (a2a-usage.ts); absent when it says nothing.
 * `files`: the file parts of the answer (a2a-files.ts) — a message's, or a task's artifacts' (else
 * its last agent message's); absent when there are none.
 */
export type A2aReply =
  | { kind: 'message'; text: string; messageId?: string; contextId?: string; usage?: UsageReading; files?: FilesReading }
  | {
      kind: 'task';
      usage?: UsageReading;
      files?: FilesReading;
      state: A2aState;
      taskId?: string;
      contextId?: string;
      /** The answer: artifacts' text, else the last agent message in the history, else the status message. */
      answer: string;
      /**
       * The artifacts' text alone: all of the answer a task has produced so far while it works
       * (an agent that streams appends to its artifacts), and never its progress messages.
       */
      artifactText: string;
      /** The status message's text: why a task failed, what input it wants. */
      statusText: string;
    }
  | { kind: 'unrecognised' };

/** Reads a SendMessage / message/send / GetTask / tasks/get result in either dialect. */
export function readA2aReply(result: unknown): A2aReply {
  if (!isRecord(result)) return { kind: 'unrecognised' };
  // 1.0 wraps SendMessage results; 0.3 and the get methods do not.
  if (!('status' in result) && !('parts' in result)) {
    if (isRecord(result.task)) return readA2aReply(result.task);
    if (isRecord(result.message)) return readA2aReply(result.message);
  }
  if (result.kind === 'task' || isRecord(result.status)) return readTask(result);
  if (result.kind === 'message' || Array.isArray(result.parts)) {
    return { kind: 'message', text: textOf(result.parts), ...optionalString('messageId', result.messageId), ...optionalString('contextId', result.contextId), ...usageField(result.metadata), ...filesField(fileEntriesOf(result.parts)) };
  }
  return { kind: 'unrecognised' };
}

function readTask(task: Record<string, unknown>): A2aReply {
  const status = isRecord(task.status) ? task.status : {};
  const statusText = isRecord(status.message) ? textOf(status.message.parts) : '';
  const artifactsText = (Array.isArray(task.artifacts) ? task.artifacts : [])
    .map((artifact) => (isRecord(artifact) ? textOf(artifact.parts) : ''))
    .filter(Boolean)
    .join('\n');
  const agentMessages = (Array.isArray(task.history) ? task.history : []).filter((message): message is Record<string, unknown> => isRecord(message) && isAgentRole(message.role));
  const lastAgentMessage = agentMessages
    .map((message) => textOf(message.parts))
    .filter(Boolean)
    .at(-1);
  const artifactFiles = (Array.isArray(task.artifacts) ? task.artifacts : []).flatMap((artifact) => (isRecord(artifact) ? fileEntriesOf(artifact.parts) : []));
  return {
    kind: 'task',
    state: normaliseState(status.state),
    ...optionalString('taskId', task.id),
    ...optionalString('contextId', task.contextId),
    answer: artifactsText || lastAgentMessage || statusText,
    artifactText: artifactsText,
    statusText,
    // The task's own metadata, else its status message's, else its last agent message's.
    ...usageField(task.metadata, isRecord(status.message) ? status.message.metadata : undefined, agentMessages.at(-1)?.metadata),
    ...filesField(artifactFiles.length ? artifactFiles : fileEntriesOf(agentMessages.at(-1)?.parts)),
  };
}

function usageField(...metadata: unknown[]): { usage?: UsageReading } {
  if (!metadata.some(isRecord)) return {};
  const usage = usageOfA2aMetadata(...metadata);
  return Object.keys(usage).length ? { usage } : {};
}

/** Text parts only: 1.0 `{text}`, 0.3 `{kind: "text", text}`, pre-0.3 `{type: "text", text}`. */
function textOf(parts: unknown): string {
  return textsOf(parts).join('\n');
}

function textsOf(parts: unknown): string[] {
  if (!Array.isArray(parts)) return [];
  return parts
    .filter((part): part is Record<string, unknown> => isRecord(part) && typeof part.text === 'string' && (part.kind ?? 'text') === 'text' && (part.type ?? 'text') === 'text')
    .map((part) => part.text as string);
}

/**
 * One event of a streamed answer (0.3 `message/stream`, 1.0 `SendStreamingMessage`): a task or a
 * message as `readA2aReply` reads them, or an update of a task — its status (with the status
 * message's text), or one artifact's text parts, added to what the artifact had (`append`) or
 * replacing it. A task event lists its artifacts' text parts the same way.
 */
export type A2aStreamEvent =
  | (Extract<A2aReply, { kind: 'task' }> & { artifacts: A2aArtifactText[] })
  | Exclude<A2aReply, { kind: 'task' }>
  | { kind: 'status'; state: A2aState; taskId?: string; contextId?: string; statusText: string; usage?: UsageReading }
  | ({ kind: 'artifact'; taskId?: string; contextId?: string; append: boolean; /** The artifact's last chunk (0.3 `lastChunk`, 1.0 `lastChunk`; absent: one chunk, whole). */ lastChunk: boolean } & A2aArtifactText);

/** An artifact's id (empty when the agent gave none), its name where it has one, its text parts and its file parts (a2a-files.ts), in order. */
export type A2aArtifactText = { artifactId: string; name?: string; texts: string[]; files: Record<string, unknown>[] };

export function readA2aStreamEvent(result: unknown): A2aStreamEvent {
  if (!isRecord(result)) return { kind: 'unrecognised' };
  // 1.0 wraps each event in its case; 0.3 names it in `kind`, which hand-written agents may drop.
  if (isRecord(result.statusUpdate)) return readStatusUpdate(result.statusUpdate);
  if (isRecord(result.artifactUpdate)) return readArtifactUpdate(result.artifactUpdate);
  if (result.kind === 'status-update') return readStatusUpdate(result);
  if (result.kind === 'artifact-update') return readArtifactUpdate(result);
  if (result.kind === undefined && !('status' in result) && isRecord(result.artifact)) return readArtifactUpdate(result);
  if (result.kind === undefined && !('id' in result) && typeof result.taskId === 'string' && isRecord(result.status)) return readStatusUpdate(result);
  const reply = readA2aReply(result);
  if (reply.kind !== 'task') return reply;
  const task = isRecord(result.task) ? result.task : result;
  return { ...reply, artifacts: (Array.isArray(task.artifacts) ? task.artifacts : []).filter(isRecord).map(artifactText) };
}

function readStatusUpdate(event: Record<string, unknown>): A2aStreamEvent {
  const status = isRecord(event.status) ? event.status : {};
  return {
    kind: 'status',
    state: normaliseState(status.state),
    ...optionalString('taskId', event.taskId),
    ...optionalString('contextId', event.contextId),
    statusText: isRecord(status.message) ? textOf(status.message.parts) : '',
    ...usageField(event.metadata, isRecord(status.message) ? status.message.metadata : undefined),
  };
}

function readArtifactUpdate(event: Record<string, unknown>): A2aStreamEvent {
  return {
    kind: 'artifact',
    ...optionalString('taskId', event.taskId),
    ...optionalString('contextId', event.contextId),
    append: event.append === true,
    lastChunk: event.lastChunk !== false,
    ...artifactText(isRecord(event.artifact) ? event.artifact : {}),
  };
}

function artifactText(artifact: Record<string, unknown>): A2aArtifactText {
  return { artifactId: typeof artifact.artifactId === 'string' ? artifact.artifactId : '', ...optionalString('name', artifact.name), texts: textsOf(artifact.parts), files: fileEntriesOf(artifact.parts) };
}

function isAgentRole(role: unknown): boolean {
  return role === 2 || (typeof role === 'string' && ['agent', 'role_agent'].includes(role.toLowerCase()));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString<K extends string>(key: K, value: unknown): Partial<Record<K, string>> {
  return typeof value === 'string' && value !== '' ? ({ [key]: value } as Record<K, string>) : {};
}
