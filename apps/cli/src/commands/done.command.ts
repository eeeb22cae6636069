// `countersign done <callId> [--note]`: you did the manual step of a notice; the run's model is told a person did it.
import { Command } from 'commander';
import { ApprovalClient } from '../client/approval-client';
import { EXIT_CODES_HELP } from '../cli-error';
import { approvalUrlOption, legacyApproverTokenOption, tokenOf, tokenOption, trimUrl } from '../options';

export function doneCommand(): Command {
  return new Command('done')
    .description('Mark a manual-step notice done: you did the step; the agent is told a person did it')
    .argument('<callId>', 'the notice’s call ID (see `countersign approvals list`)')
    .option('-n, --note <text>', 'what you did; the agent is told it and the audit log keeps it')
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText(
      'after',
      `\nExample:\n  $ countersign done call-1234 --note "snapshot taken, then deleted"\n${EXIT_CODES_HELP}`,
    )
    .action(
      async (
        callId: string,
        options: { note?: string; approvalUrl: string; token?: string; approverToken?: string },
      ) => {
        const client = new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options));
        const result = await client.done(callId, options.note);
        process.stdout.write(`${callId}: ${result.next}\n`);
      },
    );
}
