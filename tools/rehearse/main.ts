import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../cdk/project-root';
import { scanFlags } from '../cli-flags';
import { rehearse } from './rehearsal';
import { withRehearsalSection, rehearsalSection } from './results-section';

/**
 * `npm run rehearse [-- --record] [--max-wait-ms N]`: runs the rehearsal (tools/rehearse/rehearsal.ts),
 * prints each function's init duration and each proof, and exits 1 if anything failed — naming
 * the function and the runtime's error. `--record` writes the init durations of a green run to
 * bench/RESULTS.md (its "Rehearsal" section). REHEARSE_KEEP_ASSEMBLY=<dir> copies the synthesized
 * cdk.out there (test/rehearse breaks copies of it).
 */
async function main(): Promise<number> {
  // This process (Node 20) only sets up the loopback services: the SDK's notice that its 2027
  // releases need Node 22 is about it, not about the functions, which run on Node 22.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { flags, values, rest } = scanFlags(process.argv.slice(2), { booleans: new Set(['--record']), values: new Set(['--max-wait-ms']) });
  if (rest.length) throw new RangeError(`unknown arguments: ${rest.join(' ')} (use --record, --max-wait-ms N)`);
  const maxWaitMs = Number(values.get('--max-wait-ms') ?? 60_000);
  if (!Number.isInteger(maxWaitMs) || maxWaitMs < 1000) throw new RangeError('--max-wait-ms must be a whole number of milliseconds, at least 1000');
  const started = Date.now();
  const keepAssemblyIn = process.env.REHEARSE_KEEP_ASSEMBLY || undefined;
  const report = await rehearse({ maxWaitMs, log: (line) => console.log(line), ...(keepAssemblyIn ? { keepAssemblyIn } : {}) });
  const failed = report.proofs.filter((proof) => !proof.passed);
  console.log(`\n${report.proofs.length - failed.length} of ${report.proofs.length} proofs passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (flags.has('--record') && failed.length === 0) {
    const file = path.join(PROJECT_ROOT, 'bench', 'RESULTS.md');
    writeFileSync(file, withRehearsalSection(readFileSync(file, 'utf8'), rehearsalSection(report, new Date())));
    console.log(`init durations recorded in ${path.relative(process.cwd(), file)}`);
  }
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`rehearsal failed: ${error.message}`);
    process.exit(1);
  },
);
