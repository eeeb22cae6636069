// `countersign approvals list [--status] [--limit]`: the requests routed to you, one line each (or JSON);
// `countersign approvals show <id>`: one request, as the `run` prompt shows it. Both show the current revision.
import { Command, InvalidArgumentError, Option } from 'commander';
import { ApprovalClient, DEFAULT_LIST_MAX } from '../client/approval-client';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../cli-error';
import { approvalUrlOption, legacyApproverTokenOption, tokenOf, tokenOption, trimUrl } from '../options';
import { approvalLine, requestLines } from '../render';

export function approvalsCommand(): Command {
  const approvals = new Command('approvals').description('Approval requests routed to you');
  approvals
    .command('list')
    .description(
      'List the approval requests routed to your groups: pending (oldest first), then manual-step notices, ' +
        'decided and expired (each in the order they were settled). Reads the service page by page.',
    )
    .addOption(
      new Option('--status <status>', 'only requests in this state').choices([
        'pending',
        'decided',
        'expired',
      ]),
    )
    .addOption(
      new Option('--limit <n>', 'print at most this many; a note on stderr says when more follow')
        .argParser(positiveInteger)
        .default(DEFAULT_LIST_MAX),
    )
    .option('--json', 'print the raw JSON')
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText('after', `\nExample:\n  $ countersign approvals list --status pending\n${EXIT_CODES_HELP}`)
    .action(
      async (options: {
        status?: 'pending' | 'decided' | 'expired';
        limit: number;
        json?: boolean;
        approvalUrl: string;
        token?: string;
        approverToken?: string;
      }) => {
        const client = new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options));
        const { views, more } = await client.list(options.status, options.limit);
        if (options.json) process.stdout.write(`${JSON.stringify(views, null, 2)}\n`);
        else if (!views.length)
          process.stdout.write(`no ${options.status ?? ''} approval requests`.replace('  ', ' ') + '\n');
        else for (const view of views) process.stdout.write(`${approvalLine(view)}\n`);
        if (more)
          process.stderr.write(
            `countersign: stopped after ${views.length} approval requests; more follow (raise --limit to see them)\n`,
          );
      },
    );
  approvals
    .command('show')
    .description(
      'Show one request routed to you: its context, votes, the current revision of its arguments (who edited them, ' +
        'when) and its fingerprint, which `approve --fingerprint` pins a decision to',
    )
    .argument('<callId>', 'the call ID, or the request ID (see `countersign approvals list`)')
    .option('--json', 'print the raw JSON')
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText('after', `\nExample:\n  $ countersign approvals show call-1234\n${EXIT_CODES_HELP}`)
    .action(
      async (
        id: string,
        options: { json?: boolean; approvalUrl: string; token?: string; approverToken?: string },
      ) => {
        const view = await new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options)).get(id);
        if (!view)
          throw new CliError(`unknown call ID ${id} (or it is not routed to you)`, ExitCode.NotFound);
        if (options.json) return void process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
        process.stdout.write(`${approvalLine(view)}\n${requestLines(view).join('\n')}\n`);
      },
    );
  return approvals;
}

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return Number(value);
}
