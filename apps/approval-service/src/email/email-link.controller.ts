// The email link. GET only shows a confirmation page (mail scanners follow links); POST decides, once.
import { Body, Controller, Get, Inject, Param, Post, Res } from '@nestjs/common';
import type { HttpResponse as Response } from '../http-types';
import { EmailDecisionFormSchema, type EmailDecisionForm } from '@countersign/contracts';
import { PublicRoute, RateLimited, ZodValidationPipe } from '@countersign/platform';
import { VoteRefusedError } from '../approvals/approval-errors';
import type { StoredApproval } from '../approvals/approval-store';
import { ApprovalsService } from '../approvals/approvals.service';
import { REFUSAL_STATUS } from '../approvals/vote-refused.filter';
import { ApproverDirectory } from '../auth/approver-directory';
import { UnauthenticatedRequests } from '../auth/unauthenticated-requests';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { ApprovalRoute } from '../config/rate-limits';
import { escapeHtml, page, relativeAge, sendPage } from '../html';
import { outcomeText } from '../slack/slack-blocks';
import { verifyLinkToken } from './link-token';

@Controller('approve')
@PublicRoute(
  'the link token: HMAC-signed, bound to one approver and one request attempt, expiring, single use',
)
export class EmailLinkController {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly approvals: ApprovalsService,
    private readonly directory: ApproverDirectory,
    private readonly unauthenticated: UnauthenticatedRequests,
  ) {}

  @Get(':token')
  async confirm(@Param('token') token: string, @Res() res: Response): Promise<void> {
    const check = verifyLinkToken(token, this.config.env.LINK_TOKEN_SECRET);
    if (!check.ok) {
      this.unauthenticated.refuse('email', `link_${check.reason}`, { token });
      return sendPage(
        res,
        check.reason === 'expired' ? 410 : 400,
        message('Link not valid', linkProblem(check.reason)),
      );
    }
    const approval = await this.approvals.get(check.payload.requestId);
    if (!approval || approval.request.attempt !== check.payload.attempt) {
      return sendPage(
        res,
        410,
        message('Link not valid', 'This request is gone or was asked again; use the newest message.'),
      );
    }
    if (approval.status !== 'pending')
      return sendPage(res, 409, message('Already settled', outcomeText(approval)));
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
    const check = verifyLinkToken(token, this.config.env.LINK_TOKEN_SECRET);
    if (!check.ok) {
      // Nobody vouches for a link we cannot verify (or an expired one): counted, not audited.
      this.unauthenticated.refuse('email', `link_${check.reason}`, { token });
      return sendPage(
        res,
        check.reason === 'expired' ? 410 : 400,
        message('Link not valid', linkProblem(check.reason)),
      );
    }
    const { requestId, attempt, approver } = check.payload;
    try {
      const result = await this.approvals.vote({
        requestId,
        attempt,
        approver,
        approverGroups: this.directory.groupsOf(approver),
        decision: form.decision,
        reason: form.reason?.trim() || undefined,
        channel: 'email',
        // The decoded MAC, not the text: one token, one use, however it is spelled (only one spelling is accepted).
        singleUseToken: check.id,
      });
      const text =
        result.status === 'decided'
          ? `${form.decision === 'approve' ? 'Approved' : 'Denied'}. The agent has been told.`
          : `Your approval was counted (${result.approvals} of ${result.quorum}); waiting for another approver.`;
      sendPage(res, 200, message('Thank you', text));
    } catch (error) {
      if (!(error instanceof VoteRefusedError)) throw error;
      sendPage(res, REFUSAL_STATUS[error.code], message('Not counted', `${error.message}.`));
    }
  }
}

function linkProblem(reason: string): string {
  return reason === 'expired'
    ? 'This link has expired, like the request it was for.'
    : 'This link is not one we sent.';
}

function message(title: string, text: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><div class="card"><p>${escapeHtml(text)}</p></div>`);
}

function confirmationPage(a: StoredApproval, approverName: string, token: string): string {
  const r = a.request;
  const action = `/approve/${encodeURIComponent(token)}`;
  const form = (decision: 'approve' | 'deny', label: string) =>
    `<form method="post" action="${escapeHtml(action)}" style="display:inline"><input type="hidden" name="decision" value="${decision}">` +
    `${decision === 'deny' ? '<input type="text" name="reason" placeholder="Reason (optional)" maxlength="2000"> ' : ''}` +
    `<button class="${decision}" type="submit">${label}</button></form>`;
  return page(
    `Approve ${r.toolName}?`,
    `<h1>Approve <code>${escapeHtml(r.toolName)}</code>?</h1>
<div class="card">
<p>Hello ${escapeHtml(approverName)}. <b>${escapeHtml(r.requester)}</b>'s agent <b>${escapeHtml(r.agent)}</b> wants to run <code>${escapeHtml(r.toolName)}</code>.</p>
<div class="meta">requested ${escapeHtml(relativeAge(a.createdAt))} ago · expires ${escapeHtml(new Date(a.expiresAt).toISOString())}${a.quorum > 1 ? ` · needs ${a.quorum} approvers` : ''}</div>
<pre>${escapeHtml(JSON.stringify(r.args, null, 2))}</pre>
<p>${form('approve', 'Approve')} ${form('deny', 'Deny')}</p>
</div>`,
  );
}
