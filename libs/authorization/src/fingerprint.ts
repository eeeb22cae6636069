// The fingerprint binds a decision to the exact call an approver saw.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** U+001F, the unit separator: it cannot appear in a tool name, so name and arguments never run together. */
export const FINGERPRINT_SEPARATOR = '\u001f';

/** RFC 8785 canonical JSON. Throws for values JSON cannot carry (undefined at the root, NaN, Infinity, cycles). */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/**
 * The readable form behind a fingerprint: `toolName`, U+001F, canonical JSON of the arguments.
 * Shown wherever a mismatch has to be diagnosed.
 */
export function readableForm(toolName: string, args: unknown): string {
  return toolName + FINGERPRINT_SEPARATOR + canonicalJson(args);
}

/** Lowercase hex `sha256(toolName + U+001F + canonicalJSON(args))`. */
export function fingerprint(toolName: string, args: unknown): string {
  return createHash('sha256').update(readableForm(toolName, args), 'utf8').digest('hex');
}

/** The readable form with the separator made visible, for logs and audit entries. */
export function printableReadableForm(toolName: string, args: unknown): string {
  return `${toolName} ␟ ${canonicalJson(args)}`;
}
