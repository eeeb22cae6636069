// The inbox's Rules view: the standing rules in force, with Revoke for rule-writers, and a form to write one.
import type { StandingRule } from '@countersign/contracts';
import type { Approver } from '../../config/approvals-config.schema';
import { escapeHtml } from '../../core/html';
import { expiresInWords } from '../../requests/approval-context';

export function rulesItems(rules: StandingRule[], me: Approver, now = Date.now()): string {
  const writer = me.roles.includes('rule-writer');
  const list =
    rules.length === 0
      ? '<p class="muted" id="empty">No standing rules: every call that needs approval asks a person.</p>'
      : rules.map((rule) => ruleItem(rule, writer, now)).join('\n');
  return (
    list +
    (writer
      ? ruleForm()
      : '<p class="muted">Only principals with the rule-writer role may write or revoke rules.</p>')
  );
}

function ruleItem(rule: StandingRule, writer: boolean, now: number): string {
  const args = rule.args
    ? Object.entries(rule.args)
        .map(([path, globs]) => `${path} = ${typeof globs === 'string' ? globs : globs.join(' | ')}`)
        .join(', ')
    : 'any arguments';
  return `<section class="card rule" data-rule-id="${escapeHtml(rule.id)}">
<h2 style="font-size:16px;margin:0"><code>${escapeHtml(rule.tool)}</code> for <b>${escapeHtml(rule.requester)}</b> <span class="muted" style="font-size:13px">${escapeHtml(rule.id)}</span></h2>
<div class="meta">${escapeHtml(args)} · by ${escapeHtml(rule.createdBy)}${rule.fromCallId ? ' (accepted trust suggestion)' : ''} · expires ${escapeHtml(expiresInWords(Date.parse(rule.expiresAt), now))}${rule.note ? ` · ${escapeHtml(rule.note)}` : ''}</div>
<p>Matching calls are approved by policy, without asking anyone; each is audited with this rule’s ID.</p>
${writer ? `<div class="actions"><button type="button" class="deny" data-revoke="${escapeHtml(rule.id)}">Revoke</button><span class="result muted"></span></div>` : ''}
</section>`;
}

function ruleForm(): string {
  return `<form class="card new-rule"><h2 style="font-size:16px;margin:0 0 8px">Write a standing rule</h2>
<label class="field">Tool <input type="text" name="tool" required maxlength="64" placeholder="restart_service"></label>
<label class="field">Requester <input type="text" name="requester" required maxlength="128" placeholder="alice"></label>
<label class="field">Argument patterns <span class="muted">(optional, one per line: service=payments*)</span><textarea name="args" rows="2"></textarea></label>
<label class="field">Expires in <select name="expiresIn"><option>1d</option><option selected>7d</option><option>30d</option></select></label>
<label class="field">Note <input type="text" name="note" maxlength="500"></label>
<button class="approve" type="submit">Create rule</button><span class="result muted"></span>
<p class="muted">Never for manual_only tools, and never for your own calls.</p></form>`;
}
