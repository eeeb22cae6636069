// `countersign` command line. Each subcommand lives in its own file under commands/ and is added here.
import { Command } from 'commander';
import { fingerprintCommand } from './commands/fingerprint.command';

/** Every subcommand, in the order `--help` lists them. Add `run`, `approvals`, `approve`, `deny` here. */
const commands: (() => Command)[] = [fingerprintCommand];

export function buildProgram(): Command {
  const program = new Command('countersign')
    .description('Countersign: a human-approval layer for AI agents’ tool calls')
    .showHelpAfterError()
    .showSuggestionAfterError();
  for (const command of commands) program.addCommand(command());
  return program;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  await buildProgram().parseAsync([...argv]);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`countersign: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
