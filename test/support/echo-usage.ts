import type { Usage } from '../../src/contract';

/**
 * The usage the echo executor reports (src/execution/executors/echo-executor.ts): a token a
 * whitespace-separated word of its input (the text, and the thread's messages) and of its answer.
 */
export function echoUsage(text: string, answer = `echo: ${text}`, thread: readonly string[] = []): Usage {
  const words = (value: string) => value.split(/\s+/).filter(Boolean).length;
  return { input_tokens: words(text) + thread.reduce((sum, message) => sum + words(message), 0), output_tokens: words(answer), model: 'echo' };
}

/** Echo's success result for a text: `echo: <text>`, with its usage. */
export function echoSuccess(text: string): { status: 'success'; response_text: string; usage: Usage } {
  return { status: 'success', response_text: `echo: ${text}`, usage: echoUsage(text) };
}
