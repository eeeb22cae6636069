// The web inbox: sign-in (token → session cookie), the page, its HTML fragment and its live-update stream.
import { randomBytes } from 'node:crypto';
import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import type { HttpRequest as Request, HttpResponse as Response } from '../http-types';
import { InboxSignInFormSchema } from '@countersign/contracts';
import { ZodValidationPipe } from '@countersign/platform';
import type { StoredApproval } from '../approvals/approval-store';
import { ApprovalsService } from '../approvals/approvals.service';
import { ApproverAuth } from '../auth/approver-auth';
import { ApproverDirectory } from '../auth/approver-directory';
import type { Approver } from '../config/approvals-config.schema';
import { sendPage } from '../html';
import { LiveUpdates } from '../live/live-updates';
import { INBOX_LIMIT, inboxItems, inboxPage, signInPage, type Waiting } from './inbox-page';

const HEARTBEAT_MS = 25_000;

@Controller('inbox')
export class InboxController {
  constructor(
    private readonly approvals: ApprovalsService,
    private readonly auth: ApproverAuth,
    private readonly directory: ApproverDirectory,
    private readonly live: LiveUpdates,
  ) {}

  /** `/inbox?token=<apiToken>` signs in and redirects, so the token does not stay in the address bar. */
  @Get()
  async inbox(
    @Query('token') token: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (token !== undefined) return this.signIn(token, req, res);
    const me = this.auth.identify(req);
    if (!me) return sendPage(res, 401, signInPage());
    const nonce = randomBytes(16).toString('base64');
    sendPage(res, 200, inboxPage(await this.waitingFor(me), me, nonce), nonce);
  }

  @Post('session')
  session(
    @Body(new ZodValidationPipe(InboxSignInFormSchema, 'form')) form: { token: string },
    @Req() req: Request,
    @Res() res: Response,
  ): void {
    this.signIn(form.token, req, res);
  }

  @Get('items')
  async items(@Req() req: Request, @Res() res: Response): Promise<void> {
    const me = this.auth.identify(req);
    if (!me) return void res.status(401).json({ statusCode: 401, message: 'sign in first' });
    sendPage(res, 200, inboxItems(await this.waitingFor(me), me));
  }

  /** Server-sent events: `change` whenever any request arrives or is settled, on any replica. */
  @Get('events')
  events(@Req() req: Request, @Res() res: Response): void {
    if (!this.auth.identify(req))
      return void res.status(401).json({ statusCode: 401, message: 'sign in first' });
    res.status(200).set({
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    res.write(': connected\n\n');
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const close = this.live.subscribe(
      (change) => res.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`),
      () => {
        clearInterval(heartbeat);
        res.end();
      },
    );
    req.on('close', close);
  }

  private signIn(token: string, req: Request, res: Response): void {
    const approver = this.directory.byToken(token);
    if (!approver) return sendPage(res, 401, signInPage('That token is not an approver token.'));
    this.auth.startSession(res, approver, req.secure);
    res.redirect(303, '/inbox');
  }

  private async waitingFor(me: Approver): Promise<Waiting> {
    const mine = this.directory.groupsOf(me.id);
    const [pending, notices] = await Promise.all([this.oldest('pending'), this.oldest('notice')]);
    const approvals = [...pending.approvals, ...notices.approvals]
      .filter((a) => a.groups.some((g) => mine.includes(g)))
      .sort((a, b) => a.createdAt - b.createdAt);
    return { approvals, totals: { pending: pending.total, notice: notices.total } };
  }

  /** The oldest INBOX_LIMIT entries of a list; `total` (one ZCARD) only when the list holds more. */
  private async oldest(
    status: 'pending' | 'notice',
  ): Promise<{ approvals: StoredApproval[]; total?: number }> {
    const page = await this.approvals.list({ statuses: [status], limit: INBOX_LIMIT });
    return { approvals: page.approvals, total: page.next ? await this.approvals.count(status) : undefined };
  }
}
