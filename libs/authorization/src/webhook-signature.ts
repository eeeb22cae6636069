// Webhook signatures, in Slack's scheme: an HMAC over a version, the send time and the exact body bytes, so the
// receiver checks the bytes it got (no re-serialisation) and refuses old or replayed deliveries by the timestamp.
import { createHmac, timingSafeEqual } from 'node:crypto';

const VERSION = 'v1';

/** `v1=` + hex HMAC-SHA256(secret, `v1:<timestamp>:<body>`); `timestamp` in whole seconds since the epoch. */
export function webhookSignature(secret: string, timestamp: string, body: string | Buffer): string {
  const mac = createHmac('sha256', secret).update(`${VERSION}:${timestamp}:`).update(body).digest('hex');
  return `${VERSION}=${mac}`;
}

export interface WebhookCheck {
  /** The signing secret (`GET /external-approvals/webhook-secret`). */
  secret: string;
  /** The raw request body, exactly as received. */
  body: string | Buffer;
  /** The `X-Countersign-Request-Timestamp` header. */
  timestamp: string | undefined;
  /** The `X-Countersign-Signature` header. */
  signature: string | undefined;
  /**
   * How far the timestamp may be from `now`, in seconds.
   * @defaultValue 300
   */
  toleranceSeconds?: number;
  /**
   * Now, in ms since the epoch.
   * @defaultValue Date.now()
   */
  now?: number;
}

export type WebhookVerification = { ok: true } | { ok: false; reason: string };

/** Checks a webhook delivery: the signature over the exact body, and a timestamp within the tolerance. */
export function verifyWebhookSignature(check: WebhookCheck): WebhookVerification {
  const { secret, body, timestamp, signature } = check;
  if (!timestamp || !/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: 'missing or malformed timestamp' };
  if (!signature || !/^v1=[0-9a-f]{64}$/.test(signature))
    return { ok: false, reason: 'missing or malformed signature' };
  const skew = Math.abs((check.now ?? Date.now()) / 1000 - Number(timestamp));
  if (skew > (check.toleranceSeconds ?? 300)) return { ok: false, reason: 'timestamp outside the tolerance' };
  const expected = Buffer.from(webhookSignature(secret, timestamp, body));
  if (!timingSafeEqual(expected, Buffer.from(signature))) return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}
