// The one check of what the approval service signed (decisions, and "manual step done" notes): a message whose
// signature verifies with no configured secret is audited as `decision.rejected` and refused (ForgedDecisionError,
// which fails its job for good). Nothing of it is applied.
import { Inject, Injectable } from '@nestjs/common';
import { verifyPayloadSignature } from '@countersign/authorization';
import { AuditLog } from '@countersign/audit';
import type { Logger } from '@countersign/platform';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { ForgedDecisionError } from '../runs/run-job-guard';

/** Which run, call and request a signed message is about. */
export interface SignedAbout {
  runId: string;
  callId: string;
  requestId: string;
}

export type SignedKind = 'decision' | 'manual_step_done';

@Injectable()
export class DecisionSignatures {
  /** The current DECISION_SIGNING_SECRET, then the previous one while a rotation is under way. */
  private readonly secrets: readonly string[];

  constructor(
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'decisions'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
    @Inject(WORKER_CONFIG) { env }: Pick<WorkerConfig, 'env'>,
  ) {
    this.secrets = [env.DECISION_SIGNING_SECRET, env.DECISION_SIGNING_PREVIOUS_SECRET].filter(
      (secret): secret is string => secret !== undefined,
    );
  }

  /** `raw` is the message exactly as signed. Throws ForgedDecisionError, after auditing, when unsigned or forged. */
  async verify(raw: Record<string, unknown>, about: SignedAbout, kind: SignedKind): Promise<void> {
    if (this.secrets.some((secret) => verifyPayloadSignature(raw, secret))) return;
    const { runId, callId, requestId } = about;
    if (kind === 'decision') this.metrics.decisions.inc({ result: 'rejected' });
    await this.audit.append({
      type: 'decision.rejected',
      runId,
      callId,
      actor: 'agent-worker',
      detail: {
        reason: 'missing or invalid signature',
        ...(kind === 'decision' ? {} : { kind }),
        requestId,
      },
    });
    this.logger.warn({ runId, callId, requestId, kind }, 'decision rejected: bad signature');
    throw new ForgedDecisionError(callId);
  }
}
