// What an approver is told about a request besides the call itself, in the order every channel shows it (inbox, Slack,
// email, the email confirmation page): the runbook step it comes from, what the run is for, what the model said, what the tool does, its preview, why
// the request came to them, who has voted and how long is left. One list, so the channels cannot drift apart.
import { preconditionInWords } from '@countersign/contracts';
import type { StoredApproval } from './approval-types';

export interface ContextLine {
  /** Short label: "Run for", "Preview", ... */
  label: string;
  text: string;
  /** The preview line: channels may set it apart (it is what the call will change). */
  kind?: 'preview';
}

type Shown = Pick<
  StoredApproval,
  'request' | 'expiresAt' | 'quorum' | 'votes' | 'status' | 'route' | 'tool'
> &
  Partial<Pick<StoredApproval, 'edited'>>;

export function contextLines(a: Shown, now = Date.now()): ContextLine[] {
  const r = a.request;
  const lines: ContextLine[] = [];
  // Runbook runs: which runbook and step asks ("step 3 of 7 of payments-failover"), before anything else.
  if (r.context?.step) lines.push({ label: 'Runbook', text: r.context.step });
  if (r.context?.input) lines.push({ label: 'Run for', text: `${r.requester}: “${r.context.input}”` });
  if (r.context?.modelText) lines.push({ label: 'Model said', text: `“${r.context.modelText}”` });
  const description = a.tool?.description || r.toolDescription;
  const tier = a.tool?.tier ?? r.tier;
  lines.push({ label: 'Tool', text: `${r.toolName} (${tier})${description ? `: ${description}` : ''}` });
  if (r.context?.preview) lines.push({ label: 'Preview', text: r.context.preview, kind: 'preview' });
  // The state of the world the approval is for: the call runs only if it still holds right before it runs.
  if (r.precondition) lines.push({ label: 'Precondition', text: preconditionInWords(r.precondition) });
  if (a.route) lines.push({ label: 'Routed by', text: `${routeName(a.route.rule)}: ${a.route.why}` });
  if (a.status === 'pending') {
    lines.push({ label: 'Approvals', text: quorumProgress(a) });
    lines.push({ label: 'Expires', text: expiresInWords(a.expiresAt, now) });
  }
  return lines;
}

/**
 * How an edit came about, after "Edited by <who>": " before approving" when the editor's approval counts, or " (not
 * an approval)" when the edit routed the call to groups the editor is not in.
 */
export function editedHow(a: Pick<StoredApproval, 'edited' | 'votes'>): string {
  const counted = a.votes.some((v) => v.approver === a.edited?.by && v.edited);
  return counted ? ' before approving' : ' (not an approval)';
}

/** "none yet (needs 2)", "1 of 2: dave approved", "carol approved". */
export function quorumProgress(a: Pick<StoredApproval, 'quorum' | 'votes'>): string {
  const approvals = a.votes.filter((v) => v.decision === 'approve');
  const who = approvals.map((v) => `${v.approver} approved${v.edited ? ' (edited)' : ''}`).join(', ');
  if (approvals.length === 0) return a.quorum > 1 ? `none yet (needs ${a.quorum})` : 'none yet';
  return a.quorum > 1 ? `${approvals.length} of ${a.quorum}: ${who}` : who;
}

/** "in 29 min", "in 45 s", "expired 3 min ago". */
export function expiresInWords(expiresAt: number, now = Date.now()): string {
  return expiresAt > now
    ? `in ${durationInWords(expiresAt - now)}`
    : `expired ${durationInWords(now - expiresAt)} ago`;
}

/** "45 s", "29 min", "2 h 10 min", "3 d". */
export function durationInWords(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  return `${Math.round(hours / 24)} d`;
}

/** Rules without a name are known by their place in the config; the default group by that name. */
export function routeName(rule: string): string {
  if (rule === 'defaultGroup') return 'default group';
  if (rule.startsWith('policy ')) return rule;
  return /^rules\[\d+\]$/.test(rule) ? rule : `rule “${rule}”`;
}

type Settled = Pick<StoredApproval, 'outcome' | 'request' | 'status'> &
  Partial<Pick<StoredApproval, 'done' | 'edited'>>;

/**
 * How a request ended, in words: "Approved by carol, dave", "Approved by standing rule sr-… (by carol)", "Denied by
 * bob: not now", "Denied: expired (nobody decided in time)", "Manual step done by carol: took a snapshot first".
 */
export function outcomeInWords(a: Settled): string {
  if (a.done) return `Manual step done by ${a.done.by}${a.done.note ? `: ${a.done.note}` : ''}`;
  const o = a.outcome;
  if (!o) return a.request.reason === 'manual_step' ? 'Notice closed' : 'Settled';
  if (o.decidedBy === 'expired') return 'Denied: expired (nobody decided in time)';
  if (o.decidedBy === 'no_route') return 'Denied: no approver route';
  if (o.rule) return `Approved by standing rule ${o.rule}${ruleAuthor(o.reason)}`;
  if (o.decision === 'respond')
    return `Responded${o.approvers.length ? ` by ${o.approvers.join(', ')}` : ''}: ${o.response ?? ''}`;
  const verb = o.decision === 'approve' ? 'Approved' : 'Denied';
  const by = o.approvers.length
    ? ` by ${o.approvers.join(', ')}`
    : o.decidedBy === 'policy'
      ? ' by policy'
      : '';
  const edited =
    o.decision === 'approve' && o.args && a.edited ? ` (arguments edited by ${a.edited.by})` : '';
  return `${verb}${by}${edited}${o.reason ? `: ${o.reason}` : ''}`;
}

/** "(by carol)" out of a rule decision's reason ("standing rule sr-… (by carol, until …)"). */
function ruleAuthor(reason: string | undefined): string {
  const by = reason && /\(by ([^,)]+)/.exec(reason)?.[1];
  return by ? ` (by ${by})` : '';
}
