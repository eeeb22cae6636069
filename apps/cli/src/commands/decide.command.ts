// `countersign approve <callId>` and `countersign deny <callId> [--reason]`: decide as an approver.
import { Command } from 'commander';
import { ApprovalClient } from '../client/approval-client';
import { EXIT_CODES_HELP } from '../cli-error';
import { approvalUrlOption, legacyApproverTokenOption, tokenOf, tokenOption, trimUrl } from '../options';

export const approveCommand = () => decideCommand('approve');
export const denyCommand = () => decideCommand('deny');

function decideCommand(decision: 'approve' | 'deny'): Command {
  return new Command(decision)
    .description(
      decision === 'approve'
        ? 'Approve one pending call (a decision authorizes exactly that call with exactly those arguments)'
        : 'Deny one pending call; the agent is told it was refused, with your reason',
    )
    .argument(
      '<callId>',
      'the call ID, or the request ID when several runs used that call ID (see `countersign approvals list`)',
    )
    .option('-r, --reason <text>', 'why; shown to the model and kept in the audit log')
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText(
      'after',
      `\nExample:\n  $ countersign ${decision} call-1234${decision === 'deny' ? ' --reason "not during business hours"' : ''}\n${EXIT_CODES_HELP}`,
    )
    .action(
      async (
        callId: string,
        options: { reason?: string; approvalUrl: string; token?: string; approverToken?: string },
      ) => {
        const result = await new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options)).decide(
          callId,
          decision,
          options.reason,
        );
        process.stdout.write(
          result.status === 'decided'
            ? `${callId}: ${result.decision === 'approve' ? 'approved' : 'denied'} by ${result.approvers?.join(', ')}\n`
            : `${callId}: vote recorded (${result.approvals}/${result.quorum} approvals); waiting for another approver\n`,
        );
      },
    );
}
