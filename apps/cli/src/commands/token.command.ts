// `countersign token new|hash`: make an API token and the hash PRINCIPALS_CONFIG stores (the token itself is never stored).
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { tokenSha256 } from '@countersign/contracts';

export function tokenCommand(): Command {
  const token = new Command('token').description('API tokens for PRINCIPALS_CONFIG');
  token
    .command('new')
    .description('Print a new random token and the SHA-256 to put in a principal\'s "tokens"')
    .action(() => {
      const value = `cs_${randomBytes(32).toString('base64url')}`;
      process.stdout.write(`token:  ${value}\nsha256: ${tokenSha256(value)}\n`);
    });
  token
    .command('hash')
    .description('Print the SHA-256 of a token, as PRINCIPALS_CONFIG stores it')
    .argument('<token>', 'the token')
    .action((value: string) => {
      process.stdout.write(`${tokenSha256(value)}\n`);
    });
  return token;
}
