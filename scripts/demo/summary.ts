// The demo's closing summary: every tool call of the run, classified from the audit log (the record of what
// really happened), plus the simulated infrastructure and the audit chain check.
import type { AuditEntry, RunView } from '@countersign/contracts';
import type { ApprovalClient } from '../../apps/cli/src/client/approval-client';
import type { InfraView } from '../../apps/cli/src/client/worker-client';
import { compact } from '../../apps/cli/src/render';

export interface SummaryItem {
  callId: string;
  toolName: string;
  args: unknown;
  detail: string;
}

export interface Summary {
  status: RunView['status'];
  ran: SummaryItem[];
  refused: SummaryItem[];
  needsPerson: SummaryItem[];
  /** Calls the audit log says nothing final about (still waiting, or the run stopped). */
  open: SummaryItem[];
}

type Section = Exclude<keyof Summary, 'status'>;

export function calls(run: RunView) {
  return run.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
}

/** Classifies every call; `undefined` while some call has no final audit entry yet. */
export function summarize(run: RunView, audit: AuditEntry[], final = false): Summary | undefined {
  const summary: Summary = { status: run.status, ran: [], refused: [], needsPerson: [], open: [] };
  for (const call of calls(run)) {
    const entries = audit.filter((e) => e.callId === call.id);
    const [section, detail] = classify(entries);
    if (section === 'open' && !final) return undefined;
    summary[section].push({ callId: call.id, toolName: call.name, args: call.args, detail });
  }
  return summary;
}

function classify(entries: AuditEntry[]): [Section, string] {
  const executed = entries.find((e) => e.type === 'tool.executed');
  if (executed) {
    const approvers = executed.detail.approvers as string[] | undefined;
    return [
      'ran',
      approvers?.length ? `approved by ${approvers.join(', ')}` : `by policy (${executed.actor ?? 'auto'})`,
    ];
  }
  const denied = entries.find((e) => e.type === 'tool.denied');
  if (denied) {
    const approvers = denied.detail.approvers as string[] | undefined;
    const reason = denied.detail.reason ? `: "${compact(denied.detail.reason, 120)}"` : '';
    return [
      'refused',
      `denied by ${approvers?.length ? approvers.join(', ') : (denied.actor ?? 'policy')}${reason}`,
    ];
  }
  if (entries.some((e) => e.type === 'request.notice'))
    return ['needsPerson', 'manual_only: never run by the agent; approvers were sent a manual-step notice'];
  return ['open', 'no decision yet'];
}

export function printSummary(
  say: (line: string) => void,
  runId: string,
  summary: Summary,
  infra: InfraView,
  chain: { intact: boolean; entries: number; chains: number },
): void {
  const line = (mark: string, item: SummaryItem) =>
    say(`  ${mark} ${item.toolName} ${compact(item.args)} — ${item.detail}`);
  say('');
  say(`──── Summary of run ${runId} (${summary.status}) ────`);
  say(`What ran (${summary.ran.length}):`);
  summary.ran.forEach((item) => line('✓', item));
  say(`What was refused (${summary.refused.length}):`);
  summary.refused.forEach((item) => line('✗', item));
  say(`What needs a person (${summary.needsPerson.length}):`);
  summary.needsPerson.forEach((item) => line('⚠', item));
  if (summary.open.length) {
    say(`Still open (${summary.open.length}):`);
    summary.open.forEach((item) => line('…', item));
  }
  say(
    `Infrastructure: ${infra.services.map((s) => `${s.name} ${s.status} ×${s.replicas} (${s.restarts} restart${s.restarts === 1 ? '' : 's'})`).join(', ')}; volumes ${infra.volumes.map((v) => v.name).join(', ')}`,
  );
  say(
    `Audit log: ${chain.entries} entries in ${chain.chains} chains (one per writer), hash chains ${chain.intact ? 'intact' : 'BROKEN'}`,
  );
}

/** The audit entries of the run, read as an approver would (GET /audit?runId=). */
export async function runAudit(client: ApprovalClient, runId: string): Promise<AuditEntry[]> {
  return client.audit({ runId });
}
