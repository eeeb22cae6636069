// Email-link tokens: HMAC-signed, bound to one approver and one request, expiring with the request.
// Single use is enforced when the vote is recorded (the record-vote script marks the token spent).
import { z } from 'zod';
import { signToken, verifyToken, type TokenCheck } from '../../auth/signed-token';

const PURPOSE = 'email-link';

/**
 * `r` the request the vote is for; `c` its call ID (shown, and what the link was for before requests had IDs); `v` the
 * revision of the arguments the email showed (an approver edited them), left out for 0, as before edits.
 */
const LinkSchema = z.object({
  r: z.string(),
  c: z.string(),
  n: z.number().int().min(0),
  p: z.string(),
  exp: z.number(),
  v: z.number().int().min(1).optional(),
});
export type LinkClaims = {
  requestId: string;
  callId: string;
  attempt: number;
  approver: string;
  expiresAt: number;
  rev?: number;
};

export function signLinkToken(claims: LinkClaims, secret: string): string {
  return signToken(
    {
      r: claims.requestId,
      c: claims.callId,
      n: claims.attempt,
      p: claims.approver,
      exp: claims.expiresAt,
      ...(claims.rev ? { v: claims.rev } : {}),
    },
    secret,
    PURPOSE,
  );
}

export function verifyLinkToken(token: string, secret: string, now = Date.now()): TokenCheck<LinkClaims> {
  const check = verifyToken(token, secret, PURPOSE, LinkSchema, now);
  if (!check.ok) return check;
  const { r, c, n, p, exp, v } = check.payload;
  return {
    ok: true,
    payload: { requestId: r, callId: c, attempt: n, approver: p, expiresAt: exp, rev: v ?? 0 },
    id: check.id,
  };
}
