// `countersign inbox-link`: a one-time link that signs your browser in to the web inbox (no token in any address).
import { Command } from 'commander';
import { ApprovalClient } from '../client/approval-client';
import { EXIT_CODES_HELP } from '../cli-error';
import { approvalUrlOption, legacyApproverTokenOption, tokenOf, tokenOption, trimUrl } from '../options';

export function inboxLinkCommand(): Command {
  return new Command('inbox-link')
    .description('Print a one-time link (valid 5 minutes) that signs a browser in to your web inbox')
    .addOption(approvalUrlOption())
    .addOption(tokenOption())
    .addOption(legacyApproverTokenOption())
    .addHelpText(
      'after',
      `\nExample:\n  $ countersign inbox-link --token bob-demo-token-change-me\n${EXIT_CODES_HELP}`,
    )
    .action(async (options: { approvalUrl: string; token?: string; approverToken?: string }) => {
      const link = await new ApprovalClient(trimUrl(options.approvalUrl), tokenOf(options)).signInLink();
      process.stdout.write(`${link.url}\n`);
      process.stderr.write(`countersign: the link works once, until ${link.expiresAt}\n`);
    });
}
