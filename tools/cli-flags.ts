/**
 * The tools' command lines (npm run model): `--name value`, `--name=value` and bare flags, split
 * out of argv by name; what no set names is handed back in order, for the next parser or an error.
 */
export function scanFlags(
  argv: readonly string[],
  names: { booleans: ReadonlySet<string>; values: ReadonlySet<string> },
): { flags: Set<string>; values: Map<string, string>; rest: string[] } {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const inline = arg.startsWith('--') && eq > 0;
    const name = inline ? arg.slice(0, eq) : arg;
    if (names.booleans.has(name)) flags.add(name);
    else if (names.values.has(name)) {
      const value = inline ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new RangeError(`${name} needs a value`);
      values.set(name, value);
    } else rest.push(arg);
  }
  return { flags, values, rest };
}
