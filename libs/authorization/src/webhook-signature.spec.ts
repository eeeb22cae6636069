import { verifyWebhookSignature, webhookSignature } from './webhook-signature';

const secret = 'client-webhook-secret';
const body = '{"type":"approval.decided"}';
const now = 1_800_000_000_000;
const timestamp = String(now / 1000);
const signed = { secret, body, timestamp, signature: webhookSignature(secret, timestamp, body), now };

describe('webhook signatures', () => {
  it('accepts the signature over the exact body and timestamp', () => {
    expect(verifyWebhookSignature(signed)).toEqual({ ok: true });
    expect(verifyWebhookSignature({ ...signed, body: Buffer.from(body) })).toEqual({ ok: true });
  });

  it.each([
    ['another body', { body: body.replace('decided', 'decided ') }, 'signature mismatch'],
    ['another secret', { secret: 'someone-else' }, 'signature mismatch'],
    ['another timestamp', { timestamp: String(now / 1000 + 1) }, 'signature mismatch'],
    ['an old timestamp', { now: now + 301_000 }, 'timestamp outside the tolerance'],
    ['no signature', { signature: undefined }, 'missing or malformed signature'],
    [
      'a signature of another scheme',
      { signature: 'v0=' + 'a'.repeat(64) },
      'missing or malformed signature',
    ],
    ['no timestamp', { timestamp: undefined }, 'missing or malformed timestamp'],
  ])('refuses %s', (_what, change, reason) => {
    expect(verifyWebhookSignature({ ...signed, ...change })).toEqual({ ok: false, reason });
  });

  it('takes a wider tolerance when asked', () => {
    expect(verifyWebhookSignature({ ...signed, now: now + 301_000, toleranceSeconds: 600 }).ok).toBe(true);
  });
});
