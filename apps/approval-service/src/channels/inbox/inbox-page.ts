// The web inbox: server-rendered HTML (all values escaped) and a small inline script for the buttons and
// live updates (inbox-script.ts). Each request is a card (request-card.ts); History and Rules are views of their own.
import type { Approver } from '../../config/approvals-config.schema';
import { escapeHtml, page } from '../../core/html';
import type { StoredApproval } from '../../requests/approval-types';
import { INBOX_SCRIPT } from './inbox-script';
import { requestCard } from './request-card';

/**
 * Of a list (pending requests, manual-step notices) longer than INBOX_OLDEST + INBOX_NEWEST, the inbox reads the
 * oldest and the newest, and says how many wait in between: a flood of one requester fills the middle, never hides
 * the newest request (the one that just arrived) nor the oldest (the one closest to expiring).
 */
export const INBOX_OLDEST = 250;
export const INBOX_NEWEST = 250;

/** What a list's read left out: `hidden` entries created after `after` (ms) and before the newest it read. */
export interface InboxGap {
  status: 'pending' | 'notice';
  total: number;
  hidden: number;
  after: number;
}

export interface Waiting {
  /** Those routed to the approver among what was read, oldest first. */
  approvals: StoredApproval[];
  /** One per list that holds more than was read. */
  gaps: InboxGap[];
  /** The approver's groups: what each card asks mayDecide about. */
  groups: readonly string[];
}

const GAP_WHAT = { pending: 'pending requests', notice: 'manual-step notices' } as const;

export function inboxItems(waiting: Waiting, me: Approver, now = Date.now()): string {
  const notes = waiting.gaps.map(gapSummary).join('');
  if (waiting.approvals.length === 0)
    return `${notes}<p class="muted" id="empty">Nothing waiting for you.</p>`;
  // Each list's gap goes where it is in time: after the last of its oldest, before the first of its newest.
  const gaps = [...waiting.gaps].sort((a, b) => a.after - b.after);
  const parts: string[] = [];
  for (const a of waiting.approvals) {
    while (gaps.length > 0 && a.createdAt > gaps[0].after) parts.push(gapMarker(gaps.shift()!));
    parts.push(requestCard(a, { ...me, groups: waiting.groups }, now));
  }
  parts.push(...gaps.map(gapMarker));
  return notes + parts.join('\n');
}

function gapSummary(gap: InboxGap): string {
  return `<p class="muted truncated">Showing the oldest ${INBOX_OLDEST} and the newest ${INBOX_NEWEST} of ${gap.total} ${GAP_WHAT[gap.status]} (those routed to you among them); the ${gap.hidden} in between appear as these are settled.</p>\n`;
}

function gapMarker(gap: InboxGap): string {
  return `<p class="muted between" data-status="${gap.status}">… ${gap.hidden} more ${GAP_WHAT[gap.status]} in between, not shown (all of them: <code>npx countersign approvals list</code>) …</p>`;
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
    `${whoseInbox(me)}
<h1>${escapeHtml(titles[view])} <span class="muted" id="live" style="font-size:13px">○ connecting</span></h1>
<nav class="views">${link('waiting', '/inbox', 'Waiting')} · ${link('history', '/inbox/history', 'History')} · ${link('rules', '/inbox/rules', 'Rules')}</nav>
<div id="items" data-refresh="${escapeHtml(refreshUrl)}">${content}</div>
<script nonce="${escapeHtml(nonce)}">${INBOX_SCRIPT}</script>`,
  );
}

/** Every view says whose inbox it is (a browser may be shared, or signed in by someone else's link), with a sign-out. */
function whoseInbox(me: Approver): string {
  return `<header class="who muted">Inbox of ${escapeHtml(me.name)} (${escapeHtml(me.id)}) <button id="sign-out" class="secondary" type="button">Sign out</button></header>`;
}

export function signInPage(csrf: string, problem?: string): string {
  return page(
    'Sign in · Countersign inbox',
    `<h1>Countersign inbox</h1><div class="card">${problem ? `<p class="outcome">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/inbox/session"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><label>Your token <input type="password" name="token" autocomplete="off" required></label> <button class="approve" type="submit">Sign in</button></form>
<p class="muted">Or sign in with a one-time link: <code>npx countersign inbox-link</code></p></div>`,
  );
}

/** Where a one-time sign-in link lands: whose it is; the code is spent only when the button posts it. */
export function linkSignInPage(code: string, csrf: string, whose: Approver): string {
  return page(
    'Sign in · Countersign inbox',
    `<h1>Countersign inbox</h1><div class="card"><p class="outcome">This link signs this browser in as ${escapeHtml(whose.name)} (${escapeHtml(whose.id)}).</p>
<p class="muted">Not you? Close this page: whoever uses this browser after the button would decide in ${escapeHtml(whose.id)}’s name.</p>
<form method="post" action="/inbox/session"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><input type="hidden" name="code" value="${escapeHtml(code)}"><button class="approve" type="submit">Open my inbox</button></form></div>`,
  );
}
