// The email link. GET only shows a confirmation page (mail scanners follow links); POST decides, once.
import { Body, Controller, Get, Inject, Param, Post, Res } from '@nestjs/common';
import { EmailDecisionFormSchema, type EmailDecisionForm } from '@countersign/contracts';
import { PublicRoute, RateLimited, ZodValidationPipe } from '@countersign/platform';
import { ApproverDirectory } from '../../auth/approver-directory';
import { UnauthenticatedRequests } from '../../auth/unauthenticated-requests';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../../config/approval-service.config';
import { ApprovalRoute } from '../../config/rate-limits';
import { escapeHtml, page, relativeAge, sendPage } from '../../core/html';
import type { HttpResponse as Response } from '../../core/http-types';
import { verifyLinkToken } from '../../notifications/email/link-token';
import { ApprovalReadModel } from '../../requests/approval-read-model';
import { contextLines, editedHow, expiresInWords, outcomeInWords } from '../../requests/approval-context';
import type { StoredApproval } from '../../requests/approval-types';
import { nextStep } from '../../votes/next-step';
import { VoteRefusedError } from '../../votes/vote-errors';
import { VotesService } from '../../votes/votes.service';
import { REFUSAL_STATUS } from '../vote-refused.filter';

@Controller('approve')
@PublicRoute(
  'the link token: HMAC-signed, bound to one approver and one request attempt, expiring, single use',
)
export class EmailLinkController {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly readModel: ApprovalReadModel,
    private readonly votes: VotesService,
    private readonly directory: ApproverDirectory,
    private readonly unauthenticated: UnauthenticatedRequests,
  ) {}

  @Get(':token')
  async confirm(@Param('token') token: string, @Res() res: Response): Promise<void> {
    const check = this.verifiedLink(token, res);
    if (!check) return;
    const approval = await this.readModel.get(check.payload.requestId);
    if (!approval || approval.request.attempt !== check.payload.attempt) {
      return sendPage(
        res,
        410,
        message('Link not valid', 'This request is gone or was asked again; use the newest message.'),
      );
    }
    if (approval.status !== 'pending')
      return sendPage(res, 409, message('Already settled', outcomeInWords(approval)));
    if ((approval.edited?.rev ?? 0) !== check.payload.rev)
      return sendPage(
        res,
        409,
        message(
          'Arguments edited',
          `${approval.edited?.by ?? 'An approver'} edited the arguments since this email was sent; a newer email asks about the edited call (or decide in the inbox).`,
        ),
      );
    await this.readModel.describe([approval]);
    const approver = this.directory.byId(check.payload.approver);
    sendPage(res, 200, confirmationPage(approval, approver?.name ?? check.payload.approver, token));
  }

  @Post(':token')
  @RateLimited(ApprovalRoute.Decision)
  async decide(
    @Param('token') token: string,
    @Body(new ZodValidationPipe(EmailDecisionFormSchema, 'form')) form: EmailDecisionForm,
    @Res() res: Response,
  ): Promise<void> {
    const check = this.verifiedLink(token, res);
    if (!check) return;
    const { requestId, attempt, approver } = check.payload;
    try {
      const result = await this.votes.vote({
        requestId,
        attempt,
        approver,
        approverGroups: this.directory.groupsOf(approver),
        decision: form.decision,
        reason: form.reason?.trim() || undefined,
        ...(form.response !== undefined ? { response: form.response } : {}),
        channel: 'email',
        // The decoded MAC, not the text: one token, one use, however it is spelled (only one spelling is accepted).
        singleUseToken: check.id,
        seen: { rev: check.payload.rev },
      });
      const toolName = result.status === 'decided' ? result.request.toolName : 'the call';
      sendPage(res, 200, message('Thank you', nextStep(result, toolName, form)));
    } catch (error) {
      if (!(error instanceof VoteRefusedError)) throw error;
      sendPage(res, REFUSAL_STATUS[error.code], message('Not counted', `${error.message}.`));
    }
  }

  /** The link's claims; or, when it does not verify or has expired, undefined once the page saying so is sent. */
  private verifiedLink(token: string, res: Response): VerifiedLink | undefined {
    const check = verifyLinkToken(token, this.config.env.LINK_TOKEN_SECRET);
    if (check.ok) return check;
    // Nobody vouches for a link we cannot verify (or an expired one): counted, not audited.
    this.unauthenticated.refuse('email', `link_${check.reason}`, { token });
    sendPage(
      res,
      check.reason === 'expired' ? 410 : 400,
      message('Link not valid', linkProblem(check.reason)),
    );
    return undefined;
  }
}

type VerifiedLink = Extract<ReturnType<typeof verifyLinkToken>, { ok: true }>;

function linkProblem(reason: string): string {
  return reason === 'expired'
    ? 'This link has expired, like the request it was for.'
    : 'This link is not one we sent.';
}

function message(title: string, text: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><div class="card"><p>${escapeHtml(text)}</p></div>`);
}

/**
 * Two forms. The first: Approve and Deny are its two submit buttons (each sends its `decision`), and the reason box
 * under both goes with either. The second: Respond, with the text the agent is given instead of running the call. The context is the inbox's: expiry in words, who has voted, what the call will change.
 */
function confirmationPage(a: StoredApproval, approverName: string, token: string, now = Date.now()): string {
  const r = a.request;
  const action = `/approve/${encodeURIComponent(token)}`;
  const lines = contextLines(a, now)
    .map(
      (line) =>
        `<dt>${escapeHtml(line.label)}</dt><dd${line.kind === 'preview' ? ' class="preview"' : ''}>${escapeHtml(line.text)}</dd>`,
    )
    .join('');
  const edited = a.edited
    ? `<p class="edited">✎ Edited by <b>${escapeHtml(a.edited.by)}</b>${editedHow(a)}; the agent asked for <code>${escapeHtml(JSON.stringify(r.args))}</code>. Approvals of the earlier arguments do not count.</p>`
    : '';
  return page(
    `Approve ${r.toolName}?`,
    `<h1>Approve <code>${escapeHtml(r.toolName)}</code>?</h1>
<div class="card">
<p>Hello ${escapeHtml(approverName)}. <b>${escapeHtml(r.requester)}</b>'s agent <b>${escapeHtml(r.agent)}</b> wants to run <code>${escapeHtml(r.toolName)}</code>.</p>
<div class="meta">requested ${escapeHtml(relativeAge(a.createdAt, now))} ago · expires ${escapeHtml(expiresInWords(a.expiresAt, now))}${a.quorum > 1 ? ` · needs ${a.quorum} approvers` : ''}</div>
<dl class="context">${lines}</dl>
${edited}<pre>${escapeHtml(JSON.stringify(a.edited?.args ?? r.args, null, 2))}</pre>
<form method="post" action="${escapeHtml(action)}">
<p><button class="approve" type="submit" name="decision" value="approve">Approve</button> <button class="deny" type="submit" name="decision" value="deny">Deny</button></p>
<p><label>Reason (optional; the model is told it on a deny)<br><input type="text" name="reason" maxlength="2000" style="width:100%;max-width:520px"></label></p>
</form>
<form method="post" action="${escapeHtml(action)}" class="respond">
<p><label>Or respond instead: the call does not run, and the agent is given your text (naming you) as its result, so it re-plans<br><textarea name="response" required maxlength="4000" rows="3" style="width:100%;max-width:520px" placeholder="Not like this: restart only the canary first"></textarea></label></p>
<p><button class="respond" type="submit" name="decision" value="respond">Respond</button></p>
</form>
<p class="muted">To change the arguments before approving, use the inbox.</p>
</div>`,
  );
}
