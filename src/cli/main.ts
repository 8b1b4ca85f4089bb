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

/**
 * The AWS SDK warns on every start under Node 20 that its releases after January 2027 will need
 * Node 22: nine lines about a future SDK above the stack's own first line, on a supported Node
 * (README, "Quick start"). The versions in package-lock.json run on Node 20; setting the variable
 * to anything else shows the warning again.
 */
function quietSdkNodeVersionWarning(): void {
  if (!process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
}

export async function main(argv: string[]): Promise<number> {
  quietSdkNodeVersionWarning();
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
