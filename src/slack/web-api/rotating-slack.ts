import type { Log } from '../../observability/logger';
import type { SecretSource } from '../../secrets/secret-source';
import { SlackApiError } from '../slack-api-error';
import { TOKEN_REFUSED_ERRORS } from './slack-errors';
import { createSlackWebClient, type SlackWebClientOptions } from './web-client';
import { WebApiSlackReplies, type SlackPorts } from './web-api-slack';

export type RotatingSlackRepliesOptions = Omit<SlackWebClientOptions, 'token' | 'log'> & { log?: Pick<Log, 'info' | 'warn' | 'error'> };

/**
 * Every Slack port (replies, conversations, live answers, the agent surface) whose bot token comes from a secret that may
 * rotate while the process lives (a warm Lambda). The WebClient is rebuilt whenever the secret's
 * value changes; a call Slack refuses for its token (TOKEN_REFUSED_ERRORS) re-reads the secret
 * once and, if that gives a new token, is made once more with it — unless part of it had landed
 * (a split append: the error's outcome is then `unknown`). No Slack call is made before the
 * token is read.
 */
export function slackRepliesFromSecret(botToken: SecretSource, options: RotatingSlackRepliesOptions = {}): SlackPorts {
  let current: { token: string; replies: WebApiSlackReplies } | undefined;
  const repliesWith = (token: string): WebApiSlackReplies => {
    if (current?.token !== token) current = { token, replies: new WebApiSlackReplies(createSlackWebClient({ ...options, token }), { log: options.log, ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}) }) };
    return current.replies;
  };

  const call = async <T>(method: string, run: (replies: WebApiSlackReplies) => Promise<T>): Promise<T> => {
    const token = await botToken.get();
    try {
      return await run(repliesWith(token));
    } catch (error) {
      // A refusal that came after part of the call landed (a split append) is not made again.
      if (!(error instanceof SlackApiError) || !TOKEN_REFUSED_ERRORS.has(error.code) || error.outcome !== 'refused') throw error;
      const fresh = await botToken.refresh().catch((refreshError: unknown) => {
        options.log?.warn('Slack refused the bot token and re-reading its secret failed', { method, code: error.code, error: refreshError as Error });
        return token;
      });
      // The same token again would be refused again: report Slack's answer instead.
      if (fresh === token) throw error;
      options.log?.info('Slack refused the bot token; retrying once with the token re-read from its secret', { method, code: error.code });
      return run(repliesWith(fresh));
    }
  };

  return {
    post: (message, callOptions) => call('chat.postMessage', (replies) => replies.post(message, callOptions)),
    findPosted: (thread, marker, callOptions) => call('conversations.replies', (replies) => replies.findPosted(thread, marker, callOptions)),
    readThread: (thread, limits, callOptions) => call('conversations.replies', (replies) => replies.readThread(thread, limits, callOptions)),
    // A refused download is Slack's sign-in page, not an API error: it never triggers a re-read.
    downloadFile: (url, limits, callOptions) => call('files', (replies) => replies.downloadFile(url, limits, callOptions)),
    addReaction: (reaction) => call('reactions.add', (replies) => replies.addReaction(reaction)),
    removeReaction: (reaction) => call('reactions.remove', (replies) => replies.removeReaction(reaction)),
    setStatus: (thread, status, callOptions) => call('assistant.threads.setStatus', (replies) => replies.setStatus(thread, status, callOptions)),
    startStream: (stream, callOptions) => call('chat.startStream', (replies) => replies.startStream(stream, callOptions)),
    appendStream: (message, markdownText, callOptions) => call('chat.appendStream', (replies) => replies.appendStream(message, markdownText, callOptions)),
    stopStream: (message, callOptions) => call('chat.stopStream', (replies) => replies.stopStream(message, callOptions)),
    update: (message, text, callOptions) => call('chat.update', (replies) => replies.update(message, text, callOptions)),
    setSessionStatus: (session, callOptions) => call('agents.sessions.setStatus', (replies) => replies.setSessionStatus(session, callOptions)),
    setSuggestedPrompts: (target, callOptions) => call('assistant.threads.setSuggestedPrompts', (replies) => replies.setSuggestedPrompts(target, callOptions)),
    postEphemeral: (message, callOptions) => call('chat.postEphemeral', (replies) => replies.postEphemeral(message, callOptions)),
    openView: (view, callOptions) => call('views.open', (replies) => replies.openView(view, callOptions)),
    startUpload: (file, callOptions) => call('files.getUploadURLExternal', (replies) => replies.startUpload(file, callOptions)),
    // The upload URL needs no token: a refusal there is never the token's.
    sendBytes: (url, bytes, callOptions) => call('upload_url', (replies) => replies.sendBytes(url, bytes, callOptions)),
    share: (file, callOptions) => call('files.completeUploadExternal', (replies) => replies.share(file, callOptions)),
    isShared: (file, callOptions) => call('files.info', (replies) => replies.isShared(file, callOptions)),
  };
}

