// Validates OIDC/JWT bearer tokens against the issuer's JWKS (jose): signature, issuer, audience, expiry, and a lifetime
// no longer than the config's maximum (a token must expire). The claim named in the config must name a principal of the
// directory; an unknown subject is refused, never created.
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from './principals.schema';

export type OidcCheck = { ok: true; subject: string } | { ok: false; reason: string };

/** Three base64url parts: what a JWT looks like (API tokens are opaque and never contain two dots). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

export class OidcVerifier {
  private readonly keys: JWTVerifyGetKey;

  constructor(
    private readonly config: OidcConfig,
    keys?: JWTVerifyGetKey,
  ) {
    // Keys are fetched on first use and cached; an unknown `kid` refetches (at most every 30 s), so a key rotation at
    // the issuer is picked up without a restart.
    this.keys = keys ?? createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 5_000 });
  }

  async verify(token: string): Promise<OidcCheck> {
    try {
      const { payload } = await jwtVerify(token, this.keys, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: this.config.algorithms,
      });
      const lifetime = this.lifetimeProblem(payload);
      if (lifetime) return { ok: false, reason: lifetime };
      const subject = payload[this.config.claim];
      if (typeof subject !== 'string' || subject === '')
        return { ok: false, reason: `the token has no "${this.config.claim}" claim` };
      return { ok: true, subject };
    } catch (error) {
      return { ok: false, reason: describe(error) };
    }
  }

  /**
   * A token must expire, and within the maximum: `exp` − `iat`, or `exp` − now when `iat` is absent or later than now
   * (an `iat` in the future must not make a long-lived token look short). jwtVerify already refused an expired one.
   */
  private lifetimeProblem(payload: JWTPayload, now = Date.now() / 1000): string | undefined {
    if (payload.exp === undefined)
      return 'the token has no "exp" claim: a token that never expires is not accepted';
    const from = Math.min(payload.iat ?? now, now);
    const seconds = Math.ceil(payload.exp - from);
    const max = Math.floor(this.config.maxTokenLifetime / 1000);
    return seconds > max
      ? `the token is valid for ${seconds} s, longer than oidc.maxTokenLifetime allows (${max} s)`
      : undefined;
  }
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed)
    return `the token's "${error.claim}" claim is not accepted`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token signature is not valid';
  if (error instanceof errors.JWKSNoMatchingKey) return 'the token was not signed by a key of the issuer';
  if (error instanceof errors.JOSEAlgNotAllowed)
    return 'the token uses a signing algorithm that is not accepted';
  if (error instanceof errors.JWKSTimeout) return "the issuer's keys could not be fetched in time";
  if (error instanceof errors.JOSEError) return `the token is not valid (${error.code})`;
  return 'the token is not valid';
}
