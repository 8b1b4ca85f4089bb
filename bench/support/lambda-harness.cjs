'use strict';
/**
 * Loads one bundled Lambda the way the Node.js runtime does (require, then call `handler`) and
 * hands it one event, then `warm` more of the same. Plain CommonJS with nothing but node: built-ins,
 * so the harness itself adds next to nothing to the process it measures.
 *
 *   node lambda-harness.cjs <bundle.js> <event.json> [warm]
 *
 * Writes one JSON line to fd 3: { requireMs, firstMs, warmMs[], result } and exits at once, as
 * a Lambda sandbox would freeze rather than wait for timers and sockets to drain.
 */
const started = process.hrtime.bigint();
const { readFileSync, writeSync } = require('node:fs');

const [bundlePath, eventPath, warmArg] = process.argv.slice(2);
const { event } = JSON.parse(readFileSync(eventPath, 'utf8'));
const warm = Number(warmArg ?? 0);
const ms = (from, to) => Number(to - from) / 1e6;

let requestSeq = 0;
function context() {
  requestSeq += 1;
  const deadline = Date.now() + 30_000;
  return {
    functionName: 'bench',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:bench',
    memoryLimitInMB: '256',
    awsRequestId: `00000000-0000-4000-8000-${String(requestSeq).padStart(12, '0')}`,
    logGroupName: '/aws/lambda/bench',
    logStreamName: 'bench',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

/**
 * The runtime's `awslambda` global, as much of it as a handler that streams its response uses
 * (middy's `streamifyResponse`: execution-url, a function URL in RESPONSE_STREAM mode). The
 * streamed response is gathered and handed back as buffered mode answers: { statusCode, headers, body }.
 */
const STREAMING = Symbol('streaming');
globalThis.awslambda = {
  streamifyResponse: (fn) => Object.assign(fn, { [STREAMING]: true }),
  HttpResponseStream: {
    from: (stream, prelude) => Object.assign(stream, { prelude }),
  },
};

function callStreaming(handler) {
  const { Writable } = require('node:stream');
  const chunks = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return Promise.resolve(handler(event, stream, context())).then(() => ({ statusCode: 200, ...stream.prelude, body: Buffer.concat(chunks).toString('utf8') }));
}

function call(handler) {
  if (handler[STREAMING]) return callStreaming(handler);
  // Bolt's handler takes a callback as well; ours return a promise. Accept either.
  return new Promise((resolve, reject) => {
    const returned = handler(event, context(), (error, value) => (error ? reject(error) : resolve(value)));
    if (returned && typeof returned.then === 'function') returned.then(resolve, reject);
  });
}

async function main() {
  const { handler } = require(bundlePath);
  const loaded = process.hrtime.bigint();
  const result = await call(handler);
  const answered = process.hrtime.bigint();
  const warmMs = [];
  for (let i = 0; i < warm; i += 1) {
    const from = process.hrtime.bigint();
    await call(handler);
    warmMs.push(ms(from, process.hrtime.bigint()));
  }
  writeSync(3, `${JSON.stringify({ requireMs: ms(started, loaded), firstMs: ms(loaded, answered), warmMs, result })}\n`);
  process.exit(0);
}

main().catch((error) => {
  writeSync(3, `${JSON.stringify({ error: String((error && error.stack) || error) })}\n`);
  process.exit(1);
});
