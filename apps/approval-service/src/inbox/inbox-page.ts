// The web inbox: server-rendered HTML (all values escaped) and a small inline script for the buttons and
// live updates. The script only swaps in HTML fragments the server rendered, so it never builds markup itself.
import { trustSuggestion, type StoredApproval } from '../approvals/approval-store';
import type { Approver } from '../config/approvals-config.schema';
import { escapeHtml, page, relativeAge } from '../html';

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
    parts.push(item(a, me, now));
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

function item(a: StoredApproval, me: Approver, now: number): string {
  const r = a.request;
  const notice = a.status === 'notice';
  const suggestion = trustSuggestion(a);
  const own = r.requester === me.id;
  const voted = a.votes.some((v) => v.approver === me.id);
  let actions: string;
  if (notice)
    actions = '<p class="outcome">Manual step required: a person must do this; the agent will not.</p>';
  else if (own) actions = '<p class="muted">This is your own request; another approver must decide.</p>';
  else if (voted)
    actions = `<p class="muted">You approved; waiting for ${a.quorum - a.votes.length} more.</p>`;
  else {
    actions = `<div class="actions"><input type="text" class="reason" placeholder="Reason (optional)" maxlength="2000" aria-label="Reason">
<button class="approve" data-request="${escapeHtml(r.requestId)}" data-decision="approve">Approve</button>
<button class="deny" data-request="${escapeHtml(r.requestId)}" data-decision="deny">Deny</button><span class="result muted"></span></div>`;
  }
  const quorum =
    a.quorum > 1
      ? ` · ${a.votes.filter((v) => v.decision === 'approve').length} of ${a.quorum} approvals`
      : '';
  return `<section class="card${notice ? ' notice' : ''}" data-call-id="${escapeHtml(r.callId)}" data-request-id="${escapeHtml(r.requestId)}">
<h2 style="font-size:17px;margin:0"><code>${escapeHtml(r.toolName)}</code>${notice ? ' — manual step' : ''}</h2>
<div class="meta">requested by <b>${escapeHtml(r.requester)}</b> via agent ${escapeHtml(r.agent)} · ${escapeHtml(relativeAge(a.createdAt, now))} ago · expires in ${escapeHtml(relativeAge(now, a.expiresAt))}${quorum}</div>
<pre>${escapeHtml(JSON.stringify(r.args, null, 2))}</pre>
${suggestion ? `<p class="trust">💡 ${escapeHtml(suggestion)}</p>` : ''}
${actions}
</section>`;
}

export function inboxPage(waiting: Waiting, me: Approver, nonce: string): string {
  return page(
    'Countersign inbox',
    `<h1>Approvals waiting for ${escapeHtml(me.name)} <span class="muted" id="live" style="font-size:13px">○ connecting</span></h1>
<div id="items">${inboxItems(waiting, me)}</div>
<script nonce="${escapeHtml(nonce)}">${SCRIPT}</script>`,
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

const SCRIPT = `
(function () {
  var items = document.getElementById('items');
  var live = document.getElementById('live');
  function refresh() {
    return fetch('/inbox/items', { credentials: 'same-origin' }).then(function (r) {
      if (r.status === 401) { location.reload(); return; }
      return r.text().then(function (html) { items.innerHTML = html; });
    });
  }
  items.addEventListener('click', function (event) {
    var button = event.target.closest('button[data-request]');
    if (!button) return;
    var card = button.closest('section');
    var reason = card.querySelector('.reason').value.trim();
    var result = card.querySelector('.result');
    card.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
    var body = { decision: button.getAttribute('data-decision') };
    if (reason) body.reason = reason;
    fetch('/approvals/' + encodeURIComponent(button.getAttribute('data-request')) + '/decisions', {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Countersign-Inbox': '1' },
      body: JSON.stringify(body)
    }).then(function (r) { return r.json().then(function (json) { return { ok: r.ok, json: json }; }); })
      .then(function (reply) {
        result.textContent = reply.ok ? (reply.json.status === 'decided' ? ' Done.' : ' Counted; waiting for another approver.') : ' ' + reply.json.message;
        setTimeout(refresh, reply.ok ? 300 : 2500);
      })
      .catch(function () { result.textContent = ' Network error; try again.'; card.querySelectorAll('button').forEach(function (b) { b.disabled = false; }); });
  });
  var source = new EventSource('/inbox/events');
  source.addEventListener('open', function () { live.textContent = '● live'; });
  source.addEventListener('error', function () { live.textContent = '○ reconnecting'; });
  source.addEventListener('change', function () { refresh(); });
})();
`;
