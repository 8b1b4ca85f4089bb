import type { Command } from './command';
import { callCommand } from './call';
import { demoCommand } from './demo';
import { feedbackCommand } from './feedback';
import { usageCommand } from './usage';
import { sayCommand } from './say';
import { serveCommand } from './serve';
import { startCommand } from './start';
import { conformanceCommand } from './conformance';
import { agentsCommand } from './agents';

/** The `zone` command: one entry point for running, trying and checking both zones. */
const commands: Command[] = [startCommand, sayCommand, feedbackCommand, usageCommand, demoCommand, serveCommand, callCommand, agentsCommand, conformanceCommand];

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: zone <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `zone <command> --help` for a command\'s options.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${help()}\n`);
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`zone: unknown command "${name}"\n\n${help()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`usage: ${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    process.stderr.write(`zone ${name}: ${(error as Error).message}\n`);
    return 1;
  }
}
