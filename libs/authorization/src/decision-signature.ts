// HMAC signatures on decisions crossing the queue: the approval service signs, the worker verifies.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from './fingerprint';

/** Signs every field of `payload` (canonical JSON, so field order does not matter). */
export function signPayload(payload: Record<string, unknown>, secret: string): string {
  const { signature: _ignored, ...fields } = payload;
  return createHmac('sha256', secret).update(canonicalJson(fields), 'utf8').digest('hex');
}

export function withSignature<T extends Record<string, unknown>>(
  payload: T,
  secret: string,
): T & { signature: string } {
  return { ...payload, signature: signPayload(payload, secret) };
}

/** Constant-time check of `payload.signature` against the fields it carries. */
export function verifyPayloadSignature(payload: Record<string, unknown>, secret: string): boolean {
  const given = payload.signature;
  if (typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) return false;
  const expected = Buffer.from(signPayload(payload, secret), 'hex');
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}
