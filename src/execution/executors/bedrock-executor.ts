import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ContentBlock,
  type ConverseStreamOutput,
  type Message,
  type TokenUsage,
} from '@aws-sdk/client-bedrock-runtime';
import { ErrorCode, type ExecuteTaskParams, type Usage } from '../../contract';
import { RpcError } from '../rpc-error';
import { converseMessages } from './converse-input';
import type { Executor, ExecutorContext, ExecutorOutput } from './executor';
import { ToolSteps, stepsOfContent } from './tool-steps';

export const DEFAULT_SYSTEM_PROMPT =
  'You are a helpful assistant answering in a Slack thread. Be concise and accurate. ' +
  'Use Slack mrkdwn for formatting. If you do not know, say so.';

export type BedrockExecutorOptions = {
  client: BedrockRuntimeClient;
  modelId: string;
  systemPrompt?: string;
  maxTokens?: number;
};

/** Bedrock model errors mapped to the contract's server-defined codes, with messages a user may read. */
const MODEL_ERRORS: Record<string, { code: number; message: string; retryable: boolean }> = {
  ThrottlingException: { code: ErrorCode.ModelThrottled, message: 'The model is busy; try again shortly', retryable: true },
  ServiceQuotaExceededException: { code: ErrorCode.ModelThrottled, message: 'The model quota is exhausted; try again later', retryable: true },
  ModelTimeoutException: { code: ErrorCode.ModelUnavailable, message: 'The model took too long to answer', retryable: true },
  ServiceUnavailableException: { code: ErrorCode.ModelUnavailable, message: 'The model service is unavailable', retryable: true },
  InternalServerException: { code: ErrorCode.ModelUnavailable, message: 'The model service failed', retryable: true },
  ModelNotReadyException: { code: ErrorCode.ModelUnavailable, message: 'The model is not ready yet', retryable: true },
  ValidationException: { code: ErrorCode.ModelRejected, message: 'The model rejected the request', retryable: false },
  ModelErrorException: { code: ErrorCode.ModelRejected, message: 'The model could not process the request', retryable: false },
  AccessDeniedException: { code: ErrorCode.ModelUnavailable, message: 'The execution zone may not use this model', retryable: false },
  ResourceNotFoundException: { code: ErrorCode.ModelUnavailable, message: 'The configured model does not exist', retryable: false },
  // ConverseStream only: the stream broke off after it had started.
  ModelStreamErrorException: { code: ErrorCode.ModelUnavailable, message: 'The model stopped answering mid-way', retryable: true },
};

/** Under an answer the model gave without the files it refused. */
export const FILES_REFUSED_NOTE = '_(The model could not read the attached files, so this answer is without them.)_';

/**
 * ConverseStream's exception events (ConverseStreamOutput members), by the error name Converse
 * uses for the same failure. The SDK throws them while the stream is read; should one arrive as
 * an event instead, it is thrown as that error all the same.
 */
const STREAM_EXCEPTIONS = {
  internalServerException: 'InternalServerException',
  modelStreamErrorException: 'ModelStreamErrorException',
  validationException: 'ValidationException',
  throttlingException: 'ThrottlingException',
  serviceUnavailableException: 'ServiceUnavailableException',
} as const satisfies Partial<Record<keyof ConverseStreamOutput.MessageStartMember, string>>;
const STREAM_EXCEPTION_MEMBERS = Object.keys(STREAM_EXCEPTIONS) as Array<keyof typeof STREAM_EXCEPTIONS>;

/**
 * Runs a task as one Bedrock Converse call: the thread so far as alternating turns, the current
 * message last with its attachments as image and document blocks (see `converseMessages`). A task
 * that streams (`onText`) makes the same request with ConverseStream and hands over each text
 * delta as it arrives; both answer with the same fields and map model errors alike.
 */
export class BedrockExecutor implements Executor {
  readonly name = 'bedrock';
  constructor(private readonly options: BedrockExecutorOptions) {}

  /**
   * A file the model refuses (an image past its pixel limit, a format this model cannot read)
   * would cost the whole answer: the task is asked once more without its files, and the answer
   * says so. Only before any text was streamed, so what the user saw stays the answer's start.
   */
  async execute(params: ExecuteTaskParams, context: ExecutorContext): Promise<ExecutorOutput> {
    let streamed = false;
    const onText = context.onText && ((delta: string) => ((streamed = true), context.onText!(delta)));
    try {
      // The context's fields by name: it may be a class whose `signal` is a getter, which a spread would leave out.
      return await this.converse(params, onText ? { taskId: context.taskId, signal: context.signal, log: context.log, onText, ...(context.onStep ? { onStep: context.onStep } : {}) } : context);
    } catch (error) {
      const refusedFiles = error instanceof RpcError && (error.cause as Error | undefined)?.name === 'ValidationException' && Boolean(params.attachments?.length) && !streamed;
      if (!refusedFiles || context.signal.aborted) throw error;
      context.log.warn('the model refused the request with its attachments; asking once more without them', { attachments: params.attachments!.length });
      const { attachments: _files, ...withoutFiles } = params;
      const output = await this.converse(withoutFiles, context);
      const note = `\n\n${FILES_REFUSED_NOTE}`;
      context.onText?.(note);
      return { ...output, response_text: `${output.response_text}${note}` };
    }
  }

