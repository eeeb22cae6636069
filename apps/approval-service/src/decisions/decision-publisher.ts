// Builds, signs and publishes decisions. The fingerprint is computed from exactly what approvers were shown.
import { Inject, Injectable } from '@nestjs/common';
import {
  ApprovalServiceJobName,
  approvalServiceJobIds,
  DecisionSchema,
  JobName,
  jobIds,
  ManualStepDoneSchema,
  NotifyWebhookJobSchema,
  parseContract,
  QueueName,
  SignedDecisionSchema,
  SignedManualStepDoneSchema,
  type ApprovalRequest,
  type SignedDecision,
  type SignedManualStepDone,
} from '@countersign/contracts';
import { fingerprint, withSignature } from '@countersign/authorization';
import { Queues } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { Outcome } from '../requests/approval-types';

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
        requestId: request.requestId,
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
        // The respond's text is signed with the rest, so the worker refuses a text changed on the way.
        ...(outcome.decision === 'respond' && outcome.response ? { response: outcome.response } : {}),
        // The state of the world the approvers were shown, when the tool declares a precondition.
        ...(request.precondition ? { precondition: request.precondition.digest } : {}),
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
        requestId: request.requestId,
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
    await this.queues.forKey(QueueName.ApprovalDecisions, request.runId).add(JobName.ManualStepDone, signed, {
      jobId: jobIds.manualStepDone(request.requestId),
    });
    return signed;
  }

  /**
   * Idempotent: the job ID is derived from the request ID. An external call's decision is not the worker's (it knows
   * no such call): its client reads it from the approvals API, and is told by webhook when it gave one. A run's
   * decision rides its run's queue shard; a webhook job, the shard of the external approval's own ID.
   */
  async publish(request: ApprovalRequest, outcome: Outcome): Promise<SignedDecision> {
    const signed = this.sign(request, outcome);
    const { requestId, callId, attempt } = request;
    if (!request.external) {
      await this.queues
        .forKey(QueueName.ApprovalDecisions, request.runId)
        .add(JobName.Decision, signed, { jobId: jobIds.decision(requestId) });
    } else if (request.external.webhookUrl) {
      const job = parseContract(NotifyWebhookJobSchema, { requestId, callId, attempt }, 'webhook job');
      await this.queues
        .forKey(QueueName.ApprovalNotifications, requestId)
        .add(ApprovalServiceJobName.NotifyWebhook, job, {
          jobId: approvalServiceJobIds.notifyWebhook(requestId, attempt),
        });
    }
    return signed;
  }
}
