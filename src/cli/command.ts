/** One `zone` sub-command: its name, one-line summary, usage text and what it does. */
export type Command = {
  name: string;
  summary: string;
  usage: string;
  /** Resolves with the process exit code; long-running commands resolve only when stopped. */
  run(args: string[]): Promise<number>;
};
