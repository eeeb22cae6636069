// A person did a manual step of a run (signed by the approval service, like a decision): the run keeps a note for
// its model's next turn, and its history says so. Approves nothing and runs nothing.
import { Inject, Injectable } from '@nestjs/common';
import { AuditLog } from '@countersign/audit';
import { RunEventName, type SignedManualStepDone } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { WORKER_LOGGER } from '../core/worker-logger';
import { RunStore } from '../runs/run-store';
import { DecisionSignatures } from './decision-signatures';

@Injectable()
export class ManualStepNotes {
  constructor(
    @Inject(DecisionSignatures) private readonly signatures: Pick<DecisionSignatures, 'verify'>,
    @Inject(RunStore) private readonly store: Pick<RunStore, 'noteManualStep'>,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
  ) {}

  /** Throws ForgedDecisionError when unsigned or forged. Returns what became of the note (noted, again, no_run). */
  async note(raw: Record<string, unknown>, done: SignedManualStepDone): Promise<string> {
    const where = { runId: done.runId, callId: done.callId };
    await this.signatures.verify(raw, done, 'manual_step_done');
    const text =
      `A person did the manual step ${done.toolName} ${JSON.stringify(done.args)} that you could not run ` +
      `(marked done by ${done.doneBy}${done.note ? `: "${done.note}"` : ''}).`;
    const noted = await this.store.noteManualStep(
      done.runId,
      { requestId: done.requestId, callId: done.callId, text },
      { type: RunEventName.Text, runId: done.runId, text: `Manual step done: ${text}` },
    );
    if (noted.kind === 'noted')
      await this.audit.append({
        type: 'manual_step.noted',
        ...where,
        actor: done.doneBy,
        detail: { toolName: done.toolName, runStatus: noted.status, requestId: done.requestId },
      });
    this.logger.info(
      { ...where, requestId: done.requestId, result: noted.kind },
      'manual step noted for the model',
    );
    return noted.kind;
  }
}
