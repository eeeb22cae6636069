// The web inbox: sign-in, the page, its HTML fragment and its live-update stream.
//
// Signing in never puts a long-lived token in an address: the sign-in form posts the token in its body, or a one-time
// sign-in link (POST /inbox/sign-in-links, `npx countersign inbox-link`) carries a code that works once, for minutes,
// and only through a POST. The session endpoint refuses cross-site posts (Origin, Sec-Fetch-Site) and wants the CSRF
// token of its own sign-in page, so another site cannot swap a signed-in approver's session for someone else's.
// Only approvers and rule-writers are signed in (ApproverAuth.inboxRefusal), by token or by link; a link's page says
// whose it is before its button signs in, and every view names whose inbox it is, with a sign-out.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Body, Controller, ForbiddenException, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { InboxSignInFormSchema, type InboxSignInForm, type SignInLink } from '@countersign/contracts';
import {
  Authenticator,
  CurrentPrincipal,
  PublicRoute,
  RateLimited,
  ZodValidationPipe,
  type Principal,
} from '@countersign/platform';
import { ApproverAuth, endSession, readCookie } from '../../auth/approver-auth';
import { ApproverDirectory } from '../../auth/approver-directory';
import { SignInCodes } from '../../auth/sign-in-codes';
import { ApprovalRoute } from '../../config/rate-limits';
import { sendPage } from '../../core/html';
import type { HttpRequest as Request, HttpResponse as Response } from '../../core/http-types';
import { ServiceAddress } from '../../core/service-address';
import { ApprovalReadModel } from '../../requests/approval-read-model';
import type { StoredApproval } from '../../requests/approval-types';
import { LiveUpdates } from '../../requests/live-updates';
import { StandingRulesService } from '../../standing-rules/standing-rules.service';
import { maySee, routedTo } from '../../votes/deciders';
import { historyItems } from './history-page';
import {
  INBOX_NEWEST,
  INBOX_OLDEST,
  inboxItems,
  inboxPage,
  inboxView,
  linkSignInPage,
  signInPage,
  type InboxGap,
  type Waiting,
} from './inbox-page';
import { rulesItems } from './rules-page';

const HEARTBEAT_MS = 25_000;
const CSRF_COOKIE = 'countersign_csrf';
const CSRF_TTL_MS = 3_600_000;
const SPENT_LINK = 'That sign-in link was used already or has expired; ask for a new one.';

@Controller('inbox')
export class InboxController {
  constructor(
    private readonly readModel: ApprovalReadModel,
    private readonly auth: ApproverAuth,
    private readonly authenticator: Authenticator,
    private readonly directory: ApproverDirectory,
    private readonly live: LiveUpdates,
    private readonly codes: SignInCodes,
    private readonly address: ServiceAddress,
    private readonly rules: StandingRulesService,
  ) {}

  /** The inbox of the signed-in approver, or the sign-in page. */
  @Get()
  @PublicRoute('the inbox session cookie, checked here: without one the sign-in page is shown')
  async inbox(
    @Query('token') token: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (token !== undefined)
      return this.showSignIn(
        res,
        400,
        'Tokens in addresses are not accepted (they end up in browser history and server logs). Sign in below, ' +
          'or ask for a one-time sign-in link: npx countersign inbox-link',
      );
    const session = await this.auth.authenticateInbox(req);
    if (!session?.ok) return this.showSignIn(res, 401, session ? session.reason : undefined);
    const nonce = randomBytes(16).toString('base64');
    sendPage(res, 200, inboxPage(await this.waitingFor(session.principal), session.principal, nonce), nonce);
  }

  /** What was decided lately in the approver's groups (or by them): what ran and its result. */
  @Get('history')
  @PublicRoute('the inbox session cookie, checked here: without one, back to the sign-in page')
  async historyPage(@Req() req: Request, @Res() res: Response): Promise<void> {
    const me = await this.signedIn(req, res);
    if (!me) return;
    const nonce = randomBytes(16).toString('base64');
    sendPage(
      res,
      200,
      inboxView('history', me, nonce, '/inbox/history/items', await this.historyOf(me)),
      nonce,
    );
  }

  @Get('history/items')
  async historyFragment(@CurrentPrincipal() me: Principal, @Res() res: Response): Promise<void> {
    this.assertInboxUser(me);
    sendPage(res, 200, await this.historyOf(me));
  }

