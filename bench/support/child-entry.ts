import { writeSync } from 'node:fs';

/**
 * The entry of a measured child process: options as JSON in argv[2]; the result — or the error —
 * as one JSON line on fd 3, then exit (0 or 1). Each part's child calls it with its own measure.
 */
export function runChildMeasure<O, R>(measure: (options: O) => Promise<R>, argv = process.argv.slice(2)): void {
  const options = JSON.parse(argv[0] ?? '{}') as O;
  measure(options).then(
    (result) => {
      writeSync(3, `${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      writeSync(3, `${JSON.stringify({ error: String((error as Error)?.stack ?? error) })}\n`);
      process.exit(1);
    },
  );
}
