// `countersign approvals list [--status]`: the requests routed to you, one line each (or JSON).
import { Command, Option } from 'commander';
import { ApprovalClient } from '../client/approval-client';
import { EXIT_CODES_HELP } from '../cli-error';
import { approvalUrlOption, approverTokenOption, trimUrl } from '../options';
import { approvalLine } from '../render';

export function approvalsCommand(): Command {
  const approvals = new Command('approvals').description('Approval requests routed to you');
  approvals
    .command('list')
    .description('List the approval requests routed to your groups, oldest first')
    .addOption(
      new Option('--status <status>', 'only requests in this state').choices([
        'pending',
        'decided',
        'expired',
      ]),
    )
    .option('--json', 'print the raw JSON')
    .addOption(approvalUrlOption())
    .addOption(approverTokenOption())
    .addHelpText('after', `\nExample:\n  $ countersign approvals list --status pending\n${EXIT_CODES_HELP}`)
    .action(
      async (options: {
        status?: 'pending' | 'decided' | 'expired';
        json?: boolean;
        approvalUrl: string;
        approverToken?: string;
      }) => {
        const views = await new ApprovalClient(trimUrl(options.approvalUrl), options.approverToken).list(
          options.status,
        );
        if (options.json) process.stdout.write(`${JSON.stringify(views, null, 2)}\n`);
        else if (!views.length)
          process.stdout.write(`no ${options.status ?? ''} approval requests`.replace('  ', ' ') + '\n');
        else for (const view of views) process.stdout.write(`${approvalLine(view)}\n`);
      },
    );
  return approvals;
}
