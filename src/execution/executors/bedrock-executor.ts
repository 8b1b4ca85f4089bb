import {
  BedrockRuntimeClient,
  ConverseCommand,
  type ContentBlock,
} from '@aws-sdk/client-bedrock-runtime';
import { ErrorCode, type ExecuteTaskParams } from '../../contract';
import { RpcError } from '../rpc-error';
import { converseMessages } from './converse-input';
import type { Executor, ExecutorContext, ExecutorOutput } from './executor';

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
};

/**
 * Runs a task as one Bedrock Converse call: the thread so far as alternating turns, the current
 * message last with its attachments as image and document blocks (see `converseMessages`).
 */
export class BedrockExecutor implements Executor {
  readonly name = 'bedrock';
  constructor(private readonly options: BedrockExecutorOptions) {}

  async execute(params: ExecuteTaskParams, { signal, log }: ExecutorContext): Promise<ExecutorOutput> {
    const { client, modelId, systemPrompt = DEFAULT_SYSTEM_PROMPT, maxTokens = 2048 } = this.options;
    const { messages, skipped } = converseMessages(params);
    // Which file, by position, type and size: never its name or content.
    for (const attachment of skipped) log.warn('attachment of an unsupported type left out of the model input', { attachment_index: attachment.index, mimetype: attachment.mimetype.slice(0, 100), size: attachment.size });
    try {
      const response = await client.send(
        new ConverseCommand({
          modelId,
          system: [{ text: systemPrompt }],
          messages,
          inferenceConfig: { maxTokens },
        }),
        { abortSignal: signal },
      );
      const text = textOf(response.output?.message?.content);
      return {
        response_text: text,
        model_id: modelId,
        stop_reason: response.stopReason,
        usage: { input_tokens: response.usage?.inputTokens, output_tokens: response.usage?.outputTokens },
      };
    } catch (error) {
      if (signal.aborted) throw error;
      const mapped = MODEL_ERRORS[(error as Error).name];
      if (!mapped) throw error;
      log.warn('bedrock converse failed', { error_name: (error as Error).name, model_id: modelId });
      throw new RpcError(mapped.code, mapped.message, { retryable: mapped.retryable, model_id: modelId }, { cause: error });
    }
  }
}

function textOf(content: ContentBlock[] | undefined): string {
  return (content ?? [])
    .map((block) => ('text' in block && typeof block.text === 'string' ? block.text : ''))
    .filter(Boolean)
    .join('\n');
}
