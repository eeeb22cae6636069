// The texts of the emails: a request with its confirmation link, a manual-step notice, an expiry notice. A request
// shows the same context as the inbox and Slack (approval-context.ts).
import { escapeHtml } from '../../core/html';
import { contextLines, editedHow } from '../../requests/approval-context';
import type { StoredApproval } from '../../requests/approval-types';
import { trustSuggestion } from '../../requests/approval-views';
import type { Mail } from './email-notifier';

const argsText = (args: Record<string, unknown>) => JSON.stringify(args, null, 2);

function contextText(a: StoredApproval, now: number): string {
  return contextLines(a, now)
    .map((line) => `${line.label}: ${line.text}`)
    .join('\n');
}

function contextHtml(a: StoredApproval, now: number): string {
  const rows = contextLines(a, now)
    .map(
      (line) =>
        `<tr><td style="color:#5b6476;padding:2px 12px 2px 0;vertical-align:top">${escapeHtml(line.label)}</td><td style="padding:2px 0${line.kind === 'preview' ? ';font-weight:600' : ''}">${escapeHtml(line.text)}</td></tr>`,
    )
    .join('');
  return `<table style="border-collapse:collapse;font-size:14px">${rows}</table>`;
}

function editedText(a: StoredApproval): string {
  return a.edited
    ? `Edited by ${a.edited.by}${editedHow(a)}: the agent asked for ${JSON.stringify(a.request.args)}. Approvals of the earlier arguments do not count.`
    : '';
}

export function requestMail(a: StoredApproval, to: string, link: string, now = Date.now()): Mail {
  const r = a.request;
  const suggestion = trustSuggestion(a);
  const args = a.edited?.args ?? r.args;
  if (r.reason === 'manual_step') {
    return {
      to,
      subject: `[Countersign] Manual step required: ${r.toolName} for ${r.requester}`,
      text: `${r.requester}'s agent (${r.agent}) may not run ${r.toolName} itself. A person must do it if it should be done; mark it done in the inbox so the agent is told.\n\n${contextText(a, now)}\n\nArguments:\n${argsText(args)}\n`,
      html: `<p><b>${escapeHtml(r.requester)}</b>'s agent (${escapeHtml(r.agent)}) may not run <code>${escapeHtml(r.toolName)}</code> itself. A person must do it if it should be done; mark it done in the inbox so the agent is told.</p>${contextHtml(a, now)}<pre>${escapeHtml(argsText(args))}</pre>`,
    };
  }
  const edited = editedText(a);
  const text = [
    `${r.requester}'s agent (${r.agent}) wants to run ${r.toolName}.`,
    '',
    contextText(a, now),
    ...(edited ? ['', edited] : []),
    '',
    'Arguments:',
    argsText(args),
    suggestion ? `\nNote: ${suggestion}` : '',
    '',
    `Review and decide: ${link}`,
    '(The link opens a confirmation page; nothing is decided until you press Approve or Deny there.)',
  ].join('\n');
  const html = `<p><b>${escapeHtml(r.requester)}</b>'s agent (${escapeHtml(r.agent)}) wants to run <code>${escapeHtml(r.toolName)}</code>.</p>
${contextHtml(a, now)}
${edited ? `<p style="background:#fff8e1;padding:6px 10px">${escapeHtml(edited)}</p>` : ''}
<pre>${escapeHtml(argsText(args))}</pre>
${suggestion ? `<p><i>${escapeHtml(suggestion)}</i></p>` : ''}
<p><a href="${escapeHtml(link)}">Review and decide</a></p>
<p style="color:#666">The link opens a confirmation page; nothing is decided until you press Approve or Deny there.</p>`;
  const subject = a.edited
    ? `[Countersign] Edited, approval needed: ${r.toolName} for ${r.requester}`
    : `[Countersign] Approval needed: ${r.toolName} for ${r.requester}`;
  return { to, subject, text, html };
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
