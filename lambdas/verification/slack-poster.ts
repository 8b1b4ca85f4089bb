import { wireSlackPoster } from '../../src/verification/wiring';
import { botThreads, claimStore, fileUploadStates, outgoingFiles, pauses, records } from './shared/clients';
import { functionContext } from './shared/function-context';
import { livePortsOf, slackOf } from './shared/slack';
import { sqsBatchHandler } from './shared/sqs-batch';

/** slack-poster: SQS replies → chat.postMessage in the thread, once per chunk even on redelivery; then the answer's files, once each. */
const context = functionContext('slack-poster');
const table = context.config.STATE_TABLE_NAME;

export const handler = sqsBatchHandler(
  wireSlackPoster(context, {
    slack: slackOf(context),
    claims: claimStore(table),
    threads: botThreads(table),
    live: livePortsOf(context),
    agent: () => slackOf(context),
    records: records(table),
    files: { uploads: () => slackOf(context), states: fileUploadStates(table), outgoing: outgoingFiles(table) },
    pauses: pauses(table),
  }),
  context,
);
