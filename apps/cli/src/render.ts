// How the CLI and the demo print calls, events and approvals: one line per thing, arguments as compact JSON.
import {
  preconditionInWords,
  type ApprovalView,
  type PendingCall,
  type RunEvent,
  type StandingRule,
} from '@countersign/contracts';

export function compact(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export const callText = (call: { toolName: string; args: unknown }) =>
  `${call.toolName} ${compact(call.args)}`;

const OUTCOME_MARK: Record<string, string> = {
  executed: '✓',
  denied: '✗',
  responded: '↩',
  manual_required: '⚠',
};

/** One line for an event of the run's stream; `undefined` for events not worth a line. */
export function eventLine(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'status':
      return `… run is ${event.status}`;
    case 'tool_confirmation':
      return `⏸ ${confirmationText(event.call)}`;
    case 'tool_result':
      return `${OUTCOME_MARK[event.outcome] ?? '•'} ${event.toolName} (${event.callId}) ${event.outcome.replace('_', ' ')}: ${compact(event.content)}`;
    case 'text':
      return `💬 ${event.text}`;
    case 'done':
      return `■ run ${event.status}${event.result ? `: ${event.result}` : ''}`;
    case 'node':
      return `◆ step ${event.node} ${event.status}${event.callId ? ` (call ${event.callId})` : ''}`;
    case 'decision':
      return `${{ approve: '☑', deny: '☒', respond: '↩' }[event.decision]} ${event.toolName} (call ${event.callId}) ${decisionWords(event)}`;
  }
}

/**
 * Who decided a call, as the run's stream says it: "approved by carol, dave", "approved by standing rule sr-… (by
 * carol, until …)", "denied by bob: not now", "denied: expired (nobody decided in time)".
 */
export function decisionWords(d: Extract<RunEvent, { type: 'decision' }>): string {
  if (d.decision === 'respond')
    return `responded to by ${d.approvers.join(', ') || 'a person'} (not run): ${d.response ?? ''}`;
  const verb = d.decision === 'approve' ? 'approved' : 'denied';
  if (d.rule) return `${verb} by ${d.reason ?? `standing rule ${d.rule}`}`;
  if (d.decidedBy === 'expired') return 'denied: expired (nobody decided in time)';
  if (d.decidedBy === 'no_route') return 'denied: no approver route';
  const by = d.approvers.length ? d.approvers.join(', ') : d.decidedBy === 'policy' ? 'policy' : 'a person';
  return `${verb} by ${by}${d.reason ? `: ${d.reason}` : ''}`;
}

export function confirmationText(call: PendingCall): string {
  return `${callText(call)} needs confirmation (call ${call.callId}, tier ${call.tier})`;
}

/**
 * The revision of a request's arguments that a vote decides now: what the agent asked for (revision 0), or what an
 * approver last edited them to. Every line the CLI prints about a request shows this, never `request.args` alone.
 */
export interface Revision {
  toolName: string;
  args: Record<string, unknown>;
  fingerprint: string;
  rev: number;
  edited?: { by: string; at: string };
}

export function currentRevision(view: ApprovalView): Revision {
  const { toolName, args, fingerprint } = view.request;
  const e = view.edited;
  return e
    ? { toolName, args: e.args, fingerprint: e.fingerprint, rev: e.rev, edited: { by: e.by, at: e.at } }
    : { toolName, args, fingerprint, rev: 0 };
}

/** "1, edited by carol at …; the agent asked for {…}", or "0, as the agent asked". */
function revisionText(view: ApprovalView): string {
  const now = currentRevision(view);
  return now.edited
    ? `${now.rev}, edited by ${now.edited.by} at ${now.edited.at}; the agent asked for ${compact(view.request.args)}`
    : `${now.rev}, as the agent asked`;
}

export function approvalLine(view: ApprovalView): string {
  const r = view.request;
  const now = currentRevision(view);
  const votes =
    view.quorum > 1 ? ` ${view.votes.filter((v) => v.decision === 'approve').length}/${view.quorum}` : '';
  const edited = now.edited ? `  (revision ${revisionText(view)})` : '';
  const outcome = view.outcome
    ? ` → ${view.outcome.decision} by ${view.outcome.approvers.join(', ') || view.outcome.decidedBy}${view.outcome.reason ? ` (${view.outcome.reason})` : ''}${view.outcome.response ? `: “${view.outcome.response}”` : ''}`
    : '';
  const precondition = r.precondition ? `  precondition ${preconditionInWords(r.precondition)}` : '';
  return `${r.callId}  ${view.status}${votes}  ${callText(now)}${edited}${precondition}  fingerprint ${now.fingerprint}  requested by ${r.requester} (agent ${r.agent})  expires ${view.expiresAt}  request ${r.requestId}${outcome}`;
}

