// The inbox's sign-in: one-time sign-in links and the session they (or a token in the sign-in form) start, and signing
// out. Signing in never puts a long-lived token in an address: the sign-in form posts the token in its body, or a
// one-time sign-in link (POST /inbox/sign-in-links, `npx countersign inbox-link`) carries a code that works once, for
// minutes, and only through a POST. The session endpoint refuses cross-site posts (Origin, Sec-Fetch-Site) and wants
// the CSRF token of its own sign-in page (sign-in-form.ts), so another site cannot swap a signed-in approver's session
// for someone else's. Only approvers and rule-writers are signed in (ApproverAuth.inboxRefusal), by token or by link;
// a link's page says whose it is before its button signs in.
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
import { ApproverAuth, endSession } from '../../auth/approver-auth';
import { ApproverDirectory } from '../../auth/approver-directory';
import { SignInCodes } from '../../auth/sign-in-codes';
import { ApprovalRoute } from '../../config/rate-limits';
import { sendPage } from '../../core/html';
import type { HttpRequest as Request, HttpResponse as Response } from '../../core/http-types';
import { ServiceAddress } from '../../core/service-address';
import { linkSignInPage } from './inbox-page';
import { assertSameSite, newCsrf, showSignIn } from './sign-in-form';

const SPENT_LINK = 'That sign-in link was used already or has expired; ask for a new one.';

@Controller('inbox')
export class InboxSignInController {
  constructor(
    private readonly auth: ApproverAuth,
    private readonly authenticator: Authenticator,
    private readonly directory: ApproverDirectory,
    private readonly codes: SignInCodes,
    private readonly address: ServiceAddress,
  ) {}

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
    if (!code) return showSignIn(res, 400, 'This link has no code.');
    const id = await this.codes.whose(code);
    const principal = id ? this.directory.byId(id) : undefined;
    if (!principal) return showSignIn(res, 410, SPENT_LINK);
    const refusal = this.auth.inboxRefusal(principal);
    if (refusal) return showSignIn(res, 403, refusal);
    sendPage(res, 200, linkSignInPage(code, newCsrf(res), principal));
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
    assertSameSite(req, form.csrf, this.address.publicUrl);
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
    if (!principal) return showSignIn(res, 401, problem);
    const refusal = this.auth.inboxRefusal(principal);
    if (refusal) return showSignIn(res, 403, refusal);
    this.auth.startSession(res, principal, req.secure);
    res.redirect(303, '/inbox');
  }

  /** The inbox's Sign out button (a session cookie with the X-Countersign-Inbox header, like every change). */
  @Post('sign-out')
  @HttpCode(204)
  signOut(@Req() req: Request, @Res({ passthrough: true }) res: Response): void {
    endSession(res, req.secure);
  }
}
