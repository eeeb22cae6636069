// What becomes of each admission hook's answer or failure (libs/admission): an audit entry (`admission.answered` or
// `admission.failed`) and the hook's latency in the worker's metrics.
import { Inject, Injectable } from '@nestjs/common';
import type { HookEvent } from '@countersign/admission';
import { AuditLog } from '@countersign/audit';
import { WorkerMetrics } from '../core/worker-metrics';

/** Characters of a skip's content kept in the audit entry (the model gets all of it). */
const AUDITED_CONTENT = 1_000;

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
    await this.audit.append({
      type: event.outcome === 'failed' ? 'admission.failed' : 'admission.answered',
      runId: event.runId,
      callId: event.callId,
      actor: `hook:${event.hook}`,
      detail: {
        hook: event.hook,
        stage: event.stage,
        toolName: event.toolName,
        outcome: event.outcome,
        ms: event.ms,
        ...(event.reason ? { reason: event.reason } : {}),
        ...(event.answer ? { answer: audited(event.answer) } : {}),
      },
    });
  }
}

/** The answer as audited: a replaced result is left out (it may be what was redacted), a skip's content shortened. */
function audited(answer: unknown): unknown {
  const { result: _result, content, ...rest } = answer as { result?: unknown; content?: unknown };
  if (typeof content === 'string') return { ...rest, content: content.slice(0, AUDITED_CONTENT) };
  return rest;
}
