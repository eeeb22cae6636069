// `countersign` command line. Each subcommand lives in its own file under commands/ and is added here.
import { Command, CommanderError } from 'commander';
import { CliError, EXIT_CODES_HELP, ExitCode } from './cli-error';
import { approvalsCommand } from './commands/approvals.command';
import { approveCommand, denyCommand } from './commands/decide.command';
import { doneCommand } from './commands/done.command';
import { fingerprintCommand } from './commands/fingerprint.command';
import { inboxLinkCommand } from './commands/inbox-link.command';
import { policyCommand } from './commands/policy.command';
import { rulesCommand } from './commands/rules.command';
import { runCommand } from './commands/run.command';
import { runbookCommand } from './commands/runbook.command';
import { tokenCommand } from './commands/token.command';

/** Every subcommand, in the order `--help` lists them. */
const commands: (() => Command)[] = [
  runCommand,
  runbookCommand,
  approvalsCommand,
  approveCommand,
  denyCommand,
  doneCommand,
  rulesCommand,
  policyCommand,
  inboxLinkCommand,
  fingerprintCommand,
  tokenCommand,
];

export function buildProgram(): Command {
  const program = new Command('countersign')
    .description('Countersign: a human-approval layer for AI agents’ tool calls')
    .showHelpAfterError()
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      `
Services: --worker-url / COUNTERSIGN_WORKER_URL (default http://127.0.0.1:3000),
          --approval-url / COUNTERSIGN_APPROVAL_URL (default http://127.0.0.1:3001).
You:      --token / COUNTERSIGN_TOKEN (your API token; PRINCIPALS_CONFIG holds its hash).
${EXIT_CODES_HELP}`,
    );
  for (const command of commands) program.addCommand(command());
  // Throw instead of exiting, so main() decides the exit code (usage errors are "invalid input").
  const exitOverride = (command: Command): void => {
    command.exitOverride();
    command.commands.forEach(exitOverride);
  };
  exitOverride(program);
  return program;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (error) {
    process.exitCode = exitCodeOf(error);
    if (error instanceof CliError) process.stderr.write(`countersign: ${error.message}\n`);
    else if (!(error instanceof CommanderError)) throw error; // commander has printed its own message
  }
}

function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof CommanderError) {
    if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code))
      return error.code === 'commander.help' ? ExitCode.InvalidInput : ExitCode.Ok;
    return error.exitCode === 1 ? ExitCode.InvalidInput : error.exitCode;
  }
  return ExitCode.Failure;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`countersign: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
