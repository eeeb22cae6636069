// The web inbox: server-rendered HTML (all values escaped) and a small inline script for the buttons and
// live updates (inbox-script.ts). Each request is a card (request-card.ts); History and Rules are views of their own.
import type { StoredApproval } from '../approvals/approval-store';
import type { Approver } from '../config/approvals-config.schema';
import { escapeHtml, page } from '../html';
import { INBOX_SCRIPT } from './inbox-script';
import { requestCard } from './request-card';

/** The inbox reads at most this many of the oldest pending requests, and as many of the oldest notices. */
export const INBOX_LIMIT = 500;

export interface Waiting {
  /** Those routed to the approver among what was read, oldest first. */
  approvals: StoredApproval[];
  /** How many a list holds in all, set only when it holds more than INBOX_LIMIT. */
  totals: { pending?: number; notice?: number };
}

export function inboxItems(waiting: Waiting, me: Approver, now = Date.now()): string {
  const notes = truncationNotes(waiting.totals);
  if (waiting.approvals.length === 0)
    return `${notes}<p class="muted" id="empty">Nothing waiting for you.</p>`;
  return notes + waiting.approvals.map((a) => item(a, me, now)).join('\n');
}

function truncationNotes(totals: Waiting['totals']): string {
  const note = (total: number | undefined, what: string) =>
    total === undefined
      ? ''
      : `<p class="muted truncated">Showing the oldest ${INBOX_LIMIT} of ${total} ${what} (those routed to you among them); newer ones appear as these are settled.</p>\n`;
  return note(totals.pending, 'pending requests') + note(totals.notice, 'manual-step notices');
}

function item(a: StoredApproval, me: Approver, now: number): string {
  return requestCard(a, me, now);
}

export function inboxPage(waiting: Waiting, me: Approver, nonce: string): string {
  return inboxView('waiting', me, nonce, '/inbox/items', inboxItems(waiting, me));
}

/** The inbox's views share one frame: a heading, the view's links, the live list and the script. */
export function inboxView(
  view: 'waiting' | 'history' | 'rules',
  me: Approver,
  nonce: string,
  refreshUrl: string,
  content: string,
): string {
  const titles = {
    waiting: `Approvals waiting for ${me.name}`,
    history: `Decided lately, for ${me.name}`,
    rules: 'Standing rules',
  };
  const link = (to: typeof view, href: string, text: string) =>
    to === view ? `<b>${text}</b>` : `<a href="${href}">${text}</a>`;
  return page(
    `Countersign inbox${view === 'waiting' ? '' : ` · ${view}`}`,
    `<h1>${escapeHtml(titles[view])} <span class="muted" id="live" style="font-size:13px">○ connecting</span></h1>
<nav class="views">${link('waiting', '/inbox', 'Waiting')} · ${link('history', '/inbox/history', 'History')} · ${link('rules', '/inbox/rules', 'Rules')}</nav>
<div id="items" data-refresh="${escapeHtml(refreshUrl)}">${content}</div>
<script nonce="${escapeHtml(nonce)}">${INBOX_SCRIPT}</script>`,
  );
}

export function signInPage(csrf: string, problem?: string): string {
  return page(
    'Sign in · Countersign inbox',
    `<h1>Countersign inbox</h1><div class="card">${problem ? `<p class="outcome">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/inbox/session"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><label>Your token <input type="password" name="token" autocomplete="off" required></label> <button class="approve" type="submit">Sign in</button></form>
<p class="muted">Or sign in with a one-time link: <code>npx countersign inbox-link</code></p></div>`,
  );
}

/** Where a one-time sign-in link lands: the code is spent only when the button posts it. */
export function linkSignInPage(code: string, csrf: string): string {
  return page(
    'Sign in · Countersign inbox',
    `<h1>Countersign inbox</h1><div class="card"><p>This one-time link signs this browser in to your inbox.</p>
<form method="post" action="/inbox/session"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><input type="hidden" name="code" value="${escapeHtml(code)}"><button class="approve" type="submit">Open my inbox</button></form></div>`,
  );
}
