// What becomes of each admission hook's answer or failure (libs/admission): an audit entry (`admission.answered` or
// `admission.failed`, as libs/admission writes it) and the hook's latency in the worker's metrics.
import { Inject, Injectable } from '@nestjs/common';
import { admissionAuditEntry, type HookEvent } from '@countersign/admission';
import { AuditLog } from '@countersign/audit';
import { WorkerMetrics } from '../core/worker-metrics';

@Injectable()
export class AdmissionRecorder {
  constructor(
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'admissionHookSeconds'>,
  ) {}

  /** Awaited before the call goes on: a before-hook's answer is durable before anything acts on it. */
  async record(event: HookEvent): Promise<void> {
    this.metrics.admissionHookSeconds.observe(
      { hook: event.hook, stage: event.stage, outcome: event.outcome },
      event.ms / 1000,
    );
    await this.audit.append(admissionAuditEntry(event));
  }
}
