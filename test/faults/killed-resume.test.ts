import type { ResumeTaskParams } from '../../src/contract';
import { buttonClickPayload } from '../../src/local/slack-interaction-builder';
import { FUNCTION_TIMEOUT_SECONDS, visibilityTimeoutSeconds } from '../../src/verification/pipeline-settings';
import { lambdaContext } from '../support/lambda-context';
import { questionButtons } from '../support/slack-surface';
import { interactionEvent, isHeld, replaySlackEvent, SqsReplay, startFaultPipeline, statusOf, type FaultPipeline } from './pipeline';

/**
 * Issue 35: the answer to a question resumes the task under `once()` on `resume#<request>#<round>`
 * (src/verification/invoke/resume-task.ts). The fault that breaks it: agent-invoker killed at its
 * deadline while `resume_task` is out — after it landed in the execution zone (its answer lost), or
 * before it did — then SQS's redelivery of the answer after the visibility timeout, by when the
 * claim's lease is over. The task must be resumed once (the second `resume_task` gets where the
 * task stands: docs/contract.md "Questions", "Once") and the thread must get one answer.
 */
let pipeline: FaultPipeline;
/** Stalled resume_task calls, let go after each test. */
let stalled: Array<() => void> = [];
beforeAll(async () => {
  pipeline = await startFaultPipeline({ env: { STREAM_HOLD_S: '0' } });
});
afterAll(() => pipeline.close());
beforeEach(() => pipeline.reset());
afterEach(() => {
  for (const letGo of stalled) letGo();
  stalled = [];
  jest.restoreAllMocks();
});

/** Every record visible now delivered, and whatever they queued at once, without moving the clock (a waiting question's timer stays put). */
async function settle(queue: SqsReplay, options: { timeoutMs?: number } = {}): Promise<void> {
  while ((await queue.deliverVisible(options)) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Mentions the bot with a question to ask; resolves once it is posted in the thread with its buttons. */
async function asked(text: string): Promise<{ queue: SqsReplay; approve: { action_id: string; value: string }; channel: string; questionTs: string; threadTs: string }> {
  pipeline.clock.begin();
  const { body } = pipeline.mention(text);
  expect((await replaySlackEvent(pipeline, body)).map(statusOf)).toEqual([200]);
  const queue = new SqsReplay(pipeline);
  await settle(queue);
  const question = pipeline.slack.posts.find((post) => questionButtons(pipeline.slack.messageBlocks(post.ts)));
  expect(question).toBeDefined();
  const approve = questionButtons(pipeline.slack.messageBlocks(question!.ts))!.Approve!;
  return { queue, approve, channel: question!.channel, questionTs: question!.ts, threadTs: question!.thread_ts! };
}

/** Counts the execution zone's resume_task calls; `holdFirst` holds the first one's answer (after it applied the answer) until the test ends. */
function watchResumes(options: { holdFirst?: boolean } = {}): { calls: ResumeTaskParams[] } {
  const service = pipeline.runtime.runtime.service;
  const real = service.resumeTask.bind(service);
  const calls: ResumeTaskParams[] = [];
  jest.spyOn(service, 'resumeTask').mockImplementation(async (params) => {
    calls.push(params);
    const answered = await real(params);
    if (options.holdFirst && calls.length === 1) await new Promise<void>((resolve) => stalled.push(resolve));
    return answered;
  });
  return { calls };
}

/** The reply that closes the question's buttons, which resume-task sends before it calls resume_task. */
const isQuestionClosed = (body: string) => body.includes('"question-closed"');
/** The resumed task's answer on its way to the replies queue: sent after resume_task answered, before the claim is completed. */
const isTheAnswer = (body: string) => body.includes('answer: Approve');

/** Under the SDK's 2 s request timeout (QUICK_CALL): a send that stalls outlives the function. */
const KILLED_AT_MS = 1_500;

describe.each([
  // Killed: the claim stays held by the dead delivery until its lease ends.
  { name: 'killed after resume_task landed (its answer stalled on the way to the replies queue)', stall: isTheAnswer, holdFirst: false, deadlineMs: KILLED_AT_MS, claimHeld: true, resumeCalls: 2 },
  { name: 'killed before resume_task was called (the question-closed reply stalled)', stall: isQuestionClosed, holdFirst: false, deadlineMs: KILLED_AT_MS, claimHeld: true, resumeCalls: 1 },
  // Not killed: the call to the execution zone gives up within the function's time; the claim is given back.
  { name: 'resume_task landed but answered nothing within the call\'s timeout', stall: undefined, holdFirst: true, deadlineMs: 3_000, claimHeld: false, resumeCalls: 2 },
])('agent-invoker resuming a task, $name', ({ stall, holdFirst, deadlineMs, claimHeld, resumeCalls }) => {
  it('the redelivery after the visibility timeout resumes the task once and the thread gets one answer', async () => {
    const { queue, approve, channel, questionTs, threadTs } = await asked('deploy it #ask=Ship it?');
    expect(pipeline.executions).toBe(1);
    const requestId = pipeline.tasks()[0]!.request_id;
    const { calls } = watchResumes({ holdFirst });
    const before = queue.deliveries.length;
    const answerDeliveries = () => queue.deliveries.slice(before).filter((delivery) => delivery.queue === 'tasks').map((delivery) => [delivery.receiveCount, delivery.failed]);

    const click = buttonClickPayload({ actionId: approve.action_id, value: approve.value, channel, messageTs: questionTs, threadTs });
    expect((await pipeline.handlers.slackEvents(interactionEvent(click), lambdaContext(FUNCTION_TIMEOUT_SECONDS.slackEvents * 1000, 'slack-events'))).statusCode).toBe(200);
    if (stall) pipeline.sqs.failNext({ stall: true, queue: 'replies', match: stall });
    await settle(queue, { timeoutMs: deadlineMs });
    expect(answerDeliveries()).toEqual([[1, true]]);
    expect(pipeline.sqs.stalls).toBe(stall ? 1 : 0);
    expect(isHeld(await pipeline.claim(`resume#${requestId}#0`), pipeline.clock.now())).toBe(claimHeld);

    // SQS gives the answer back after its visibility timeout; the resume claim's lease is over by then.
    pipeline.clock.advance(visibilityTimeoutSeconds('tasks') * 1000);
    await settle(queue);

    expect(answerDeliveries()).toEqual([
      [1, true],
      [2, false],
    ]);
    // A second resume_task (where the first landed) is told where the task stands and runs nothing:
    // the task ran twice in all — asked, then resumed once.
    expect(calls).toHaveLength(resumeCalls);
    expect(pipeline.executions).toBe(2);
    const answers = pipeline.slack.posts.filter((post) => post.thread_ts === threadTs && /answer: Approve/.test(post.text));
    expect(answers).toHaveLength(1);
    expect(queue.deadLetters).toEqual([]);
  });
});
