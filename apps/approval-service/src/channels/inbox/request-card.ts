// One request as an inbox card: the call, what it is for (approval-context.ts), and what this approver can do with it —
// approve, deny, edit the arguments (a form generated from the tool's JSON schema) and approve the edit, accept a
// trust suggestion as a standing rule, or mark a manual step done. All server-rendered and escaped; the inbox script
// only reads the forms and posts them.
import { RESPONSE_MAX_CHARS } from '@countersign/contracts';
import type { Approver } from '../../config/approvals-config.schema';
import { escapeHtml, relativeAge } from '../../core/html';
import { contextLines, editedHow } from '../../requests/approval-context';
import type { StoredApproval } from '../../requests/approval-types';
import { trustSuggestion } from '../../requests/approval-views';
import { mayDecide, revisionOf } from '../../votes/deciders';

/** Who looks at the card: the signed-in approver, with their groups (what mayDecide asks about). */
export type Viewer = Approver & { groups: readonly string[] };

export function requestCard(a: StoredApproval, me: Viewer, now: number): string {
  const r = a.request;
  const notice = a.status === 'notice';
  const args = a.edited?.args ?? r.args;
  const fingerprint = a.edited?.fingerprint ?? r.fingerprint;
  const lines = contextLines(a, now)
    .map(
      (line) =>
        `<dt>${escapeHtml(line.label)}</dt><dd${line.kind === 'preview' ? ' class="preview"' : ''}>${escapeHtml(line.text)}</dd>`,
    )
    .join('');
  return `<section class="card${notice ? ' notice' : ''}" data-call-id="${escapeHtml(r.callId)}" data-request-id="${escapeHtml(r.requestId)}" data-fp="${escapeHtml(fingerprint)}">
<h2 style="font-size:17px;margin:0"><code>${escapeHtml(r.toolName)}</code>${notice ? ' — manual step' : ''}${a.quorum > 1 && !notice ? ` <span class="muted" style="font-size:13px">needs ${a.quorum} approvers</span>` : ''}</h2>
<div class="meta">requested by <b>${escapeHtml(r.requester)}</b> via agent ${escapeHtml(r.agent)} · ${escapeHtml(relativeAge(a.createdAt, now))} ago${again(a)}</div>
<dl class="context">${lines}</dl>
${editedNote(a)}<pre class="args">${escapeHtml(JSON.stringify(args, null, 2))}</pre>
${suggestion(a, me)}${actions(a, me)}
</section>`;
}

function again(a: StoredApproval): string {
  switch (a.request.reason) {
    case 'interrupted':
      return ' · <b>asked again</b>: a worker stopped while running the approved call';
    case 'definition_changed':
      return ' · <b>asked again</b>: the tool changed since it was requested';
    case 'precondition_changed':
      return ' · <b>asked again</b>: the world changed since the earlier approval (see Precondition)';
    case 'edit_not_applied':
      return ' · <b>asked again</b>: the edited arguments did not pass the worker’s own checks';
    default:
      return '';
  }
}

function editedNote(a: StoredApproval): string {
  if (!a.edited) return '';
  const setAside = a.setAside.filter((v) => v.decision === 'approve').map((v) => v.approver);
  return `<p class="edited">✎ Edited by <b>${escapeHtml(a.edited.by)}</b>${editedHow(a)}; the agent asked for <code>${escapeHtml(JSON.stringify(a.request.args))}</code>.${
    setAside.length > 0
      ? ` Approvals of the earlier arguments (${escapeHtml(setAside.join(', '))}) do not count for these.`
      : ''
  }</p>\n`;
}

/**
 * The trust suggestion, with the button that accepts it for those who may write standing rules, when a rule of theirs
 * could decide this call (mayDecide: not their own, not a runbook gate, a route of one approver).
 */
function suggestion(a: StoredApproval, me: Viewer): string {
  const text = trustSuggestion(a);
  if (!text || a.status !== 'pending') return '';
  const canWrite =
    me.roles.includes('rule-writer') &&
    mayDecide({ kind: 'standing_rule', author: me.id }, revisionOf(a)).allowed;
  const button = canWrite
    ? ` <button type="button" class="make-rule secondary" data-request="${escapeHtml(a.request.requestId)}">Make it a standing rule (7 days)</button>`
    : ' <span class="muted">(someone with the rule-writer role can make it a standing rule)</span>';
  return `<p class="trust">💡 ${escapeHtml(text)}${button}<span class="rule-result muted"></span></p>\n`;
}

