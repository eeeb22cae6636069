// How the approval service names a caller. The REST API, the CLI and machine clients send `Authorization: Bearer
// <token>` (an API token or an OIDC JWT, see PRINCIPALS_CONFIG). The browser inbox signs in once and then uses an
// HttpOnly, SameSite=Strict session cookie; a state-changing call by cookie must also carry the X-Countersign-Inbox
// header, which a cross-site form cannot send (defence in depth on top of SameSite=Strict). The inbox is for approvers
// and rule-writers only (ApproverDirectory.isApproverOrRuleWriter): nobody else gets a session, and a session of
// someone who is not one any more is refused.
import { Inject, Injectable } from '@nestjs/common';
import {
  Authenticator,
  type Authentication,
  type AuthRequest,
  type Principal,
  type RequestAuthenticator,
} from '@countersign/platform';
import { z } from 'zod';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { HttpResponse as Response } from '../core/http-types';
import { ApproverDirectory } from './approver-directory';
import { signToken, verifyToken } from './signed-token';

export const SESSION_COOKIE = 'countersign_inbox';
export const INBOX_HEADER = 'x-countersign-inbox';
const SESSION_PURPOSE = 'inbox-session';
const SESSION_TTL_MS = 12 * 3_600_000;
const SessionSchema = z.object({ a: z.string(), exp: z.number() });

@Injectable()
export class ApproverAuth implements RequestAuthenticator {
  private readonly secret: string;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    private readonly authenticator: Authenticator,
    private readonly directory: ApproverDirectory,
  ) {
    this.secret = env.LINK_TOKEN_SECRET;
  }

  /** A bearer credential wins; without one, the inbox session cookie. undefined: the request carries neither. */
  async authenticate(req: AuthRequest): Promise<Authentication | undefined> {
    const header = req.headers.authorization;
    const bearer = await this.authenticator.fromAuthorizationHeader(
      Array.isArray(header) ? header[0] : header,
    );
    if (bearer) return bearer;
    const cookie = readCookie(req, SESSION_COOKIE);
    if (!cookie) return undefined;
    const check = verifyToken(cookie, this.secret, SESSION_PURPOSE, SessionSchema);
    if (!check.ok) return { ok: false, reason: 'the inbox session is not valid any more: sign in again' };
    const stateChanging = !['GET', 'HEAD', 'OPTIONS'].includes(req.method);
    if (stateChanging && req.headers[INBOX_HEADER] !== '1')
      return { ok: false, reason: `a change by inbox session must carry the ${INBOX_HEADER} header` };
    const principal = this.authenticator.directory.get(check.payload.a);
    if (!principal) return { ok: false, reason: 'the inbox session names no known principal' };
    const refusal = this.inboxRefusal(principal);
    return refusal ? { ok: false, reason: refusal } : { ok: true, principal, via: 'session' };
  }

  /**
   * The caller of an inbox page or fragment: by session or bearer credential, and an approver or rule-writer; a
   * refusal (with why) for anyone else. undefined: the request carries no credential.
   */
  async authenticateInbox(req: AuthRequest): Promise<Authentication | undefined> {
    const found = await this.authenticate(req);
    const refusal = found?.ok ? this.inboxRefusal(found.principal) : undefined;
    return refusal ? { ok: false, reason: refusal } : found;
  }

  /** Why the inbox does not sign `principal` in, in words for the sign-in page; undefined when it does. */
  inboxRefusal(principal: Principal): string | undefined {
    if (this.directory.isApproverOrRuleWriter(principal)) return undefined;
    return (
      `${principal.name} (${principal.id}) is not an approver: the inbox is for members of an approver group and ` +
      `for rule-writers. Whoever keeps the approvals config (APPROVALS_CONFIG) can add ${principal.id} to a group.`
    );
  }

  /** Signs the browser in: sets the session cookie (not readable by scripts, never sent cross-site). */
  startSession(res: Response, principal: Principal, secure: boolean): void {
    const token = signToken(
      { a: principal.id, exp: Date.now() + SESSION_TTL_MS },
      this.secret,
      SESSION_PURPOSE,
    );
    res.cookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: '/',
      maxAge: SESSION_TTL_MS,
    });
  }
}

/** Signs the browser out: the session cookie is replaced by an empty one that has expired. */
export function endSession(res: Response, secure: boolean): void {
  res.cookie(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', secure, path: '/', maxAge: 0 });
}

export function readCookie(req: AuthRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  for (const part of (Array.isArray(header) ? header.join(';') : (header ?? '')).split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) {
      try {
        return decodeURIComponent(value.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