/**
 * What `approve`/`deny` decided: the tool, the whole arguments and the fingerprint of the revision the vote was
 * recorded on. `ownEdit`: the vote made this revision (`approve --args`).
 */
export function decidedLines(decided: Revision, ownEdit = false): string[] {
  const which = ownEdit
    ? `revision ${decided.rev}, your edit`
    : decided.edited
      ? `revision ${decided.rev}, edited by ${decided.edited.by}`
      : `revision ${decided.rev}, as the agent asked`;
  return [
    `  tool:        ${decided.toolName}`,
    `  arguments:   ${JSON.stringify(decided.args)}`,
    `  fingerprint: ${decided.fingerprint} (${which})`,
  ];
}

/** Why a vote pinned to `seen` was refused, what the request is now (when it could be read) and how to look at it. */
export function changedText(id: string, seen: string, current?: ApprovalView): string {
  const now = current && currentRevision(current);
  const what = now
    ? `; it is now revision ${now.rev}${now.edited ? `, edited by ${now.edited.by} at ${now.edited.at}` : ''}: ${now.toolName} ${JSON.stringify(now.args)} (fingerprint ${now.fingerprint})`
    : '';
  return (
    `${id}: not decided: the arguments changed since the revision you decided on (fingerprint ${seen})${what}. ` +
    `Look at it with \`countersign approvals show ${id}\`, then decide again` +
    (now ? ` (--fingerprint ${now.fingerprint} pins that revision)` : '')
  );
}

/** "in 29 min", "expired 3 min ago". */
export function timeLeft(expiresAt: string, now = Date.now()): string {
  const ms = Date.parse(expiresAt) - now;
  const words = (n: number) => {
    const s = Math.round(Math.abs(n) / 1000);
    if (s < 60) return `${s} s`;
    const m = Math.round(s / 60);
    return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
  };
  return ms > 0 ? `in ${words(ms)}` : `expired ${words(ms)} ago`;
}

/**
 * What an approver is told about a request at the terminal, one line each, in the order the inbox shows it: what the
 * run is for, what the model said, the tool, its preview, the route, who voted, the time left, the revision (who edited
 * the arguments, when) and its fingerprint, then the arguments of that revision: what a vote now decides.
 */
export function requestLines(view: ApprovalView, now = Date.now()): string[] {
  const r = view.request;
  const lines: string[] = [`${r.requester}'s agent (${r.agent}) wants to run ${r.toolName}`];
  if (r.context?.step) lines.push(`  runbook:    ${r.context.step}`);
  if (r.context?.input) lines.push(`  run for:    “${r.context.input}”`);
  if (r.context?.modelText) lines.push(`  model said: “${r.context.modelText}”`);
  const description = view.tool?.description || r.toolDescription;
  lines.push(
    `  tool:       ${r.toolName} (${view.tool?.tier ?? r.tier})${description ? `: ${description}` : ''}`,
  );
  if (r.context?.preview) lines.push(`  preview:    ${r.context.preview}`);
  if (r.precondition) lines.push(`  precondition: ${preconditionInWords(r.precondition)}`);
  if (view.route) lines.push(`  routed by:  ${view.route.rule}: ${view.route.why}`);
  const approvals = view.votes.filter((v) => v.decision === 'approve').map((v) => v.approver);
  lines.push(
    `  approvals:  ${approvals.length ? approvals.join(', ') : 'none yet'}${view.quorum > 1 ? ` (${approvals.length} of ${view.quorum})` : ''}`,
  );
  lines.push(`  expires:    ${timeLeft(view.expiresAt, now)}`);
  const revision = currentRevision(view);
  lines.push(`  revision:   ${revisionText(view)}`);
  lines.push(`  fingerprint: ${revision.fingerprint}`);
  lines.push(
    ...JSON.stringify(revision.args, null, 2)
      .split('\n')
      .map((l) => `    ${l}`),
  );
  if (view.trustSuggestion)
    lines.push(`  💡 ${view.trustSuggestion} (countersign rules add --from <callId>)`);
  return lines;
}

export function ruleLine(rule: StandingRule): string {
  const args = rule.args
    ? ` where ${Object.entries(rule.args)
        .map(([path, g]) => `${path}=${typeof g === 'string' ? g : g.join('|')}`)
        .join(' ')}`
    : '';
  return `${rule.id}  ${rule.tool} for ${rule.requester}${args}  by ${rule.createdBy}  until ${rule.expiresAt}${rule.note ? `  (${rule.note})` : ''}`;
}
