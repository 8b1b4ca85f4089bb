import { SlackApiError } from '../../slack/slack-api-error';
import type { SlackUploads } from '../../slack/slack-uploads';
import type { OutgoingFiles } from './outgoing-files';

/**
 * A poster without file sharing (a Slack sink that cannot upload, or no outgoing store): each of
 * an answer's files is refused, so the thread names it as not shared instead of leaving it out silently.
 */
export const NO_UPLOADS: SlackUploads = {
  startUpload: async () => {
    throw new SlackApiError('files.getUploadURLExternal: this deployment does not share files', 'file_sharing_not_set_up', false);
  },
  sendBytes: async () => undefined,
  share: async () => undefined,
  isShared: async () => false,
};

export const NO_OUTGOING_FILES: OutgoingFiles = { put: async () => undefined, get: async () => [] };