function actions(a: StoredApproval, me: Viewer): string {
  const r = a.request;
  const request = escapeHtml(r.requestId);
  const verdict = mayDecide({ kind: 'person', id: me.id, groups: me.groups }, revisionOf(a));
  if (!verdict.allowed && verdict.refusal === 'self_approval')
    return '<p class="muted">This is your own request; another approver must decide.</p>';
  if (!verdict.allowed && verdict.refusal === 'not_in_group')
    return `<p class="muted">Routed to ${escapeHtml(a.groups.join(', '))}; you are not one of its approvers.</p>`;
  if (a.status === 'notice')
    return `<p class="outcome">Manual step required: a person must do this; the agent will not.</p>
<div class="actions"><input type="text" class="note" placeholder="Note (optional): what you did" maxlength="2000" aria-label="Note">
<button type="button" class="approve" data-done="${request}">Mark done</button><span class="result muted"></span></div>`;
  const mine = a.votes.find((v) => v.approver === me.id);
  if (!verdict.allowed && mine) {
    const left = a.quorum - a.votes.filter((v) => v.decision === 'approve').length;
    return `<p class="muted">You approved${mine.edited ? ' your edit' : ''}; waiting for ${left} more approver${left === 1 ? '' : 's'}.</p>`;
  }
  return `<div class="actions"><button type="button" class="approve" data-request="${request}" data-decision="approve">Approve</button>
<button type="button" class="deny" data-request="${request}" data-decision="deny">Deny</button>
<button type="button" class="secondary edit-toggle" data-request="${request}" aria-expanded="false">Edit arguments…</button>
<button type="button" class="secondary respond-toggle" data-request="${request}" aria-expanded="false">Respond…</button><span class="result muted"></span>
<div class="reason-row"><input type="text" class="reason" placeholder="Reason (optional; the model is told it on a deny)" maxlength="2000" aria-label="Reason"></div></div>
${editForm(a)}
${respondForm()}`;
}

/**
 * Respond: answer with text instead of a verdict. The call does not run; the agent is given the text as its result,
 * naming the approver (the service checks it: 1 to 4,000 characters).
 */
function respondForm(): string {
  return `<form class="respond" hidden>
<label>Your response: the call does not run, and the agent is given this text (naming you) as its result, so it re-plans<br>
<textarea class="response" name="response" required maxlength="${RESPONSE_MAX_CHARS}" rows="3" aria-label="Response" placeholder="Not like this: restart only the canary first"></textarea></label>
<p><button type="submit" class="respond">Send response</button></p>
</form>`;
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
};

/**
 * The edit form: one input per argument of the tool's JSON schema (text, number, checkbox, a list for an enum, JSON
 * for anything else), filled with the arguments shown. A tool without a schema the approval service knows offers
 * none: its edit could not be checked.
 */
export function editForm(a: StoredApproval): string {
  const schema = a.tool?.argsSchema as JsonSchema | undefined;
  if (!schema) return '';
  const args = (a.edited?.args ?? a.request.args) as Record<string, unknown>;
  const properties = schema.type === 'object' && schema.properties ? schema.properties : undefined;
  const fields = properties
    ? Object.entries(properties)
        .map(([name, field]) => fieldInput(name, field, args[name], schema.required?.includes(name) ?? false))
        .join('\n')
    : `<label class="field">arguments (JSON)<textarea data-field="" data-type="json-all" rows="4">${escapeHtml(JSON.stringify(args, null, 2))}</textarea></label>`;
  return `<form class="edit" hidden data-request="${escapeHtml(a.request.requestId)}">
<p class="muted">Change the arguments, then approve the edited call. It is checked against the tool’s schema; ${
    a.quorum > 1 ? 'the other approvers are asked about it, and ' : ''
  }the agent is told it ran with your arguments.</p>
${fields}
<button class="approve" type="submit">Approve with these arguments</button></form>`;
}

function fieldInput(name: string, field: JsonSchema, value: unknown, required: boolean): string {
  const type = Array.isArray(field.type) ? field.type.find((t) => t !== 'null') : field.type;
  const label = `${escapeHtml(name)}${required ? '' : ' <span class="muted">(optional)</span>'}${
    field.description ? ` <span class="muted">— ${escapeHtml(field.description)}</span>` : ''
  }`;
  const common = `data-field="${escapeHtml(name)}"${required ? ' required' : ''}`;
  if (field.enum && field.enum.every((v) => typeof v === 'string')) {
    const options = (field.enum as string[])
      .map((v) => `<option${v === value ? ' selected' : ''}>${escapeHtml(v)}</option>`)
      .join('');
    return `<label class="field">${label}<select ${common} data-type="string">${required ? '' : '<option value=""></option>'}${options}</select></label>`;
  }
  if (type === 'string')
    return `<label class="field">${label}<input type="text" ${common} data-type="string" value="${escapeHtml(value ?? '')}"${
      field.maxLength !== undefined ? ` maxlength="${field.maxLength}"` : ''
    }${field.minLength !== undefined ? ` minlength="${field.minLength}"` : ''}></label>`;
  if (type === 'integer' || type === 'number')
    return `<label class="field">${label}<input type="number" ${common} data-type="${type}" step="${type === 'integer' ? '1' : 'any'}" value="${escapeHtml(value ?? '')}"${
      field.minimum !== undefined ? ` min="${field.minimum}"` : ''
    }${field.maximum !== undefined ? ` max="${field.maximum}"` : ''}></label>`;
  if (type === 'boolean')
    return `<label class="field"><input type="checkbox" data-field="${escapeHtml(name)}" data-type="boolean"${value === true ? ' checked' : ''}> ${label}</label>`;
  return `<label class="field">${label} <span class="muted">(JSON)</span><textarea ${common} data-type="json" rows="3">${
    value === undefined ? '' : escapeHtml(JSON.stringify(value, null, 2))
  }</textarea></label>`;
}
