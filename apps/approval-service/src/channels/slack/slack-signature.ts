// Slack request signing: X-Slack-Signature = "v0=" + hex HMAC-SHA256(signing secret, "v0:<timestamp>:<raw body>").
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Requests older (or newer) than this are refused, so a captured request cannot be replayed later. */
export const SLACK_TIMESTAMP_WINDOW_SECONDS = 5 * 60;

export type SlackSignatureCheck =
  { ok: true } | { ok: false; reason: 'missing_signature' | 'stale_timestamp' | 'bad_signature' };

export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`, 'utf8').digest('hex')}`;
}

export function verifySlackSignature(input: {
  signingSecret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  rawBody: string;
  nowSeconds?: number;
}): SlackSignatureCheck {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) return { ok: false, reason: 'missing_signature' };
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > SLACK_TIMESTAMP_WINDOW_SECONDS) {
    return { ok: false, reason: 'stale_timestamp' };
  }
  const expected = Buffer.from(slackSignature(input.signingSecret, timestamp, input.rawBody), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'bad_signature' };
  return { ok: true };
}