  /** The standing rules in force; rule-writers revoke them and write new ones here. */
  @Get('rules')
  @PublicRoute('the inbox session cookie, checked here: without one, back to the sign-in page')
  async rulesPage(@Req() req: Request, @Res() res: Response): Promise<void> {
    const me = await this.signedIn(req, res);
    if (!me) return;
    const nonce = randomBytes(16).toString('base64');
    sendPage(res, 200, inboxView('rules', me, nonce, '/inbox/rules/items', await this.rulesOf(me)), nonce);
  }

  @Get('rules/items')
  async rulesFragment(@CurrentPrincipal() me: Principal, @Res() res: Response): Promise<void> {
    this.assertInboxUser(me);
    sendPage(res, 200, await this.rulesOf(me));
  }

  /** A one-time link for the caller's browser: open it, press the button, and the inbox is signed in. */
  @Post('sign-in-links')
  @HttpCode(201)
  @RateLimited(ApprovalRoute.SignIn)
  async signInLink(@CurrentPrincipal() caller: Principal): Promise<SignInLink> {
    const refusal = this.auth.inboxRefusal(caller);
    if (refusal) throw new ForbiddenException(refusal);
    const { code, expiresAt } = await this.codes.issue(caller.id);
    return {
      url: `${this.address.publicUrl}/inbox/sign-in?code=${code}`,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  /**
   * Where a sign-in link lands: whose inbox it opens, and a button that posts the code (a link scanner's GET spends
   * nothing). A link that no longer works says so here.
   */
  @Get('sign-in')
  @PublicRoute('shows whose the one-time code is and a form; the code is spent only when the form is posted')
  async signInWithLink(@Query('code') code: string | undefined, @Res() res: Response): Promise<void> {
    if (!code) return this.showSignIn(res, 400, 'This link has no code.');
    const id = await this.codes.whose(code);
    const principal = id ? this.directory.byId(id) : undefined;
    if (!principal) return this.showSignIn(res, 410, SPENT_LINK);
    const refusal = this.auth.inboxRefusal(principal);
    if (refusal) return this.showSignIn(res, 403, refusal);
    sendPage(res, 200, linkSignInPage(code, this.newCsrf(res), principal));
  }

  @Post('session')
  @RateLimited(ApprovalRoute.SignIn)
  @PublicRoute(
    'checks its own credential (a token or a one-time code), and Origin, Sec-Fetch-Site and a CSRF token',
  )
  async session(
    @Body(new ZodValidationPipe(InboxSignInFormSchema, 'form')) form: InboxSignInForm,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    this.assertSameSite(req, form.csrf);
    let principal: Principal | undefined;
    let problem = SPENT_LINK;
    if (form.code !== undefined) {
      const id = await this.codes.redeem(form.code);
      principal = id ? this.directory.byId(id) : undefined;
    } else {
      const check = await this.authenticator.fromBearer(form.token!);
      if (check.ok) principal = check.principal;
      else problem = `That token was refused: ${check.reason}.`;
    }
    if (!principal) return this.showSignIn(res, 401, problem);
    const refusal = this.auth.inboxRefusal(principal);
    if (refusal) return this.showSignIn(res, 403, refusal);
    this.auth.startSession(res, principal, req.secure);
    res.redirect(303, '/inbox');
  }

  /** The inbox's Sign out button (a session cookie with the X-Countersign-Inbox header, like every change). */
  @Post('sign-out')
  @HttpCode(204)
  signOut(@Req() req: Request, @Res({ passthrough: true }) res: Response): void {
    endSession(res, req.secure);
  }

  @Get('items')
  async items(@CurrentPrincipal() me: Principal, @Res() res: Response): Promise<void> {
    this.assertInboxUser(me);
    sendPage(res, 200, inboxItems(await this.waitingFor(me), me));
  }

  /** Server-sent events: `change` whenever a request routed to the caller's groups arrives or is settled, on any replica. */
  @Get('events')
  events(@CurrentPrincipal() me: Principal, @Req() req: Request, @Res() res: Response): void {
    this.assertInboxUser(me);
    res.status(200).set({
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    res.write(': connected\n\n');
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const mine = this.directory.groupsOf(me.id);
    const close = this.live.subscribe(
      ({ requestId, callId, status, groups }) => {
        if (groups.some((g) => mine.includes(g)))
          res.write(`event: change\ndata: ${JSON.stringify({ requestId, callId, status })}\n\n`);
      },
      () => {
        clearInterval(heartbeat);
        res.end();
      },
    );
    req.on('close', close);
  }

  /** The inbox's fragments and live stream, like its pages, are for approvers and rule-writers only. */
  private assertInboxUser(me: Principal): void {
    const refusal = this.auth.inboxRefusal(me);
    if (refusal) throw new ForbiddenException(refusal);
  }

  /** The signed-in approver, or undefined after redirecting the browser to the sign-in page. */
  private async signedIn(req: Request, res: Response): Promise<Principal | undefined> {
    const session = await this.auth.authenticateInbox(req);
    if (session?.ok) return session.principal;
    res.redirect(303, '/inbox');
    return undefined;
  }

  private async historyOf(me: Principal): Promise<string> {
    const caller = { id: me.id, groups: this.directory.groupsOf(me.id) };
    return historyItems(await this.readModel.history((a) => maySee(caller, a)));
  }

  private async rulesOf(me: Principal): Promise<string> {
    if (!this.rules.maySee(me))
      return '<p class="muted">Only approvers and rule-writers see the standing rules.</p>';
    return rulesItems(await this.rules.list(), me);
  }

  private showSignIn(res: Response, status: number, problem?: string): void {
    sendPage(res, status, signInPage(this.newCsrf(res), problem));
  }

  /** A fresh CSRF token: in an HttpOnly, SameSite=Strict cookie, and in the form the page carries (double submit). */
  private newCsrf(res: Response): string {
    const csrf = randomBytes(24).toString('base64url');
    res.cookie(CSRF_COOKIE, csrf, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/inbox',
      maxAge: CSRF_TTL_MS,
    });
    return csrf;
  }

  /**
   * A browser says where a post comes from (Origin, Sec-Fetch-Site): anything but this service is refused. A client
   * that says nothing must still show the CSRF token of a sign-in page this service gave it.
   */
  private assertSameSite(req: Request, csrf: string): void {
    const site = header(req, 'sec-fetch-site');
    if (site !== undefined && site !== 'same-origin')
      throw new ForbiddenException(`sign-in refused: a ${site} request may not sign anyone in`);
    const origin = header(req, 'origin');
    if (origin !== undefined && !this.ownOrigins(req).includes(origin))
      throw new ForbiddenException(`sign-in refused: origin ${origin} is not this service`);
    const cookie = readCookie(req, CSRF_COOKIE);
    if (!cookie || !sameText(cookie, csrf))
      throw new ForbiddenException(
        'sign-in refused: the form is not one this service gave out (reload the page)',
      );
  }

  private ownOrigins(req: Request): string[] {
    const origins = [new URL(this.address.publicUrl).origin];
    const host = header(req, 'host');
    if (host) origins.push(`${req.secure ? 'https' : 'http'}://${host}`);
    return origins;
  }

  private async waitingFor(me: Principal): Promise<Waiting> {
    const mine = this.directory.groupsOf(me.id);
    const [pending, notices] = await Promise.all([this.read('pending'), this.read('notice')]);
    const approvals = [...pending.approvals, ...notices.approvals]
      .filter((a) => routedTo(mine, a))
      .sort((a, b) => a.createdAt - b.createdAt || a.request.callId.localeCompare(b.request.callId));
    await this.readModel.describe(approvals);
    const gaps = [pending.gap, notices.gap].filter((g): g is InboxGap => g !== undefined);
    return { approvals, gaps, groups: mine };
  }

  /**
   * A whole list when it holds at most INBOX_OLDEST + INBOX_NEWEST entries; else its oldest and its newest, and what
   * lies between (one ZCARD). The list may change between the reads: an entry read twice is shown once.
   */
  private async read(status: 'pending' | 'notice'): Promise<{ approvals: StoredApproval[]; gap?: InboxGap }> {
    const page = await this.readModel.list({ statuses: [status], limit: INBOX_OLDEST + INBOX_NEWEST });
    if (!page.next) return { approvals: page.approvals };
    const oldest = page.approvals.slice(0, INBOX_OLDEST);
    const [newest, total] = await Promise.all([
      this.readModel.newest(status, INBOX_NEWEST),
      this.readModel.count(status),
    ]);
    const seen = new Set(oldest.map((a) => a.request.requestId));
    const approvals = [...oldest, ...newest.filter((a) => !seen.has(a.request.requestId))];
    const after = oldest.at(-1)?.createdAt ?? 0;
    return { approvals, gap: { status, total, hidden: Math.max(0, total - approvals.length), after } };
  }
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
