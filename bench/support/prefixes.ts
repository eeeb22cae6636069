// Key and queue prefixes of the phases that share one Redis: Countersign's, and one of the same length for each floor
// and peer. Every phase uses the product's queue names, job names and job IDs, so apart from what it does, the only
// thing that tells its keys apart is the prefix — and prefixes of one length make key names weigh the same bytes.
import { uniquePrefixes, type TestPrefixes } from '../../test/support/redis';

/** The production prefixes, on a redis-server nobody else uses. */
export const PRODUCTION_PREFIXES: TestPrefixes = { keyPrefix: 'countersign', queuePrefix: '{countersign}' };

/**
 * A phase's own prefixes beside `main`, exactly as long: on a private server, `tag` padded (or cut) to the length of
 * `main`'s key prefix (`bare-------`); on a shared one, a fresh test prefix (as long as every test prefix of the label,
 * and deleted by its pattern at the end).
 */
export function siblingPrefixes(main: TestPrefixes, tag: string, shared: boolean): TestPrefixes {
  if (shared) return uniquePrefixes('bench');
  const length = main.keyPrefix.length;
  const name = tag.padEnd(length, '-').slice(0, length);
  return { keyPrefix: name, queuePrefix: `{${name}}` };
}
