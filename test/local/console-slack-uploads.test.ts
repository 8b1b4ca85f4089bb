import { ConsoleSlackReplies } from '../../src/local/console-slack-replies';
import { SlackApiError } from '../../src/slack/slack-api-error';
import { FileUploader } from '../../src/verification/files-out/file-uploader';
import { MemoryFileUploadStates } from '../../src/verification/files-out/memory-upload-states';
import { MemoryClaimStore } from '../../src/verification/stores/memory-claim-store';

/** The local workspace takes Slack's three upload calls (src/local/console-slack-uploads.ts). */
describe("ConsoleSlackReplies as Slack's file upload", () => {
  const csv = Buffer.from('a,b\n1,2\n');
  const target = { taskKey: 'task-1', channel: 'C0LOCAL', threadTs: '1800000000.000100' };

  it('shares a file the uploader sends, prints it, and keeps its bytes for the playground', async () => {
    // Prepare
    const lines: string[] = [];
    const workspace = new ConsoleSlackReplies((line) => lines.push(line));
    const uploader = new FileUploader({ slack: workspace, states: new MemoryFileUploadStates(), claims: new MemoryClaimStore(), fetchUrl: async () => Buffer.alloc(0) });
    // Act
    const [outcome] = await uploader.uploadAll(target, [{ name: 'report.csv', media_type: 'text/csv', data: csv.toString('base64') }]);
    await uploader.uploadAll(target, [{ name: 'report.csv', media_type: 'text/csv', data: csv.toString('base64') }]);
    // Assess
    expect(outcome).toMatchObject({ status: 'shared', again: false });
    expect(workspace.sharedFiles).toEqual([expect.objectContaining({ channel: 'C0LOCAL', threadTs: target.threadTs, name: 'report.csv', mimetype: 'text/csv', size: csv.length })]);
    expect(workspace.fileBytes(workspace.sharedFiles[0]!.id)).toEqual(csv);
    expect(lines.join('\n')).toContain('📎 file in C0LOCAL (thread 1800000000.000100): report.csv (text/csv, 8 bytes)');
  });

  it.each([
    ['no length', () => new ConsoleSlackReplies(() => undefined).startUpload({ filename: 'a.txt', length: 0 }), 'invalid_arguments'],
    ['uploads off', () => new ConsoleSlackReplies(() => undefined, undefined, undefined, { uploads: 'disabled' }).startUpload({ filename: 'a.txt', length: 3 }), 'file_uploads_disabled'],
    ['a file over the limit', () => new ConsoleSlackReplies(() => undefined, undefined, undefined, { maxFileBytes: 2 }).startUpload({ filename: 'a.txt', length: 3 }), 'file_upload_size_restricted'],
    ['a refused type', () => new ConsoleSlackReplies(() => undefined, undefined, undefined, { blockedExtensions: ['exe'] }).startUpload({ filename: 'a.exe', length: 3 }), 'file_type_not_allowed'],
    ['a share of bytes that never came', async () => {
      const workspace = new ConsoleSlackReplies(() => undefined);
      const { fileId } = await workspace.startUpload({ filename: 'a.txt', length: 3 });
      await workspace.share({ fileId, title: 'a.txt', ...target });
    }, 'file_not_found'],
  ])('refuses %s as Slack does', async (_what, call, code) => {
    const error = await call().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SlackApiError);
    expect(error).toMatchObject({ code, retryable: false });
  });
});
