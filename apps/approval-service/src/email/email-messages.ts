// The texts of the emails: a request with its confirmation link, a manual-step notice, an expiry notice.
import { trustSuggestion, type StoredApproval } from '../approvals/approval-store';
import { escapeHtml } from '../html';
import type { Mail } from './email-notifier';

const argsText = (args: Record<string, unknown>) => JSON.stringify(args, null, 2);

export function requestMail(a: StoredApproval, to: string, link: string): Mail {
  const r = a.request;
  const suggestion = trustSuggestion(a);
  const expires = new Date(a.expiresAt).toISOString();
  if (r.reason === 'manual_step') {
    return {
      to,
      subject: `[Countersign] Manual step required: ${r.toolName} for ${r.requester}`,
      text: `${r.requester}'s agent (${r.agent}) may not run ${r.toolName} itself. A person must do it if it should be done.\n\nArguments:\n${argsText(r.args)}\n`,
      html: `<p><b>${escapeHtml(r.requester)}</b>'s agent (${escapeHtml(r.agent)}) may not run <code>${escapeHtml(r.toolName)}</code> itself. A person must do it if it should be done.</p><pre>${escapeHtml(argsText(r.args))}</pre>`,
    };
  }
  const text = [
    `${r.requester}'s agent (${r.agent}) wants to run ${r.toolName}.`,
    '',
    'Arguments:',
    argsText(r.args),
    '',
    `Expires: ${expires}${a.quorum > 1 ? `\nNeeds ${a.quorum} approvers.` : ''}`,
    suggestion ? `\nNote: ${suggestion}` : '',
    '',
    `Review and decide: ${link}`,
    '(The link opens a confirmation page; nothing is decided until you press Approve or Deny there.)',
  ].join('\n');
  const html = `<p><b>${escapeHtml(r.requester)}</b>'s agent (${escapeHtml(r.agent)}) wants to run <code>${escapeHtml(r.toolName)}</code>.</p>
<pre>${escapeHtml(argsText(r.args))}</pre>
<p>Expires: ${escapeHtml(expires)}${a.quorum > 1 ? ` · needs ${a.quorum} approvers` : ''}</p>
${suggestion ? `<p><i>${escapeHtml(suggestion)}</i></p>` : ''}
<p><a href="${escapeHtml(link)}">Review and decide</a></p>
<p style="color:#666">The link opens a confirmation page; nothing is decided until you press Approve or Deny there.</p>`;
  return { to, subject: `[Countersign] Approval needed: ${r.toolName} for ${r.requester}`, text, html };
}

export function expiredMail(a: StoredApproval, to: string): Mail {
  const r = a.request;
  const text = `The request to run ${r.toolName} for ${r.requester} expired before anyone decided. It was denied; the link in the earlier email no longer works.`;
  return {
    to,
    subject: `[Countersign] Expired: ${r.toolName} for ${r.requester}`,
    text,
    html: `<p>${escapeHtml(text)}</p>`,
  };
}
