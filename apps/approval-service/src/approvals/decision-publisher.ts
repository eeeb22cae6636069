// Builds, signs and publishes decisions. The fingerprint is computed from exactly what approvers were shown.
import { Inject, Injectable } from '@nestjs/common';
import {
  DecisionSchema,
  JobName,
  jobIds,
  ManualStepDoneSchema,
  parseContract,
  SignedDecisionSchema,
  SignedManualStepDoneSchema,
  type ApprovalRequest,
  type SignedDecision,
  type SignedManualStepDone,
} from '@countersign/contracts';
import { fingerprint, withSignature } from '@countersign/authorization';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { Queues } from '../core/queues';
import type { Outcome } from './approval-store';

@Injectable()
export class DecisionPublisher {
  private readonly secret: string;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    private readonly queues: Queues,
  ) {
    this.secret = env.DECISION_SIGNING_SECRET;
  }

  /** Deterministic for a given outcome (same decidedAt, same signature), so a re-publish is a duplicate. */
  sign(request: ApprovalRequest, outcome: Outcome): SignedDecision {
    const decision = parseContract(
      DecisionSchema,
      {
        callId: request.callId,
        runId: request.runId,
        decision: outcome.decision,
        decidedBy: outcome.decidedBy,
        reason: outcome.reason,
        approvers: outcome.approvers,
        fingerprint: fingerprint(request.toolName, request.args),
        shown: { toolName: request.toolName, args: request.args },
        attempt: request.attempt,
        decidedAt: outcome.decidedAt,
        // Only when set: a decision without them signs exactly as before.
        ...(outcome.args && outcome.decision === 'approve' ? { args: outcome.args } : {}),
        ...(outcome.rule ? { rule: outcome.rule } : {}),
      },
      'decision',
    );
    if (decision.reason === undefined) delete decision.reason;
    return parseContract(SignedDecisionSchema, withSignature(decision, this.secret), 'signed decision');
  }

  /** Tells the run's worker that a person did a notice's manual step. Idempotent: one job ID per notice. */
  async publishManualStepDone(
    request: ApprovalRequest,
    done: { by: string; at: string; note?: string },
  ): Promise<SignedManualStepDone> {
    const message = parseContract(
      ManualStepDoneSchema,
      {
        callId: request.callId,
        runId: request.runId,
        toolName: request.toolName,
        args: request.args,
        doneBy: done.by,
        doneAt: done.at,
        ...(done.note ? { note: done.note } : {}),
      },
      'manual step done',
    );
    const signed = parseContract(
      SignedManualStepDoneSchema,
      withSignature(message, this.secret),
      'signed manual step done',
    );
    await this.queues.decisions.add(JobName.ManualStepDone, signed, {
      jobId: jobIds.manualStepDone(request.callId),
    });
    return signed;
  }

  /** Idempotent: the job ID is derived from the call ID and attempt. */
  async publish(request: ApprovalRequest, outcome: Outcome): Promise<SignedDecision> {
    const signed = this.sign(request, outcome);
    await this.queues.decisions.add(JobName.Decision, signed, {
      jobId: jobIds.decision(request.callId, request.attempt),
    });
    return signed;
  }
}