  private async converse(params: ExecuteTaskParams, { signal, log, onText, onStep }: ExecutorContext): Promise<ExecutorOutput> {
    const { client, modelId, systemPrompt = DEFAULT_SYSTEM_PROMPT, maxTokens = 2048 } = this.options;
    const { messages, skipped } = converseMessages(params);
    // Which file, by position, type and size: never its name or content.
    for (const attachment of skipped) log.warn('attachment of an unsupported type left out of the model input', { attachment_index: attachment.index, mimetype: attachment.mimetype.slice(0, 100), size: attachment.size });
    const input = { modelId, system: [{ text: systemPrompt }], messages, inferenceConfig: { maxTokens } };
    try {
      if (onText) return await this.converseStream(input, signal, onText, onStep);
      const response = await client.send(new ConverseCommand(input), { abortSignal: signal });
      const text = textOf(response.output?.message?.content);
      // Tool use the model reports (with tools configured) is shown as steps.
      if (onStep) for (const step of stepsOfContent(response.output?.message?.content)) onStep(step);
      return {
        response_text: text,
        model_id: modelId,
        stop_reason: response.stopReason,
        ...usageField(response.usage, modelId),
      };
    } catch (error) {
      if (signal.aborted) throw error;
      const mapped = MODEL_ERRORS[(error as Error).name];
      if (!mapped) throw error;
      log.warn(onText ? 'bedrock converse-stream failed' : 'bedrock converse failed', { error_name: (error as Error).name, model_id: modelId });
      throw new RpcError(mapped.code, mapped.message, { retryable: mapped.retryable, model_id: modelId }, { cause: error });
    }
  }

  /**
   * ConverseStream: each `contentBlockDelta.delta.text` goes to `onText` as it arrives; the stop
   * reason comes with `messageStop`, the token counts with `metadata`. Text blocks are joined with
   * a newline, as Converse's answer is, so the deltas add up to the same `response_text`.
   */
  private async converseStream(
    input: { modelId: string; system: Array<{ text: string }>; messages: Message[]; inferenceConfig: { maxTokens: number } },
    signal: AbortSignal,
    onText: (delta: string) => void,
    onStep?: ExecutorContext['onStep'],
  ): Promise<ExecutorOutput> {
    const response = await this.options.client.send(new ConverseStreamCommand(input), { abortSignal: signal });
    const tools = onStep ? new ToolSteps((step) => onStep(step)) : undefined;
    let text = '';
    let textBlock: number | undefined;
    let stopReason: string | undefined;
    let usage: TokenUsage | undefined;
    for await (const event of response.stream ?? []) {
      signal.throwIfAborted();
      for (const member of STREAM_EXCEPTION_MEMBERS) {
        const exception = event[member];
        if (exception) throw Object.assign(new Error(exception.message ?? STREAM_EXCEPTIONS[member]), { name: STREAM_EXCEPTIONS[member] });
      }
      tools?.take(event);
      const delta = event.contentBlockDelta?.delta?.text;
      if (typeof delta === 'string' && delta !== '') {
        const block = event.contentBlockDelta?.contentBlockIndex ?? 0;
        // A new text block after another one: the newline Converse's answer has between them.
        const piece = textBlock !== undefined && block !== textBlock ? `\n${delta}` : delta;
        textBlock = block;
        text += piece;
        onText(piece);
      }
      if (event.messageStop) stopReason = event.messageStop.stopReason;
      if (event.metadata) usage = event.metadata.usage;
    }
    return {
      response_text: text,
      model_id: input.modelId,
      stop_reason: stopReason,
      ...usageField(usage, input.modelId),
    };
  }
}

/**
 * The contract's `usage` (docs/contract.md, "Usage") of Converse's token counts, with the model
 * the executor asked; none when Bedrock gave no counts (a stream cut before its metadata event).
 */
export function usageField(counts: TokenUsage | undefined, modelId: string): { usage?: Usage } {
  if (!counts || !isCount(counts.inputTokens) || !isCount(counts.outputTokens)) return {};
  const usage: Usage = { input_tokens: counts.inputTokens, output_tokens: counts.outputTokens };
  if (isCount(counts.cacheReadInputTokens)) usage.cache_read_tokens = counts.cacheReadInputTokens;
  if (isCount(counts.cacheWriteInputTokens)) usage.cache_write_tokens = counts.cacheWriteInputTokens;
  usage.model = modelId;
  return { usage };
}

function isCount(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function textOf(content: ContentBlock[] | undefined): string {
  return (content ?? [])
    .map((block) => ('text' in block && typeof block.text === 'string' ? block.text : ''))
    .filter(Boolean)
    .join('\n');
}
