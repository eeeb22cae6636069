// A decision off the queue: verify its signature, record it on the parked call (Lua, compare-and-set),
// and resume the run inline when it completed the frontier. Anything doubtful leaves the call pending.
import { printableReadableForm, verifyPayloadSignature } from '@countersign/authorization';
import {
  RunEventName,
  type RunEvent,
  type SignedDecision,
  type SignedManualStepDone,
} from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AuditInput, AuditLog } from '@countersign/audit';
import type { WorkerMetrics } from '../observability/worker-metrics';
import type { RunLoop } from './run-loop';
import type { Lease, StoredDecision } from './run-state';
import type { ApplyDecisionResult, RunStore } from './run-store';

export class ForgedDecisionError extends Error {
  constructor(callId: string) {
    super(`decision for call "${callId}" has a missing or invalid signature; nothing ran`);
    this.name = this.constructor.name;
  }
}

export interface DecisionsDeps {
  store: RunStore;
  runLoop: RunLoop;
  audit: AuditLog;
  metrics: WorkerMetrics;
  logger: Logger;
  /** The current DECISION_SIGNING_SECRET, then the previous one while a rotation is under way. */
  signingSecrets: readonly string[];
}

export class Decisions {
  constructor(private readonly deps: DecisionsDeps) {}

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
    const { store, audit, metrics, logger, runLoop } = this.deps;
    const where = { runId: decision.runId, callId: decision.callId, requestId: decision.requestId };

    if (!this.deps.signingSecrets.some((secret) => verifyPayloadSignature(raw, secret))) {
      metrics.decisions.inc({ result: 'rejected' });
      await audit.append({
        type: 'decision.rejected',
        runId: decision.runId,
        callId: decision.callId,
        actor: 'agent-worker',
        detail: { reason: 'missing or invalid signature', requestId: decision.requestId },
      });
      logger.warn(where, 'decision rejected: bad signature');
      throw new ForgedDecisionError(decision.callId);
    }
    // The receipt is written while the decision is applied (sent first, in the same trip), and is durable before
    // anything runs on it.
    const receipt = receiptAudited ? undefined : audit.append(receiptOf(decision));
    receipt?.catch(() => undefined);
    audit.flush();
    const running: RunEvent = { type: RunEventName.Status, runId: decision.runId, status: 'running' };
    const result = await store.applyDecision(decision.runId, decision, toStored(decision), lease, [running]);
    await receipt;
    metrics.decisions.inc({ result: result.kind });
    logger.info({ ...where, result: result.kind, decision: decision.decision }, 'decision applied');
    switch (result.kind) {
      case 'resume':
      case 'takeover':
        // A resume's script announced the run (`running`); a takeover announces it again.
        await runLoop.resume(result.run, lease, enqueuedAt, { announced: result.kind === 'resume' });
        break;
      case 'republish':
        // This job resumed the run and parked it again before: its requests may never have gone out.
        await runLoop.republish(result.run);
        break;
      case 'recorded':
      case 'duplicate':
        break;
      case 'run_not_found':
      case 'call_not_in_frontier':
        await this.ignored(decision, result.kind);
        break;
      case 'stale_attempt':
        await this.ignored(decision, result.kind, {
          pendingAttempt: result.pendingAttempt,
          decisionAttempt: decision.attempt,
        });
        break;
      case 'request_mismatch':
        // A decision of another request that used this call ID (an earlier turn, another run): never applied here.
        await this.ignored(decision, result.kind, {
          pendingRequestId: result.pendingRequestId,
          decisionRequestId: decision.requestId,
        });
        break;
      case 'fingerprint_mismatch':
        await this.ignored(decision, result.kind, {
          expected: printableReadableForm(result.parked.name, result.parked.args),
          shown: printableReadableForm(decision.shown.toolName, decision.shown.args),
          expectedFingerprint: result.parked.fingerprint,
          decisionFingerprint: decision.fingerprint,
        });
        break;
    }
    return result.kind;
  }

  /**
   * A person did a manual step of a run (signed by the approval service, like a decision): the run keeps a note for
   * its model's next turn, and its history says so. Approves nothing and runs nothing. Throws ForgedDecisionError
   * when unsigned or forged.
   */
  async noteManualStep(raw: Record<string, unknown>, done: SignedManualStepDone): Promise<string> {
    const { store, audit, logger } = this.deps;
    const where = { runId: done.runId, callId: done.callId };
    if (!this.deps.signingSecrets.some((secret) => verifyPayloadSignature(raw, secret))) {
      await audit.append({
        type: 'decision.rejected',
        ...where,
        actor: 'agent-worker',
        detail: {
          reason: 'missing or invalid signature',
          kind: 'manual_step_done',
          requestId: done.requestId,
        },
      });
      throw new ForgedDecisionError(done.callId);
    }
    const text =
      `A person did the manual step ${done.toolName} ${JSON.stringify(done.args)} that you could not run ` +
      `(marked done by ${done.doneBy}${done.note ? `: "${done.note}"` : ''}).`;
    const noted = await store.noteManualStep(
      done.runId,
      { requestId: done.requestId, callId: done.callId, text },
      { type: RunEventName.Text, runId: done.runId, text: `Manual step done: ${text}` },
    );
    if (noted.kind === 'noted')
      await audit.append({
        type: 'manual_step.noted',
        ...where,
        actor: done.doneBy,
        detail: { toolName: done.toolName, runStatus: noted.status, requestId: done.requestId },
      });
    logger.info(
      { ...where, requestId: done.requestId, result: noted.kind },
      'manual step noted for the model',
    );
    return noted.kind;
  }

  private async ignored(
    decision: SignedDecision,
    reason: string,
    detail: Record<string, unknown> = {},
  ): Promise<void> {
    const where = { runId: decision.runId, callId: decision.callId };
    await this.deps.audit.append({
      type: 'decision.ignored',
      ...where,
      actor: 'agent-worker',
      detail: { reason, ...detail },
    });
    this.deps.logger.warn({ ...where, reason, ...detail }, 'decision ignored; the call stays unconfirmed');
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
    },
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
  };
}
