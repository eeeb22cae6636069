// Approver authentication. The REST API takes `Authorization: Bearer <apiToken>`. The browser inbox signs
// in once (token → HttpOnly, SameSite=Strict session cookie) and its own fetch/SSE calls use that cookie;
// a state-changing call by cookie must also carry the X-Countersign-Inbox header, which a cross-site form
// cannot send (defence in depth on top of SameSite=Strict).
import {
  createParamDecorator,
  Inject,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { HttpRequest as Request, HttpResponse as Response } from '../http-types';
import { z } from 'zod';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { Approver } from '../config/approvals-config.schema';
import { ApproverDirectory } from './approver-directory';
import { signToken, verifyToken } from './signed-token';

export const SESSION_COOKIE = 'countersign_inbox';
export const INBOX_HEADER = 'x-countersign-inbox';
const SESSION_PURPOSE = 'inbox-session';
const SESSION_TTL_MS = 12 * 3_600_000;
const SessionSchema = z.object({ a: z.string(), exp: z.number() });

type ApproverRequest = Request & { approver?: Approver };

@Injectable()
export class ApproverAuth {
  private readonly secret: string;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    private readonly directory: ApproverDirectory,
  ) {
    this.secret = env.LINK_TOKEN_SECRET;
  }

  /** The approver a request comes from, or undefined. */
  identify(req: Request): Approver | undefined {
    const header = req.headers.authorization;
    if (header?.startsWith('Bearer ')) return this.directory.byToken(header.slice('Bearer '.length).trim());
    const cookie = readCookie(req, SESSION_COOKIE);
    if (!cookie) return undefined;
    const check = verifyToken(cookie, this.secret, SESSION_PURPOSE, SessionSchema);
    if (!check.ok) return undefined;
    const stateChanging = !['GET', 'HEAD', 'OPTIONS'].includes(req.method);
    if (stateChanging && req.headers[INBOX_HEADER] !== '1') return undefined;
    return this.directory.byId(check.payload.a);
  }

  /** Signs the browser in: sets the session cookie (not readable by scripts, never sent cross-site). */
  startSession(res: Response, approver: Approver, secure: boolean): void {
    const token = signToken(
      { a: approver.id, exp: Date.now() + SESSION_TTL_MS },
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

function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

/** Lets a route through only for a known approver; the approver is then available as @CurrentApprover(). */
@Injectable()
export class ApproverGuard implements CanActivate {
  constructor(private readonly auth: ApproverAuth) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<ApproverRequest>();
    const approver = this.auth.identify(req);
    if (!approver)
      throw new UnauthorizedException('an approver token is required (Authorization: Bearer <token>)');
    req.approver = approver;
    return true;
  }
}

export const CurrentApprover = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Approver =>
    context.switchToHttp().getRequest<ApproverRequest>().approver!,
);
