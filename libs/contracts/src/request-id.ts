// Approval request IDs: random, so no two requests share one, however the models that choose call IDs behave.
import { randomBytes } from 'node:crypto';

/**
 * A new request ID: `r` and 96 random bits in base64url (17 characters of IdSchema). The letter keeps it from ever
 * being all digits, which BullMQ refuses as a custom job ID (a request's job ID is its request ID).
 */
export function newRequestId(): string {
  return `r${randomBytes(12).toString('base64url')}`;
}
