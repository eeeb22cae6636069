// `countersign rules list | add | revoke`: standing rules (a requester's calls of one tool approved by policy for a
// while). Adding and revoking need the rule-writer role.
import { Command, InvalidArgumentError } from 'commander';
import { ApprovalClient } from '../client/approval-client';
import { EXIT_CODES_HELP } from '../cli-error';
import { approvalUrlOption, legacyApproverTokenOption, tokenOf, tokenOption, trimUrl } from '../options';
import { ruleLine } from '../render';

interface Connection {
  approvalUrl: string;
  token?: string;
  approverToken?: string;
}

const client = (options: Connection) => new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options));

function withConnection(command: Command): Command {
  return command
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption());
}

export function rulesCommand(): Command {
  const rules = new Command('rules').description(
    'Standing rules: a requester’s calls of one tool approved by policy, without asking anyone, until they expire or are revoked',
  );
  withConnection(rules.command('list').description('List the standing rules in force'))
    .option('--json', 'print the raw JSON')
    .action(async (options: Connection & { json?: boolean }) => {
      const found = await client(options).rules();
      if (options.json) process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
      else if (found.length === 0) process.stdout.write('no standing rules\n');
      else for (const rule of found) process.stdout.write(`${ruleLine(rule)}\n`);
    });
  withConnection(
    rules
      .command('add')
      .description(
        'Accept a request’s trust suggestion (--from <callId>), or write a rule (--tool and --requester). ' +
          'Never for manual_only tools or your own calls; needs the rule-writer role.',
      ),
  )
    .option('--from <callId>', 'accept the trust suggestion of this request (its tool and requester)')
    .option('--tool <name>', 'the tool')
    .option('--requester <id>', 'whose calls it covers')
    .option(
      '--arg <path=glob>',
      'only calls whose argument matches, e.g. service=payments* (repeatable)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option('--expires-in <duration>', 'how long it decides, e.g. 12h or 30d (default 7d, at most 90d)')
    .option('--note <text>', 'why, for the other approvers')
    .addHelpText(
      'after',
      `\nExamples:\n  $ countersign rules add --from call-1234\n  $ countersign rules add --tool restart_service --requester alice --arg service=web --expires-in 1d\n${EXIT_CODES_HELP}`,
    )
    .action(
      async (
        options: Connection & {
          from?: string;
          tool?: string;
          requester?: string;
          arg?: string[];
          expiresIn?: string;
          note?: string;
        },
      ) => {
        const rule = await client(options).addRule({
          ...(options.from ? { fromCallId: options.from } : {}),
          ...(options.tool ? { tool: options.tool } : {}),
          ...(options.requester ? { requester: options.requester } : {}),
          ...(options.arg ? { args: argPatterns(options.arg) } : {}),
          ...(options.expiresIn ? { expiresIn: options.expiresIn } : {}),
          ...(options.note ? { note: options.note } : {}),
        });
        process.stdout.write(`${ruleLine(rule)}\n`);
      },
    );
  withConnection(
    rules
      .command('revoke')
      .description('Revoke a standing rule: from the next request on, a person decides again'),
  )
    .argument('<ruleId>', 'the rule’s ID (see `countersign rules list`)')
    .action(async (id: string, options: Connection) => {
      const rule = await client(options).revokeRule(id);
      process.stdout.write(`revoked ${ruleLine(rule)}\n`);
    });
  return rules;
}

function argPatterns(pairs: string[]): Record<string, string> {
  const patterns: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0)
      throw new InvalidArgumentError(`--arg ${pair}: write it as path=glob, e.g. service=payments*`);
    patterns[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return patterns;
}
