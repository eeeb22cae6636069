// The inbox's History view: what was decided lately in the approver's groups (or by them), what ran and its result.
import { escapeHtml, relativeAge } from '../../core/html';
import { outcomeInWords } from '../../requests/approval-context';
import type { HistoryEntry } from '../../requests/approval-read-model';

export function historyItems(entries: HistoryEntry[], now = Date.now()): string {
  if (entries.length === 0) return '<p class="muted" id="empty">Nothing decided lately.</p>';
  return entries.map((entry) => historyItem(entry, now)).join('\n');
}

function historyItem({ approval: a, result }: HistoryEntry, now: number): string {
  const r = a.request;
  const settledAt = Date.parse(a.done?.at ?? a.outcome?.decidedAt ?? '') || a.createdAt;
  const ran = a.outcome?.args ?? r.args;
  const approved = a.outcome?.decision === 'approve';
  const kind = a.done
    ? 'done'
    : approved
      ? 'approved'
      : a.outcome?.decision === 'respond'
        ? 'responded'
        : 'denied';
  return `<section class="card history ${kind}" data-call-id="${escapeHtml(r.callId)}" data-request-id="${escapeHtml(r.requestId)}">
<h2 style="font-size:16px;margin:0"><code>${escapeHtml(r.toolName)}</code> — ${escapeHtml(outcomeInWords(a))}</h2>
<div class="meta">requested by <b>${escapeHtml(r.requester)}</b> via agent ${escapeHtml(r.agent)} · ${settledLabel(kind, settledAt, now)}${
    a.outcome?.rule ? ' · <span class="badge">decided by policy</span>' : ''
  }</div>
<pre class="args">${escapeHtml(JSON.stringify(ran, null, 2))}</pre>
${a.outcome?.args ? `<p class="edited">✎ The agent asked for <code>${escapeHtml(JSON.stringify(r.args))}</code>; it ran with the edited arguments above.</p>\n` : ''}${resultLine(kind, result)}
</section>`;
}

/** When it was settled (not when it was asked): "decided <time>12:03 UTC</time> (4 min ago)", or "done …". */
function settledLabel(kind: string, settledAt: number, now: number): string {
  const iso = new Date(settledAt).toISOString();
  return `${kind === 'done' ? 'done' : 'decided'} <time datetime="${iso}" title="${iso}">${iso.slice(11, 16)} UTC</time> (${escapeHtml(relativeAge(settledAt, now))} ago)`;
}

function resultLine(kind: string, result: HistoryEntry['result']): string {
  if (kind === 'done') return '<p class="muted">The agent is told a person did it.</p>';
  if (!result)
    return `<p class="muted result-line">${kind === 'approved' ? 'Not run yet (or its result aged out).' : 'Nothing ran.'}</p>`;
  return `<p class="result-line"><b>${escapeHtml(result.outcome === 'executed' ? 'Ran' : result.outcome)}</b>: ${escapeHtml(result.content)}</p>`;
}
