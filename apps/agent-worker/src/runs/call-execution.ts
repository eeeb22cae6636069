// Executing an approved call, on the call ledger: claim it under a fresh execution token, keep its heartbeat fresh
// while the tool runs, record its result by that token (whoever owns the run by then). And the other side: a worker
// that took a run over and finds a call still executing waits for a live executor, takes a finished one's result, and
// has a dead one's call interrupted and asked about again, never run again on its own.
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CallState } from '@countersign/call-ledger';
import type { CallerContext, ReadyCall, ToolCallOutcome, ToolCallPipeline } from '@countersign/authorization';
import { AuditLog, type AuditInput } from '@countersign/audit';
import type { Logger } from '@countersign/platform';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { executionEntry } from './execution-audit';
import { reasked, toolResultEvent } from './frontier';
import { RunCalls } from './run-calls';
import type { CallResult, FrontierCall, Lease, ParkedCallBody, RunRecord } from './run-state';
import { ExecutionLostError } from './run-store.errors';

/** An approved call ready to run, and what its caller does with the outcome. */
export interface ApprovedCall {
  pipeline: ToolCallPipeline;
  ready: ReadyCall;
  ctx: CallerContext;
  /** Who approved it (`person` or `policy`), and what every audit entry of its execution says. */
  approvedBy: string;
  detail: Record<string, unknown>;
  /** What the model is told of the outcome: stored as the call's result. */
  resultOf(outcome: ToolCallOutcome): CallResult;
  /** Written beside the audit entry of how it ended. */
  alongside(outcome: ToolCallOutcome): Promise<void>;
}

/** What ran, and whether this processing still owns the run. */
export interface Execution {
  outcome: ToolCallOutcome;
  stillOwner: boolean;
}

@Injectable()
export class CallExecution {
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;

  constructor(
    @Inject(RunCalls) private readonly calls: RunCalls,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append' | 'appendAll'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'toolCalls'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
    @Inject(WORKER_CONFIG) { env }: Pick<WorkerConfig, 'env'>,
  ) {
    this.heartbeatMs = env.EXECUTION_HEARTBEAT_MS;
    this.staleAfterMs = env.EXECUTION_STALE_MS;
  }

  /**
   * Runs an approved call once: claimed (approved -> executing), audited as started before the tool runs (`carried`
   * entries go out in the same append), executed under its heartbeat, its result recorded by the execution token and
   * told to the run's followers (a `tool_result` event, `resultOf` the outcome) in the same step.
   * Throws ExecutionLostError when the call was declared interrupted while it ran (its result is not recorded; the
   * re-ask stands).
   */
  async execute(
    run: RunRecord,
    lease: Lease,
    body: ParkedCallBody,
    call: ApprovedCall,
    carried: AuditInput[],
  ): Promise<Execution> {
    const executionToken = randomUUID();
    await this.calls.startCall(run.runId, lease, body.id, executionToken);
    // Durable before the tool runs: whatever happens next, the log shows an action that may have changed the world.
    await this.audit.appendAll([
      ...carried.splice(0),
      executionEntry(run.runId, body, call.approvedBy, 'started', call.detail),
    ]);
    this.logger.info(
      { runId: run.runId, callId: body.id, tool: body.name, edited: 'args' in call.detail },
      'executing approved call',
    );
    const outcome = await this.withHeartbeat(run.runId, body.id, executionToken, () =>
      call.pipeline.execute(call.ready, call.ctx),
    );
    const ended = outcome.kind === 'executed' ? 'executed' : 'failed';
    const endDetail = { ...call.detail, ...(outcome.kind === 'error' ? { error: outcome.message } : {}) };
    // Recorded by the execution token, not by run ownership: a result is never thrown away for a takeover. The run's
    // followers hear it from the same script call (no events call of its own).
    const result = call.resultOf(outcome);
    const recorded = await this.calls
      .completeCall(run.runId, lease, body.id, executionToken, result, [
        toolResultEvent(run.runId, body, result),
      ])
      .catch(async (error: unknown) => {
        if (error instanceof ExecutionLostError) {
          // Declared dead (stale heartbeat) though it ran: the re-ask stands, but the audit says what happened.
          const entry = executionEntry(run.runId, body, 'person', ended, { ...endDetail, recorded: false });
          await this.audit.appendAll([entry]);
          this.logger.error(
            { runId: run.runId, callId: body.id },
            'call ran after it was declared interrupted',
          );
        }
        throw error;
      });
    await Promise.all([
      this.audit.appendAll([executionEntry(run.runId, body, call.approvedBy, ended, endDetail)]),
      call.alongside(outcome),
    ]);
    return { outcome, stillOwner: recorded.stillOwner };
  }

  /**
   * We own the run and the call is still `executing` under an earlier processing. A fresh heartbeat means
   * its executor is alive: leave it (the caller waits). Done meanwhile: take its result. Stale: the executor
   * died mid-call; never re-run it on our own, ask again.
   */
  async takeOver(run: RunRecord, lease: Lease, call: FrontierCall): Promise<FrontierCall> {
    const next = reasked(call.body, 'interrupted');
    const where = { runId: run.runId, callId: call.body.id };
    const found = await this.calls.settleExecutingCall(
      run.runId,
      lease,
      call.body.id,
      this.staleAfterMs,
      next,
    );
    switch (found.kind) {
      case 'in_flight':
        this.logger.info(
          { ...where, heartbeatAgeMs: found.heartbeatAgeMs },
          'call still executing elsewhere; waiting',
        );
        return call;
      case 'done':
        this.logger.info(
          { ...where, outcome: found.result.outcome },
          'call finished by its executor; continuing',
        );
        return { ...call, state: CallState.Done, result: found.result };
      case 'interrupted':
        await this.audit.append({
          type: 'tool.interrupted',
          ...where,
          actor: 'agent-worker',
          detail: {
            toolName: call.body.name,
            attempt: call.body.attempt,
            requestId: call.body.requestId,
            nextAttempt: next.attempt,
          },
        });
        this.metrics.toolCalls.inc({ outcome: 'interrupted' });
        this.noteReask(run, next);
        return { body: next, state: CallState.Pending };
    }
  }

  /** How long a job waits before it looks again at calls executing on a live worker. */
  get retryAfterMs(): number {
    return this.heartbeatMs;
  }

  /** A call asked about again (interrupted here; definition changed or edit not applied in the settlement). */
  noteReask(run: Pick<RunRecord, 'runId'>, body: ParkedCallBody): void {
    this.metrics.toolCalls.inc({ outcome: 'reasked' });
    this.logger.warn(
      { runId: run.runId, callId: body.id, reason: body.reason, attempt: body.attempt },
      'call asked about again',
    );
  }

  /** Keeps the call's heartbeat fresh while `work` runs, so a worker that takes the run over waits instead of re-asking. */
  private async withHeartbeat<T>(
    runId: string,
    callId: string,
    executionToken: string,
    work: () => Promise<T>,
  ): Promise<T> {
    const timer = setInterval(() => {
      this.calls.heartbeatCall(runId, callId, executionToken).then(
        (alive) => {
          if (alive) return;
          clearInterval(timer);
          this.logger.warn({ runId, callId }, 'call declared interrupted while it still executes');
        },
        (error: unknown) => this.logger.warn({ runId, callId, err: String(error) }, 'call heartbeat failed'),
      );
    }, this.heartbeatMs);
    timer.unref();
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }
}
