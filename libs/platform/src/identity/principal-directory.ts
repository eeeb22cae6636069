// Who the principals are and which credential names which: bearer tokens by their SHA-256, Slack users, OIDC subjects.
import { tokenSha256 } from '@countersign/contracts';
import { oidcSubjectOf, type Principal, type PrincipalsConfig, type ServiceRole } from './principals.schema';

export type TokenLookup = { ok: true; principal: Principal } | { ok: false; reason: 'unknown' | 'expired' };
/** `machine`: the subject is the ID of a machine principal whose config does not let OIDC reach it. */
export type SubjectLookup = { ok: true; principal: Principal } | { ok: false; reason: 'unknown' | 'machine' };

export class PrincipalDirectory {
  private readonly byId = new Map<string, Principal>();
  private readonly byTokenHash = new Map<string, { principal: Principal; expiresAt?: number }>();
  private readonly bySlack = new Map<string, Principal>();
  private readonly bySubject = new Map<string, Principal>();

  constructor(readonly config: PrincipalsConfig) {
    for (const principal of config.principals) {
      this.byId.set(principal.id, principal);
      if (principal.slackUserId) this.bySlack.set(principal.slackUserId, principal);
      const subject = oidcSubjectOf(principal);
      if (subject !== undefined) this.bySubject.set(subject, principal);
      for (const token of principal.tokens)
        this.byTokenHash.set(token.sha256, {
          principal,
          expiresAt: token.expiresAt ? Date.parse(token.expiresAt) : undefined,
        });
    }
  }

  /**
   * The principal a bearer token belongs to. Looked up by the token's SHA-256: the hash of a guess says nothing about
   * the stored hashes, so a map lookup leaks nothing a constant-time compare would protect.
   */
  byToken(token: string, now = Date.now()): TokenLookup {
    const found = this.byTokenHash.get(tokenSha256(token));
    if (!found) return { ok: false, reason: 'unknown' };
    if (found.expiresAt !== undefined && found.expiresAt <= now) return { ok: false, reason: 'expired' };
    return { ok: true, principal: found.principal };
  }

  get(id: string): Principal | undefined {
    return this.byId.get(id);
  }

  bySlackUser(slackUserId: string): Principal | undefined {
    return this.bySlack.get(slackUserId);
  }

  /** The principal an OIDC subject signs in as (see oidcSubjectOf: machines only through their own oidcSubject). */
  byOidcSubject(subject: string): SubjectLookup {
    const principal = this.bySubject.get(subject);
    if (principal) return { ok: true, principal };
    if (this.byId.get(subject)?.kind === 'machine') return { ok: false, reason: 'machine' };
    return { ok: false, reason: 'unknown' };
  }

  all(): readonly Principal[] {
    return this.config.principals;
  }
}

export function hasRole(principal: Principal, role: ServiceRole): boolean {
  return principal.roles.includes(role);
}

/** Whether `client` may start runs in `userId`'s name (an explicit `actAs` entry; a principal always acts for itself). */
export function mayActFor(client: Principal, userId: string): boolean {
  return client.id === userId || client.actAs.includes('*') || client.actAs.includes(userId);
}
