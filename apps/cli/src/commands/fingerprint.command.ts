// `countersign fingerprint <toolName> <argsJson>`: the same fingerprint the worker and approval service
// compute, so any other system can check which call a decision is bound to.
import { Command } from 'commander';
import { fingerprint, printableReadableForm } from '@countersign/authorization';
import { ToolNameSchema } from '@countersign/contracts';

/** Exit code for input the command cannot fingerprint (bad tool name, invalid JSON, non-object arguments). */
export const INVALID_INPUT_EXIT_CODE = 2;

export function fingerprintCommand(): Command {
  return new Command('fingerprint')
    .description(
      'Print the fingerprint of a tool call: lowercase hex sha256(toolName + U+001F + RFC 8785 canonical JSON of args).',
    )
    .argument('<toolName>', 'the tool name, e.g. restart_service')
    .argument(
      '<argsJson>',
      'the arguments as a JSON object, as the tool’s schema parsed them (defaults filled in)',
    )
    .option('--readable', 'also print the readable form (toolName ␟ canonical JSON; ␟ stands for U+001F)')
    .addHelpText('after', `\nExample:\n  $ countersign fingerprint restart_service '{"service":"api"}'`)
    .action(function (this: Command, toolName: string, argsJson: string, options: { readable?: boolean }) {
      const fail = (message: string): never =>
        this.error(`error: ${message}`, {
          exitCode: INVALID_INPUT_EXIT_CODE,
          code: 'countersign.invalidInput',
        });

      const name = ToolNameSchema.safeParse(toolName);
      if (!name.success) fail(`toolName "${toolName}" ${name.error.issues[0]?.message ?? 'is invalid'}`);

      let args: unknown;
      try {
        args = JSON.parse(argsJson);
      } catch (error) {
        fail(`argsJson is not valid JSON: ${(error as Error).message}`);
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        fail(
          `argsJson must be a JSON object, got ${args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args}`,
        );
      }

      process.stdout.write(`${fingerprint(toolName, args)}\n`);
      if (options.readable) process.stdout.write(`${printableReadableForm(toolName, args)}\n`);
    });
}
