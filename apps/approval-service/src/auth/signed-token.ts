// Compact HMAC-signed tokens: base64url(JSON payload) "." base64url(HMAC-SHA256). Used for email links
// (bound to one approver, one call and its attempt, expiring with the request) and inbox session cookies.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';

export type TokenCheck<T> =
  /** `id`: the decoded MAC (hex), the same for one token however it is spelled; what single use is keyed on. */
  { ok: true; payload: T; id: string } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

/** One spelling per token: unpadded base64url whose decoding encodes back to the same text. */
function isCanonicalBase64Url(text: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(text) && Buffer.from(text, 'base64url').toString('base64url') === text;
}

export function signToken(
  payload: { exp: number } & Record<string, unknown>,
  secret: string,
  purpose: string,
): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(purpose, body, secret)}`;
}

/**
 * Verifies the signature in constant time, then the payload's shape and its `exp` (ms since epoch).
 * `purpose` separates token kinds: an inbox cookie is never accepted as an email link.
 */
export function verifyToken<S extends z.ZodType<{ exp: number }>>(
  token: string,
  secret: string,
  purpose: string,
  schema: S,
  now = Date.now(),
): TokenCheck<z.output<S>> {
  const parts = token.split('.');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return { ok: false, reason: 'malformed' };
  const [body, given] = parts;
  // Node's base64url decoder skips characters it does not know and ignores stray trailing bits, so several texts
  // decode to one MAC: only the spelling this service writes is accepted.
  if (!isCanonicalBase64Url(body) || !isCanonicalBase64Url(given)) return { ok: false, reason: 'malformed' };
  const expected = Buffer.from(mac(purpose, body, secret), 'base64url');
  const actual = Buffer.from(given, 'base64url');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected))
    return { ok: false, reason: 'bad_signature' };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: 'malformed' };
  if (parsed.data.exp <= now) return { ok: false, reason: 'expired' };
  return { ok: true, payload: parsed.data, id: actual.toString('hex') };
}

function mac(purpose: string, body: string, secret: string): string {
  return createHmac('sha256', secret).update(`${purpose}.${body}`, 'utf8').digest('base64url');
}
