// Receiving the approval service's webhooks: check the signature over the exact body, then read the decision.
import {
  verifyWebhookSignature,
  type WebhookVerification,
} from '@countersign/authorization/webhook-signature';
import {
  WEBHOOK_HEADERS,
  WebhookPayloadSchema,
  type WebhookPayload,
} from '@countersign/contracts/external-approvals.schema';
import { CountersignError } from './errors';

export { verifyWebhookSignature, WEBHOOK_HEADERS, type WebhookPayload, type WebhookVerification };

export interface WebhookDelivery {
  /** The client's signing secret (`client.webhookSecret()`). */
  secret: string;
  /** The raw request body, exactly as received (not re-serialised JSON). */
  body: string | Buffer;
  /** The request headers: Node's `req.headers`, or a fetch `Headers`. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** @defaultValue 300 */
  toleranceSeconds?: number;
  /** In ms since the epoch. @defaultValue Date.now() */
  now?: number;
}

/**
 * The decision a webhook delivers, once its signature and timestamp are checked; throws CountersignError otherwise.
 * A webhook only says "look": run nothing on its word, claim the call first (guard does).
 */
export function verifyWebhook(delivery: WebhookDelivery): WebhookPayload {
  const header = (name: string) => {
    const { headers } = delivery;
    const value = headers instanceof Headers ? (headers.get(name) ?? undefined) : headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const check = verifyWebhookSignature({
    secret: delivery.secret,
    body: delivery.body,
    timestamp: header(WEBHOOK_HEADERS.timestamp),
    signature: header(WEBHOOK_HEADERS.signature),
    toleranceSeconds: delivery.toleranceSeconds,
    now: delivery.now,
  });
  if (!check.ok) throw new CountersignError(`webhook refused: ${check.reason}`);
  const parsed = WebhookPayloadSchema.safeParse(JSON.parse(delivery.body.toString()));
  if (!parsed.success) throw new CountersignError('webhook refused: not an approval decision');
  return parsed.data;
}
