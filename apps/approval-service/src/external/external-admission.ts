// The approvals API's admission hooks (APPROVALS_CONFIG `admission.beforeTool`): asked in order about each call
// submitted, through libs/admission's client (signed, timed, audited as `admission.*` like the worker's). allow: the
// next hook, then people as usual; confirm: people of the groups and quorum the hook named (the request's `admission`,
// which routing honours); deny, skip, abort or no usable answer (fail closed): the call is decided `deny` at once.
import { Inject, Injectable } from '@nestjs/common';
import { admissionAuditEntry, askBeforeHook, type HookEvent } from '@countersign/admission';
import type { ApprovalRequest } from '@countersign/contracts';
import { matchesAny } from '@countersign/tool-providers';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';

/** Characters of a hook's reason or skip content kept in the decision's reason. */
const MAX_REASON = 1_000;

export type SubmissionVerdict =
  | { action: 'ask'; admission?: NonNullable<ApprovalRequest['admission']> }
  | { action: 'deny'; hook: string; answer: string; reason: string };

@Injectable()
export class ExternalAdmission {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly audit: AuditTrail,
    private readonly metrics: Metrics,
  ) {}

  /** What the configured hooks say about a submitted call (`request` as it will be taken in). */
  async admit(request: ApprovalRequest): Promise<SubmissionVerdict> {
    const ctx = {
      runId: request.runId,
      agent: request.agent,
      userId: request.requester,
      scopes: [],
      callId: request.callId,
      toolName: request.toolName,
      args: request.args,
      tier: request.tier,
    };
    for (const hook of this.config.admissionHooks) {
      if (!matchesAny(request.toolName, hook.tools)) continue;
      const reply = await askBeforeHook(hook, ctx, { observe: (event) => this.record(event) });
      const by = `admission hook ${hook.name}`;
      if (!reply.ok) return denied(hook.name, 'failed', `${by} ${reply.reason}`);
      const answer = reply.answer;
      switch (answer.action) {
        case 'allow':
          continue;
        case 'confirm':
          return {
            action: 'ask',
            admission: {
              hook: hook.name,
              ...(answer.groups ? { groups: answer.groups } : {}),
              ...(answer.quorum ? { quorum: answer.quorum } : {}),
            },
          };
        case 'deny':
          return denied(hook.name, 'deny', `${by}: ${answer.reason}`);
        case 'abort':
          return denied(hook.name, 'abort', `${by} aborted the run: ${answer.reason}`);
        case 'skip':
          return denied(hook.name, 'skip', `${by} skipped the call: ${answer.content}`);
      }
    }
    return { action: 'ask' };
  }

  /** Awaited before the submission goes on: the hook's answer is durable before anything acts on it. */
  private async record(event: HookEvent): Promise<void> {
    this.metrics.admissionHookSeconds.observe(
      { hook: event.hook, stage: event.stage, outcome: event.outcome },
      event.ms / 1000,
    );
    await this.audit.append(admissionAuditEntry(event));
  }
}

function denied(hook: string, answer: string, reason: string): SubmissionVerdict {
  return { action: 'deny', hook, answer, reason: reason.slice(0, MAX_REASON) };
}
