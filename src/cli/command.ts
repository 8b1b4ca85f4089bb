import { isTransportKind } from '../transport/config';
import { TRANSPORT_KINDS, type TransportKind } from '../transport/transport';

/** One `zone` sub-command: its name, one-line summary, usage text and what it does. */
export type Command = {
  name: string;
  summary: string;
  usage: string;
  /** Resolves with the process exit code; long-running commands resolve only when stopped. */
  run(args: string[]): Promise<number>;
};

/** A `--transport` flag, checked: the kind it names, or undefined when it is not given. */
export function transportFlag(value: string | undefined): TransportKind | undefined {
  if (value === undefined) return undefined;
  if (!isTransportKind(value)) throw new Error(`--transport must be one of ${TRANSPORT_KINDS.join(', ')}, not ${JSON.stringify(value)}`);
  return value;
}
