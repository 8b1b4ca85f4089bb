import { spawn, type ChildProcess } from 'node:child_process';
import { InvocationError, RuntimeApi, type Answer } from './runtime-api';
import type { TemplateFunction } from './template-functions';
import type { RehearsalRuntime } from './node22';

/**
 * One Lambda function as its sandbox runs it: Node 22 starts AWS's Runtime Interface Client
 * (aws-lambda-ric) in the function's unpacked asset directory, with the environment Lambda gives
 * it — the template's variables, Lambda's reserved ones, and nothing of this shell's — and the
 * client polls a Runtime API served here. Init failures and invocation errors come back as Lambda
 * reports them, named after the function; an invocation that outlives its deadline fails with
 * Lambda's "Task timed out" and the sandbox is discarded, as Lambda discards it.
 */
export type Sandbox = {
  readonly name: string;
  /** The template's variables as the function got them (intrinsics resolved). */
  readonly environment: Readonly<Record<string, string>>;
  /** From spawning the process to the runtime's first `/next` (what Lambda reports as Init Duration). */
  readonly initDurationMs: number;
  /** Invokes the function; the answer's body is its response (streamed or buffered). */
  invoke(event: unknown, options?: { timeoutMs?: number }): Promise<Answer>;
  /** Invokes in buffered mode and parses the JSON the function returned. */
  invokeJson<T = unknown>(event: unknown, options?: { timeoutMs?: number }): Promise<T>;
  /** The function's output so far (its logs, as CloudWatch would receive them). */
  logs(): string;
  stop(): Promise<void>;
};

export type SandboxOptions = {
  fn: TemplateFunction;
  /** The template's variables, every intrinsic resolved to a loopback value. */
  environment: Record<string, string>;
  /** Where AWS's endpoints are on loopback, and the region and credentials Lambda would give. */
  aws: Record<string, string>;
  runtime: RehearsalRuntime;
  /** The longest the rehearsal waits for init or one invocation (below the function's own timeout). */
  maxWaitMs: number;
};

export class RehearsalError extends Error {
  override name = 'RehearsalError';
}

export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const { fn, runtime } = options;
  const api = new RuntimeApi(fn.name, fn.arn);
  const address = await api.listen();
  let output = '';
  const started = Date.now();
  const child = spawn(runtime.node, [runtime.ricEntry], {
    cwd: fn.assetDir,
    env: {
      // Lambda's own variables (docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime).
      // Lambda's PATH has its runtime's bin first; the runtime here is started by its full path.
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LANG: 'en_US.UTF-8',
      TZ: ':UTC',
      _HANDLER: fn.handler,
      LAMBDA_TASK_ROOT: fn.assetDir,
      AWS_LAMBDA_RUNTIME_API: address,
      AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
      AWS_LAMBDA_FUNCTION_NAME: fn.physicalName,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.physicalName}`,
      AWS_LAMBDA_LOG_STREAM_NAME: `rehearsal/[$LATEST]${started.toString(16)}`,
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      ...options.aws,
      ...options.environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  exited.then((code) => api.abandon(new RehearsalError(`${fn.name}: the runtime exited (code ${code}) during an invocation${tail(output)}`)));

  try {
    await initialized(api, child, exited, fn.name, options.maxWaitMs, () => output);
  } catch (error) {
    child.kill('SIGKILL');
    await api.close();
    throw error;
  }
  const initDurationMs = Date.now() - started;
  const deadlineOf = (timeoutMs?: number) => Math.min(timeoutMs ?? options.maxWaitMs, fn.timeoutSeconds * 1000);

  const invoke = async (event: unknown, invokeOptions: { timeoutMs?: number } = {}): Promise<Answer> => {
    const limit = deadlineOf(invokeOptions.timeoutMs);
    const answer = await withDeadline(api.invoke(event, limit), limit, () => timedOut(fn.name, limit, child, output));
    // A stream must end before the deadline too: one that never ends fails here, named.
    const finished = withDeadline(answer.finished, limit, () => new RehearsalError(`${fn.name}: the response stream did not end within ${limit} ms${tail(output)}`));
    return { ...answer, finished };
  };

  return {
    name: fn.name,
    environment: options.environment,
    initDurationMs,
    invoke,
    async invokeJson<T>(event: unknown, invokeOptions?: { timeoutMs?: number }): Promise<T> {
      const answer = await invoke(event, invokeOptions);
      const chunks: Buffer[] = [];
      for await (const chunk of answer.body) chunks.push(chunk as Buffer);
      const streamError = await answer.finished;
      if (streamError) throw new InvocationError(fn.name, streamError);
      const text = Buffer.concat(chunks).toString('utf8');
      return (text ? JSON.parse(text) : null) as T;
    },
    logs: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
        clearTimeout(timer);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await api.close();
    },
  };
}

/** Waits for the first `/next`; an init error, an exit or the bound fails it, naming the function and the runtime's error. */
async function initialized(api: RuntimeApi, child: ChildProcess, exited: Promise<number | null>, name: string, maxWaitMs: number, output: () => string): Promise<void> {
  const initFailed = new Promise<never>((_, reject) =>
    api.whenInitFails((error) => reject(new RehearsalError(`${name}: init failed: ${error.errorType}: ${error.errorMessage}${tail(output())}`))),
  );
  const died = exited.then((code) => {
    throw new RehearsalError(`${name}: the runtime exited (code ${code}) before it asked for an event${api.initError ? `: ${api.initError.errorType}: ${api.initError.errorMessage}` : ''}${tail(output())}`);
  });
  await withDeadline(Promise.race([api.initialized, initFailed, died]), maxWaitMs, () => {
    child.kill('SIGKILL');
    return new RehearsalError(`${name}: init did not finish within ${maxWaitMs} ms${tail(output())}`);
  });
}

function timedOut(name: string, limitMs: number, child: ChildProcess, output: string): Error {
  // Lambda ends the sandbox of a function that timed out; the next invocation starts a new one.
  child.kill('SIGKILL');
  return new RehearsalError(`${name}: Task timed out after ${(limitMs / 1000).toFixed(2)} seconds${tail(output)}`);
}

function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** The last lines the function wrote, to go with an error about it. */
function tail(output: string, lines = 15): string {
  const last = output.trimEnd().split('\n').slice(-lines).join('\n');
  return last ? `\n--- its last output ---\n${last}` : '';
}
