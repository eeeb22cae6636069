// `countersign runbook <name> [--input '{"service":"payments"}']`: starts a runbook run and follows it like `run`: each
// step's transitions, and a confirmation prompt for every call or gate routed to the person at the terminal.
import { Command } from 'commander';
import { WorkerClient } from '../client/worker-client';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../cli-error';
import { approvalUrlOption, approverTokenOption, tokenOption, trimUrl, workerUrlOption } from '../options';
import { approverClient, followRun, type RunOptions } from './run.command';

interface RunbookOptions extends Pick<
  RunOptions,
  'token' | 'onBehalfOf' | 'workerUrl' | 'approvalUrl' | 'approverToken' | 'prompt'
> {
  input: string;
}

export function runbookCommand(): Command {
  return new Command('runbook')
    .description(
      'Start a runbook (RUNBOOKS_DIR on the worker) and stream its steps; answer its confirmations if you are an approver.',
    )
    .argument('<name>', 'runbook name, e.g. payments-failover')
    .option('--input <json>', "the runbook's starting state as a JSON object", '{}')
    .addOption(tokenOption())
    .option('--on-behalf-of <userId>', 'machine clients with an actAs entry: start the runbook for this user')
    .addOption(workerUrlOption())
    .addOption(approvalUrlOption())
    .addOption(approverTokenOption())
    .option('--no-prompt', 'never ask; only stream')
    .addHelpText(
      'after',
      `
Example:
  $ countersign runbook payments-failover --input '{"service":"payments"}' \\
      --token alice-demo-token-change-me --approver-token carol-demo-token-change-me
${EXIT_CODES_HELP}`,
    )
    .action(async (name: string, options: RunbookOptions) => {
      process.exitCode = await runRunbook(name, options);
    });
}

async function runRunbook(name: string, options: RunbookOptions): Promise<number> {
  const input = parseInput(options.input);
  const worker = new WorkerClient(trimUrl(options.workerUrl), options.token);
  const approvals = await approverClient(options);
  const runId = await worker.startRunbook(name, input, options.onBehalfOf);
  process.stdout.write(`▶ runbook ${name}: run ${runId} started\n`);
  return followRun(worker, approvals, runId, options);
}

function parseInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // said below
  }
  throw new CliError(`--input: not a JSON object: ${text}`, ExitCode.InvalidInput);
}
