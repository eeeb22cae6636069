import { z } from 'zod';
import { signToken, verifyToken } from './signed-token';

const secret = 'link-secret-0123456789';
const Schema = z.object({ c: z.string(), p: z.string(), exp: z.number() });
const now = 1_700_000_000_000;
const token = signToken({ c: 'call-1', p: 'bob', exp: now + 60_000 }, secret, 'email');

describe('signed tokens', () => {
  it('accepts a token it signed, before it expires', () => {
    expect(verifyToken(token, secret, 'email', Schema, now)).toEqual({
      ok: true,
      payload: { c: 'call-1', p: 'bob', exp: now + 60_000 },
    });
  });

  it('refuses an expired token', () => {
    expect(verifyToken(token, secret, 'email', Schema, now + 60_000)).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuses a token whose payload was changed (another approver)', () => {
    const [, sig] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ c: 'call-1', p: 'carol', exp: now + 60_000 })).toString('base64url')}.${sig}`;
    expect(verifyToken(forged, secret, 'email', Schema, now)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it.each([
    ['another secret', 'other-secret-0123456789', 'email'],
    ['another purpose', secret, 'inbox'],
  ])('refuses a token checked with %s', (_what, key, purpose) => {
    expect(verifyToken(token, key, purpose, Schema, now)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it.each(['', 'abc', 'a.b.c', '.x'])('refuses the malformed token %p', (text) => {
    expect(verifyToken(text, secret, 'email', Schema, now).ok).toBe(false);
  });
});
