// A verified decision off the queue: record it on the parked call (Lua, compare-and-set on the call ledger), and resume
// the run inline when it completed the frontier. Anything doubtful leaves the call pending.
import { Inject, Injectable } from '@nestjs/common';
import { printableReadableForm } from '@countersign/authorization';
import { AuditLog, type AuditInput } from '@countersign/audit';
import { RunEventName, type RunEvent, type SignedDecision } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { RunLoop } from '../runs/run-loop';
import { RunParking } from '../runs/run-parking';
import type { Lease, StoredDecision } from '../runs/run-state';
import { type ApplyDecisionResult, RunStore } from '../runs/run-store';
import { DecisionSignatures } from './decision-signatures';

@Injectable()
export class DecisionApplier {
  constructor(
    @Inject(DecisionSignatures) private readonly signatures: Pick<DecisionSignatures, 'verify'>,
    @Inject(RunStore) private readonly store: Pick<RunStore, 'applyDecision'>,
    @Inject(RunLoop) private readonly runLoop: Pick<RunLoop, 'resume'>,
    @Inject(RunParking) private readonly parking: Pick<RunParking, 'republish'>,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append' | 'flush'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'decisions'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * `raw` is the message exactly as signed; `decision` its parsed form. Throws ForgedDecisionError when unsigned
   * or forged. `receiptAudited`: this job already recorded the decision and audited its receipt, and comes back
   * only to resume (it waited for a call executing on another worker), so the receipt is not audited again.
   */
  async apply(
    raw: Record<string, unknown>,
    decision: SignedDecision,
    lease: Lease,
    enqueuedAt: number,
    { receiptAudited = false }: { receiptAudited?: boolean } = {},
  ): Promise<ApplyDecisionResult['kind']> {
    const where = { runId: decision.runId, callId: decision.callId, requestId: decision.requestId };
    await this.signatures.verify(raw, decision, 'decision');
    // The receipt is written while the decision is applied (sent first, in the same trip), and is durable before
    // anything runs on it.
    const receipt = receiptAudited ? undefined : this.audit.append(receiptOf(decision));
    receipt?.catch(() => undefined);
    this.audit.flush();
    const running: RunEvent = { type: RunEventName.Status, runId: decision.runId, status: 'running' };
    const result = await this.store.applyDecision(
      decision.runId,
      decision,
      toStored(decision),
      lease,
      [running],
      decidedEvent(decision),
    );
    await receipt;
    this.metrics.decisions.inc({ result: result.kind });
    this.logger.info({ ...where, result: result.kind, decision: decision.decision }, 'decision applied');
    await this.follow(decision, result, lease, enqueuedAt);
    return result.kind;
  }

  /** What the decision script's answer asks for: resume, republish, or audit why nothing applied. */
  private async follow(
    decision: SignedDecision,
    result: ApplyDecisionResult,
    lease: Lease,
    enqueuedAt: number,
  ): Promise<void> {
    switch (result.kind) {
      case 'resume':
      case 'takeover':
        // A resume's script announced the run (`running`); a takeover announces it again.
        return this.runLoop.resume(result.run, lease, enqueuedAt, { announced: result.kind === 'resume' });
      case 'republish':
        // This job resumed the run and parked it again before: its requests may never have gone out.
        return this.parking.republish(result.run);
      case 'recorded':
      case 'duplicate':
        return;
      case 'run_not_found':
      case 'call_not_in_frontier':
        return this.ignored(decision, result.kind);
      case 'stale_attempt':
        return this.ignored(decision, result.kind, {
          pendingAttempt: result.pendingAttempt,
          decisionAttempt: decision.attempt,
        });
      case 'request_mismatch':
        // A decision of another request that used this call ID (an earlier turn, another run): never applied here.
        return this.ignored(decision, result.kind, {
          pendingRequestId: result.pendingRequestId,
          decisionRequestId: decision.requestId,
        });
      case 'fingerprint_mismatch':
        return this.ignored(decision, result.kind, {
          expected: printableReadableForm(result.parked.name, result.parked.args),
          shown: printableReadableForm(decision.shown.toolName, decision.shown.args),
          expectedFingerprint: result.parked.fingerprint,
          decisionFingerprint: decision.fingerprint,
        });
    }
  }

  private async ignored(
    decision: SignedDecision,
    reason: string,
    detail: Record<string, unknown> = {},
  ): Promise<void> {
    const where = { runId: decision.runId, callId: decision.callId };
    await this.audit.append({
      type: 'decision.ignored',
      ...where,
      actor: 'agent-worker',
      detail: { reason, ...detail },
    });
    this.logger.warn({ ...where, reason, ...detail }, 'decision ignored; the call stays unconfirmed');
  }
}

/** The audit entry that says the decision reached a worker (whatever then became of it). */
function receiptOf(decision: SignedDecision): AuditInput {
  return {
    type: 'decision.received',
    runId: decision.runId,
    callId: decision.callId,
    actor: decision.approvers.join(',') || decision.decidedBy,
    detail: {
      decision: decision.decision,
      decidedBy: decision.decidedBy,
      attempt: decision.attempt,
      requestId: decision.requestId,
      ...(decision.args ? { editedArgs: decision.args } : {}),
      ...(decision.rule ? { standingRule: decision.rule } : {}),
      ...(decision.response ? { response: decision.response } : {}),
    },
  };
}

/** What the run's followers are told when the decision is recorded on the call: who decided, and how. */
function decidedEvent(d: SignedDecision): RunEvent {
  return {
    type: RunEventName.Decision,
    runId: d.runId,
    callId: d.callId,
    toolName: d.shown.toolName,
    decision: d.decision,
    decidedBy: d.decidedBy,
    approvers: d.approvers,
    ...(d.rule ? { rule: d.rule } : {}),
    ...(d.reason ? { reason: d.reason } : {}),
    ...(d.response ? { response: d.response } : {}),
  };
}

function toStored(d: SignedDecision): StoredDecision {
  return {
    decision: d.decision,
    decidedBy: d.decidedBy,
    reason: d.reason,
    approvers: d.approvers,
    fingerprint: d.fingerprint,
    decidedAt: d.decidedAt,
    ...(d.args ? { args: d.args } : {}),
    ...(d.rule ? { rule: d.rule } : {}),
    ...(d.response ? { response: d.response } : {}),
    ...(d.precondition ? { precondition: d.precondition } : {}),
  };
}
