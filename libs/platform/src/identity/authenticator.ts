// One way to turn an `Authorization: Bearer …` header into a principal, shared by both services: an API token (looked
// up by its SHA-256) or, when PRINCIPALS_CONFIG has an `oidc` section, a JWT of that issuer.
import { looksLikeJwt, OidcVerifier } from './oidc-verifier';
import { PrincipalDirectory } from './principal-directory';
import type { Principal, PrincipalsConfig } from './principals.schema';

export type Authentication =
  { ok: true; principal: Principal; via: 'token' | 'oidc' | 'session' } | { ok: false; reason: string };

export class Authenticator {
  readonly directory: PrincipalDirectory;
  private readonly oidc?: OidcVerifier;

  constructor(config: PrincipalsConfig, oidc?: OidcVerifier) {
    this.directory = new PrincipalDirectory(config);
    this.oidc = oidc ?? (config.oidc ? new OidcVerifier(config.oidc) : undefined);
  }

  /** undefined: the header carries no bearer credential at all. */
  async fromAuthorizationHeader(header: string | undefined): Promise<Authentication | undefined> {
    if (!header) return undefined;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return { ok: false, reason: 'the Authorization header must be "Bearer <token>"' };
    return this.fromBearer(match[1]);
  }

  async fromBearer(token: string): Promise<Authentication> {
    if (this.oidc && looksLikeJwt(token)) {
      const check = await this.oidc.verify(token);
      if (!check.ok) return { ok: false, reason: check.reason };
      const found = this.directory.byOidcSubject(check.subject);
      if (found.ok) return { ok: true, principal: found.principal, via: 'oidc' };
      return {
        ok: false,
        reason:
          found.reason === 'machine'
            ? `the token names machine principal "${check.subject}", which signs in through OIDC only with an oidcSubject of its own in PRINCIPALS_CONFIG`
            : 'the token names no known principal',
      };
    }
    const found = this.directory.byToken(token);
    if (found.ok) return { ok: true, principal: found.principal, via: 'token' };
    return {
      ok: false,
      reason: found.reason === 'expired' ? 'the token has expired' : 'the token is not valid',
    };
  }
}
