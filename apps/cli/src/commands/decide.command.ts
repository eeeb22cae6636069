// `countersign approve <callId>`, `countersign deny <callId> [--reason]` and `countersign respond <callId> "<text>"`:
// decide as an approver. A decision is pinned
// to a revision of the arguments: the one `--fingerprint` names, else the one this command reads just before voting.
// The service records the vote on exactly that revision or refuses it (exit 7), and the command prints what it decided.
import { Command, InvalidArgumentError, Option } from 'commander';
import { fingerprint } from '@countersign/authorization';
import { ResponseTextSchema, type DecisionResult } from '@countersign/contracts';
import { ApprovalClient } from '../client/approval-client';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../cli-error';
import { approvalUrlOption, legacyApproverTokenOption, tokenOf, tokenOption, trimUrl } from '../options';
import { currentRevision, decidedLines, type Revision } from '../render';

interface DecideOptions {
  reason?: string;
  args?: Record<string, unknown>;
  fingerprint?: string;
  approvalUrl: string;
  token?: string;
  approverToken?: string;
}

export const approveCommand = () => decideCommand('approve');
export const denyCommand = () => decideCommand('deny');

/**
 * `countersign respond <callId> "<text>"`: answer with text instead of a verdict. The call does not run; the agent's
 * model gets the text as the call's result (naming you) and re-plans. One respond settles the request, like a deny.
 */
export function respondCommand(): Command {
  return new Command('respond')
    .description(
      'Answer one pending call with text instead of approving or denying it: it does not run, and the agent is ' +
        'given your text as its result, so it re-plans',
    )
    .argument(
      '<callId>',
      'the call ID, or the request ID when several runs used that call ID (see `countersign approvals list`)',
    )
    .argument(
      '<text>',
      'your response (1 to 4,000 characters), e.g. "restart only the canary first"',
      responseText,
    )
    .addOption(
      fingerprintOption(
        'respond only to this revision of the arguments: refused, exit 7, when someone edited them since. ' +
          'Default: the revision read just before responding',
      ),
    )
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText(
      'after',
      `\nExample:\n  $ countersign respond call-1234 "Not like this: restart only the canary first"\n${EXIT_CODES_HELP}`,
    )
    .action(async (callId: string, text: string, options: DecideOptions) => {
      const { client, read, pinned } = await readToDecide(callId, options);
      const result = await client.decide(callId, 'respond', undefined, {
        fingerprint: pinned,
        response: text,
      });
      const lines = pinned === read.fingerprint ? decidedLines(read, false) : [`  fingerprint: ${pinned}`];
      process.stdout.write([`${callId}: ${outcomeLine(result)}`, ...lines, ''].join('\n'));
    });
}

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
    .addOption(
      fingerprintOption(
        'decide only this revision of the arguments (the fingerprint `approvals list`/`approvals show` print): ' +
          'refused, exit 7, when someone edited them since. Default: the revision read just before deciding',
      ),
    )
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText(
      'after',
      `\nExample:\n  $ countersign ${decision} call-1234${decision === 'deny' ? ' --reason "not during business hours"' : ''}${decision === 'approve' ? `\n  $ countersign approve call-1234 --args '{"service":"payments","replicas":4}'` : ''}\n${EXIT_CODES_HELP}`,
    )
    .action(async (callId: string, options: DecideOptions) => {
      const { client, read, pinned } = await readToDecide(callId, options);
      const result = await client.decide(callId, decision, options.reason, {
        args: options.args,
        fingerprint: pinned,
      });
      const decided = await decidedRevision(client, callId, read, pinned, options.args);
      const headline = `${callId}: ${outcomeLine(result)}`;
      const lines = decided
        ? decidedLines(decided.revision, decided.ownEdit)
        : [`  fingerprint: ${options.args ? fingerprint(read.toolName, options.args) : pinned}`];
      process.stdout.write([headline, ...lines, ''].join('\n'));
    });
}

/** `--fingerprint`: the revision of the arguments a vote is pinned to (`help` says for which verb). */
function fingerprintOption(help: string): Option {
  return new Option('--fingerprint <hex>', help).argParser(fingerprintHex);
}

/** The call as the approver may see it now, and the revision the vote is pinned to (`--fingerprint`, else that one). */
async function readToDecide(
  callId: string,
  options: DecideOptions,
): Promise<{ client: ApprovalClient; read: Revision; pinned: string }> {
  const client = new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options));
  const shown = await client.get(callId);
  if (!shown) throw new CliError(`unknown call ID ${callId} (or it is not routed to you)`, ExitCode.NotFound);
  const read = currentRevision(shown);
  return { client, read, pinned: options.fingerprint ?? read.fingerprint };
}

/**
 * The revision the service recorded the vote on. The vote was pinned to `pinned`: the revision read (when that is the
 * one pinned) or the approver's own edit of it. A `--fingerprint` of another revision that the service still accepted
 * (the arguments were edited back to it meanwhile) is read again; undefined when even that does not say.
 */
async function decidedRevision(
  client: ApprovalClient,
  callId: string,
  read: Revision,
  pinned: string,
  editedArgs: Record<string, unknown> | undefined,
): Promise<{ revision: Revision; ownEdit: boolean } | undefined> {
  const expected = editedArgs ? fingerprint(read.toolName, editedArgs) : pinned;
  if (pinned === read.fingerprint) {
    if (expected === read.fingerprint) return { revision: read, ownEdit: false }; // no edit, or the same arguments
    const edit = { toolName: read.toolName, args: editedArgs!, fingerprint: expected, rev: read.rev + 1 };
    return { revision: edit, ownEdit: true };
  }
  const now = await client.get(callId);
  const revision = now && currentRevision(now);
  return revision?.fingerprint === expected ? { revision, ownEdit: false } : undefined;
}

/** What became of the vote, in one line (the lines after it say which revision it was on). */
function outcomeLine(result: DecisionResult): string {
  const { route } = result;
  const moved = route
    ? `your edit routed it anew to ${route.groups.join(', ')}${route.quorum > 1 ? ` (needs ${route.quorum} approvers)` : ''}`
    : '';
  if (result.status === 'rerouted')
    return `not approved: ${moved}, and you are not one of them, so your approval does not count; they are asked now`;
  if (result.status === 'vote_recorded')
    return `vote recorded (${result.approvals}/${result.quorum} approvals)${moved ? `; ${moved}` : ''}; waiting for another approver`;
  const how = { approve: 'approved', deny: 'denied', respond: 'responded' }[result.decision ?? 'deny'];
  const told =
    result.decision === 'respond' ? '; the call does not run, the agent is given your response' : '';
  return `${how} by ${result.approvers?.join(', ')}${told}`;
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

/** The response as the service takes it (trimmed, 1 to 4,000 characters), refused here with the same words. */
function responseText(text: string): string {
  const parsed = ResponseTextSchema.safeParse(text);
  if (!parsed.success) throw new InvalidArgumentError(`the response ${parsed.error.issues[0].message}`);
  return parsed.data;
}

function fingerprintHex(text: string): string {
  if (!/^[0-9a-f]{64}$/.test(text))
    throw new InvalidArgumentError('must be a fingerprint: 64 lowercase hex digits (see `approvals list`)');
  return text;
}
