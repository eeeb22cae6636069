// `countersign approve <callId>` and `countersign deny <callId> [--reason]`: decide as an approver.
import { Command, InvalidArgumentError, Option } from 'commander';
import type { DecisionResult } from '@countersign/contracts';
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
    .addOption(
      decision === 'approve'
        ? new Option(
            '--args <json>',
            'approve these arguments instead (the whole JSON object): checked against the tool’s schema, the other ' +
              'approvers of a quorum are asked about them, and the agent is told it ran with them',
          ).argParser(jsonObject)
        : new Option('--args <json>').hideHelp().argParser(() => {
            throw new InvalidArgumentError('only `approve` takes edited arguments');
          }),
    )
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText(
      'after',
      `\nExample:\n  $ countersign ${decision} call-1234${decision === 'deny' ? ' --reason "not during business hours"' : ''}${decision === 'approve' ? `\n  $ countersign approve call-1234 --args '{"service":"payments","replicas":4}'` : ''}\n${EXIT_CODES_HELP}`,
    )
    .action(
      async (
        callId: string,
        options: {
          reason?: string;
          args?: Record<string, unknown>;
          approvalUrl: string;
          token?: string;
          approverToken?: string;
        },
      ) => {
        const result = await new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options)).decide(
          callId,
          decision,
          options.reason,
          { args: options.args },
        );
        process.stdout.write(`${callId}: ${outcomeLine(result, Boolean(options.args))}\n`);
      },
    );
}

/** What became of the vote, in one line. */
function outcomeLine(result: DecisionResult, edited: boolean): string {
  const { route } = result;
  const moved = route
    ? `your edit routed it anew to ${route.groups.join(', ')}${route.quorum > 1 ? ` (needs ${route.quorum} approvers)` : ''}`
    : '';
  if (result.status === 'rerouted')
    return `not approved: ${moved}, and you are not one of them, so your approval does not count; they are asked now`;
  if (result.status === 'vote_recorded')
    return `vote recorded (${result.approvals}/${result.quorum} approvals)${moved ? `; ${moved}` : ''}; waiting for another approver`;
  const how = result.decision === 'approve' ? 'approved' : 'denied';
  return `${how} by ${result.approvers?.join(', ')}${edited ? ' (edited arguments)' : ''}`;
}

function jsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`not JSON: ${(error as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidArgumentError('must be a JSON object of the tool’s arguments');
  return value as Record<string, unknown>;
}
