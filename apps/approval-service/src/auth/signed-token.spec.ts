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
      id: Buffer.from(token.split('.')[1], 'base64url').toString('hex'),
    });
  });

  // Node's base64url decoder ignores characters outside the alphabet and stray trailing bits: each of these decodes
  // to the same payload and MAC as the real token, so single use keyed on the text would let it be used again.
  it.each([
    ['a character the decoder skips', (t: string) => t.replace('.', '.=')],
    ['padding', (t: string) => `${t}=`],
    ['a standard-base64 character', (t: string) => `${t.slice(0, -1)}+`],
    ['other trailing bits', (t: string) => otherTrailingBits(t)],
  ])('refuses another spelling of a valid token (%s)', (_what, respell) => {
    const spelled = respell(token);
    expect(spelled).not.toBe(token);
    expect(verifyToken(spelled, secret, 'email', Schema, now)).toEqual({ ok: false, reason: 'malformed' });
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

/** The token with the last base64url character changed in bits that decoding drops (a 32-byte MAC: 4 spare bits). */
function otherTrailingBits(t: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(t.at(-1)!);
  const respelled = t.slice(0, -1) + alphabet[last ^ 1];
  // Same bytes, other text: what a lenient verifier would have accepted as the same token.
  expect(Buffer.from(respelled.split('.')[1], 'base64url')).toEqual(
    Buffer.from(t.split('.')[1], 'base64url'),
  );
  return respelled;
}
