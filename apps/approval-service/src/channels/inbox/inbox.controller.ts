// The web inbox's views: what waits for the signed-in approver (the page, its HTML fragment and its live-update
// stream), what was decided lately, and the standing rules. Every view names whose inbox it is, with a sign-out;
// signing in is sign-in.controller.ts's.
import { randomBytes } from 'node:crypto';
import { Controller, ForbiddenException, Get, Query, Req, Res } from '@nestjs/common';
import { CurrentPrincipal, PublicRoute, type Principal } from '@countersign/platform';
import { ApproverAuth } from '../../auth/approver-auth';
import { ApproverDirectory } from '../../auth/approver-directory';
import { sendPage } from '../../core/html';
import type { HttpRequest as Request, HttpResponse as Response } from '../../core/http-types';
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
  type InboxGap,
  type Waiting,
} from './inbox-page';
import { rulesItems } from './rules-page';
import { showSignIn } from './sign-in-form';

const HEARTBEAT_MS = 25_000;

@Controller('inbox')
export class InboxController {
  constructor(
    private readonly readModel: ApprovalReadModel,
    private readonly auth: ApproverAuth,
    private readonly directory: ApproverDirectory,
    private readonly live: LiveUpdates,
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
      return showSignIn(
        res,
        400,
        'Tokens in addresses are not accepted (they end up in browser history and server logs). Sign in below, ' +
          'or ask for a one-time sign-in link: npx countersign inbox-link',
      );
    const session = await this.auth.authenticateInbox(req);
    if (!session?.ok) return showSignIn(res, 401, session ? session.reason : undefined);
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
