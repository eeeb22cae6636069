// How PRINCIPALS_CONFIG stores a bearer token: never the token, only this hash (the CLI's `token hash` prints it).
import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of a token's UTF-8 bytes. */
export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
