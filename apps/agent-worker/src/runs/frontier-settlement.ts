// Settling a resumed run's frontier: every decided call ends `done` (a denial told to the model, an approved call run
// once with exactly the approved arguments, or refused when it no longer holds) or goes back to `pending` when it
// must be asked about again. Calls left `executing` by an earlier processing are settled first (CallExecution).
import { Inject, Injectable } from '@nestjs/common';
import { CallState } from '@countersign/call-ledger';
import {
  DecisionBook,
  evaluatePrecondition,
  fingerprint,
  mapWithConcurrency,
  preconditionFailedMessage,
  refusalMessage,
  responseMessage,
  samePrecondition,
  type ReadyCall,
} from '@countersign/authorization';
import { AuditLog, type AuditInput } from '@countersign/audit';
import { DECIDED_CALL_RESULT_CHARS, excerpt } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { DecidedCallResults } from '@countersign/shared-records';
import type { AgentRuntime } from '../agents/agent-builder';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { CallExecution } from './call-execution';
import { callerOf, reasked, toolResultEvent } from './frontier';
import { RunCalls } from './run-calls';
import { RunEvents } from './run-events';
import type { CallResult, FrontierCall, Lease, ParkedCallBody, RunRecord } from './run-state';
import { OwnershipLostError, WrongCallStateError } from './run-store.errors';
import { StickyDenials } from './sticky-denials';

/** Calls of the run are still executing on a live worker (fresh heartbeat): try again later, never re-ask. */
export class CallsInFlightError extends Error {
  constructor(
    readonly runId: string,
    readonly callIds: string[],
    readonly retryAfterMs: number,
  ) {
    super(`run "${runId}" waits for call(s) ${callIds.join(', ')} still executing on another worker`);
    this.name = this.constructor.name;
  }
}

@Injectable()
export class FrontierSettlement {
  private readonly resultsTtlMs: number;

  constructor(
    @Inject(RunCalls) private readonly calls: Pick<RunCalls, 'transitionCall'>,
    @Inject(CallExecution) private readonly execution: CallExecution,
    @Inject(DecidedCallResults) private readonly results: Pick<DecidedCallResults, 'record'>,
    @Inject(RunEvents) private readonly events: Pick<RunEvents, 'publish'>,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'appendAll'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'toolCalls'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
    @Inject(WORKER_CONFIG) { env }: Pick<WorkerConfig, 'env'>,
    @Inject(StickyDenials) private readonly sticky: Pick<StickyDenials, 'keep'>,
  ) {
    this.resultsTtlMs = env.FINISHED_RUN_TTL_SECONDS * 1000;
  }

  /**
   * Brings every decided call of the frontier to `done` (or back to `pending` when it must be asked again).
   * Transitions throw (and the job retries from Redis state) when this worker lost the run: fail closed. `carried`:
   * audit entries that go out with the first tool start or denial (the caller writes what is left).
   */
  async settle(
    run: RunRecord,
    agent: AgentRuntime,
    lease: Lease,
    frontier: FrontierCall[],
    carried: AuditInput[],
  ): Promise<FrontierCall[]> {
    const settled = await mapWithConcurrency(frontier, agent.pipeline.maxConcurrentTools, async (call) => {
      switch (call.state) {
        case CallState.Done:
        case CallState.Refused:
        case CallState.Pending:
          return call;
        case CallState.Interrupted:
          // Never at rest in a run: the step that interrupts a call asks about it again (settle-executing-call).
          throw new WrongCallStateError(run.runId, call.body.id, 'a decided call', call.state);
        case CallState.Denied:
          return this.settleDenied(run, agent, lease, call, carried);
        case CallState.Approved:
          return this.settleApproved(run, agent, lease, call, carried);
        case CallState.Executing:
          return this.execution.takeOver(run, lease, call);
      }
    });
    this.throwIfInFlight(run, settled);
    return settled;
  }

  /** Settles only the calls left `executing` (a resume's first step); throws CallsInFlightError while one is alive. */
  async settleExecutions(run: RunRecord, lease: Lease): Promise<FrontierCall[]> {
    const { frontier } = run;
    if (!frontier.some((call) => call.state === CallState.Executing)) return frontier;
    const settled = await Promise.all(
      frontier.map((call) =>
        call.state === CallState.Executing ? this.execution.takeOver(run, lease, call) : call,
      ),
    );
    this.throwIfInFlight(run, settled);
    return settled;
  }

  private throwIfInFlight(run: RunRecord, frontier: FrontierCall[]): void {
    const inFlight = frontier
      .filter((call) => call.state === CallState.Executing)
      .map((call) => call.body.id);
    if (inFlight.length > 0) throw new CallsInFlightError(run.runId, inFlight, this.execution.retryAfterMs);
  }

  private async settleDenied(
    run: RunRecord,
    agent: AgentRuntime,
    lease: Lease,
    call: FrontierCall,
    carried: AuditInput[],
  ): Promise<FrontierCall> {
    if (call.decision?.decision === 'respond') return this.settleResponded(run, lease, call, carried);
    // Kept before the call is done: a retry after a failure here keeps it again (the same value), never skips it.
    await this.sticky.keep(run, agent, call);
    const content = refusalMessage({ decidedBy: call.decision?.decidedBy, reason: call.decision?.reason });
    const result = { outcome: 'denied', content };
    await this.calls.transitionCall(run.runId, lease, call.body.id, CallState.Denied, CallState.Done, {
      result,
    });
    await Promise.all([
      this.audit.appendAll([
        ...carried.splice(0),
        {
          type: 'tool.denied',
          runId: run.runId,
          callId: call.body.id,
          actor: call.decision?.decidedBy ?? 'person',
          detail: {
            toolName: call.body.name,
            approvers: call.decision?.approvers ?? [],
            reason: call.decision?.reason,
          },
        },
      ]),
      this.recordResult(call, result),
    ]);
    return this.settled(run, call, result);
  }

  /**
   * An approver responded with text instead of a verdict: the call does not run (the ledger keeps it `denied`, a call
   * that is not run), and the model gets their words as the call's result, naming who. Not kept as a sticky denial:
   * a response is guidance, so the same call asked again is asked about again.
   */
  private async settleResponded(
    run: RunRecord,
    lease: Lease,
    call: FrontierCall,
    carried: AuditInput[],
  ): Promise<FrontierCall> {
    const decision = call.decision!;
    const content = responseMessage(call.body.name, decision);
    const result = { outcome: 'responded', content };
    await this.calls.transitionCall(run.runId, lease, call.body.id, CallState.Denied, CallState.Done, {
      result,
    });
    await Promise.all([
      this.audit.appendAll([
        ...carried.splice(0),
        {
          type: 'tool.responded',
          runId: run.runId,
          callId: call.body.id,
          actor: decision.approvers.join(',') || 'person',
          detail: {
            toolName: call.body.name,
            approvers: decision.approvers,
            response: decision.response ?? '',
          },
        },
      ]),
      this.recordResult(call, result),
    ]);
    return this.settled(run, call, result);
  }

  /**
   * Runs an approved call, once, with exactly the approved arguments: the parked ones, or those an approver edited
   * (carried by the signed decision). Either way the pipeline checks them again here (schema, RBAC, callbacks,
   * fingerprint) before anything runs; edited arguments that fail are never replaced by the parked ones.
   */
  private async settleApproved(
    run: RunRecord,
    agent: AgentRuntime,
    lease: Lease,
    call: FrontierCall,
    carried: AuditInput[],
  ): Promise<FrontierCall> {
    const { body } = call;
    const edited = call.decision?.args;
    const changed = await this.definitionChanged(run, agent, call);
    if (changed) return this.reask(run, lease, call, changed);

    // The decision approves the edited arguments' fingerprint (computed here, from the signed arguments), or the
    // parked call's (which the decision script already checked).
    const approvedPrint = edited ? editedFingerprint(body.name, edited) : call.decision!.fingerprint;
    const decisions = new DecisionBook([
      { callId: body.id, ...call.decision!, fingerprint: approvedPrint, shown: undefined },
    ]);
    const toolCall = { id: body.id, name: body.name, args: edited ?? body.args };
    // A call asked about again (pending) carries its precondition as it is now.
    const authorization = await agent.pipeline.withPrecondition(
      await agent.pipeline.authorize(toolCall, { ...callerOf(run), decisions }),
      callerOf(run),
    );
    if (authorization.kind === 'pending_confirmation') {
      // Edited arguments that the tool's own schema reads differently than approvers saw them: ask again about
      // the call as the agent asked it.
      const next = edited
        ? reasked(body, 'edit_not_applied')
        : reasked(body, 'definition_changed', {
            args: authorization.args as Record<string, unknown>,
            fingerprint: authorization.fingerprint,
            definitionHash: authorization.definitionHash,
            precondition: authorization.precondition,
          });
      return this.reask(run, lease, call, next);
    }
    if (authorization.kind !== 'ready') {
      // Refused now (RBAC changed, tool gone, arguments no longer valid): nothing runs, the model is told.
      const content = edited
        ? `An approver edited the arguments to ${JSON.stringify(edited)} and approved, but that call was refused, so nothing ran: ${authorization.content}`
        : authorization.content;
      return this.refuse(run, lease, call, { outcome: authorization.kind, content });
    }
    const held = await this.checkPrecondition(run, lease, call, authorization);
    if (held) return held;
    return this.execute(run, agent, lease, call, authorization, carried);
  }

  /**
   * Right before an approved call runs: its tool's precondition again, over the parked arguments (those the value
   * approvers saw was evaluated for, also when an approver edited them). Undefined
   * when it still has the value the approvers were shown (and the signed decision names), so the call runs. A
   * different value: the call does not run and is asked about again with the new value. A precondition that cannot be
   * evaluated (or no longer exists): the call does not run, and the model is told why (fail closed).
   */
  private async checkPrecondition(
    run: RunRecord,
    lease: Lease,
    call: FrontierCall,
    ready: ReadyCall,
  ): Promise<FrontierCall | undefined> {
    const { body, decision } = call;
    const shown = body.precondition;
    if (!shown && !ready.tool.definition.precondition) return undefined;
    const where = { runId: run.runId, callId: body.id, actor: 'agent-worker' };
    const fresh = await evaluatePrecondition(ready.tool.definition, body.args, {
      ...callerOf(run),
      callId: body.id,
    });
    if (!fresh || !fresh.ok) {
      const error = fresh ? fresh.error : 'the tool no longer declares one';
      await this.audit.appendAll([
        { type: 'tool.precondition_failed', ...where, detail: { toolName: body.name, error } },
      ]);
      return this.refuse(run, lease, call, {
        outcome: 'precondition_failed',
        content: preconditionFailedMessage(body.name, error, 'approved'),
      });
    }
    // The approvers' value, as the signed decision names it: a call parked without one (the tool gained its
    // precondition since) or a decision for another value is asked about again, never run.
    const signedFor = shown !== undefined && decision?.precondition === shown.digest;
    const held = shown !== undefined && samePrecondition(shown, fresh);
    if (held && signedFor) return undefined;
    await this.audit.appendAll([
      {
        type: 'tool.precondition_changed',
        ...where,
        detail: {
          toolName: body.name,
          old: shown?.value ?? null,
          new: fresh.value,
          requestId: body.requestId,
          // A decision that names another value than the request showed approves nothing here.
          ...(signedFor ? {} : { decisionPrecondition: decision?.precondition ?? null }),
        },
      },
    ]);
    const next = reasked(body, 'precondition_changed', {
      precondition: {
        value: fresh.value,
        digest: fresh.digest,
        ...(shown && !held ? { previous: shown.value } : {}),
      },
    });
    return this.reask(run, lease, call, next);
  }

  /**
   * A provider's tool may have changed while the call waited, without a notification reaching us: look again. A
   * deploy that changed the tool since the approver looked means what they approved no longer exists: the re-ask, if
   * the call still waits for a decision as the tool is now.
   */
  private async definitionChanged(
    run: RunRecord,
    agent: AgentRuntime,
    { body }: FrontierCall,
  ): Promise<ParkedCallBody | undefined> {
    await agent.refreshTool?.(body.name);
    const tool = agent.registry.get(body.name);
    if (!tool || tool.definitionHash === body.definitionHash) return undefined;
    const fresh = await agent.pipeline.withPrecondition(
      await agent.pipeline.authorize({ id: body.id, name: body.name, args: body.args }, callerOf(run)),
      callerOf(run),
    );
    if (fresh.kind !== 'pending_confirmation') return undefined;
    return reasked(body, 'definition_changed', {
      args: fresh.args as Record<string, unknown>,
      fingerprint: fresh.fingerprint,
      definitionHash: fresh.definitionHash,
      tier: fresh.tier,
      // The precondition as it is now, for the tool as it is now.
      precondition: fresh.precondition,
    });
  }

  private async execute(
    run: RunRecord,
    agent: AgentRuntime,
    lease: Lease,
    call: FrontierCall,
    ready: ReadyCall,
    carried: AuditInput[],
  ): Promise<FrontierCall> {
    const { body, decision } = call;
    const edited = decision?.args;
    const told = (ran: { kind: string; content: string }): CallResult => ({
      outcome: ran.kind,
      content: edited ? `${editNote(body.args, edited)}\n${ran.content}` : ran.content,
    });
    // The audit keeps both, when an approver edited the arguments: what the agent asked for and what ran.
    const detail = {
      approvers: decision?.approvers ?? [],
      attempt: body.attempt,
      requestId: body.requestId,
      ...(edited ? { args: edited, requestedArgs: body.args } : {}),
      ...(decision?.rule ? { standingRule: decision.rule } : {}),
    };
    const { outcome, stillOwner } = await this.execution.execute(
      run,
      lease,
      body,
      {
        pipeline: agent.pipeline,
        ready,
        ctx: callerOf(run),
        approvedBy: decision?.decidedBy === 'policy' ? 'policy' : 'person',
        detail,
        resultOf: told,
        // The history shows the edited arguments beside it: the tool's own result, without the model's note.
        alongside: (ran) => this.recordResult(call, { outcome: ran.kind, content: ran.content }),
      },
      carried,
    );
    // The script that recorded the result told the run's followers (CallExecution.execute).
    const settled = this.settled(run, call, told(outcome), { told: true });
    // The run was taken over while the tool ran: the new owner continues with this result; this one stops.
    if (!stillOwner) throw new OwnershipLostError(run.runId);
    return settled;
  }

  /** approved -> done without running: the model is told why. */
  private async refuse(
    run: RunRecord,
    lease: Lease,
    call: FrontierCall,
    result: CallResult,
  ): Promise<FrontierCall> {
    await this.calls.transitionCall(run.runId, lease, call.body.id, CallState.Approved, CallState.Done, {
      result,
    });
    await this.recordResult(call, result);
    return this.settled(run, call, result);
  }

  private async reask(
    run: RunRecord,
    lease: Lease,
    call: FrontierCall,
    body: ParkedCallBody,
  ): Promise<FrontierCall> {
    await this.calls.transitionCall(run.runId, lease, call.body.id, CallState.Approved, CallState.Pending, {
      body,
    });
    this.execution.noteReask(run, body);
    return { body, state: CallState.Pending };
  }

  /**
   * A call settled in this resume: counted, logged, and told to the run's followers (`told`: the step that recorded
   * its result did that already).
   */
  private settled(
    run: RunRecord,
    call: FrontierCall,
    result: CallResult,
    { told = false }: { told?: boolean } = {},
  ): FrontierCall {
    this.metrics.toolCalls.inc({ outcome: result.outcome });
    this.logger.info(
      { runId: run.runId, callId: call.body.id, tool: call.body.name, outcome: result.outcome },
      'call settled',
    );
    if (!told) this.events.publish(toolResultEvent(run.runId, call.body, result));
    return { ...call, state: CallState.Done, result };
  }

  /** What became of a decided call, for approvers' history (best effort: the run does not depend on it). */
  private async recordResult(call: FrontierCall, result: CallResult): Promise<void> {
    if (!call.body.requestId) return;
    await this.results
      .record(
        call.body.requestId,
        {
          outcome: result.outcome.slice(0, 40),
          content: excerpt(result.content, DECIDED_CALL_RESULT_CHARS) ?? '',
          ...(call.decision?.args ? { editedArgs: call.decision.args } : {}),
          at: new Date().toISOString(),
        },
        this.resultsTtlMs,
      )
      .catch((error: unknown) =>
        this.logger.warn(
          { callId: call.body.id, requestId: call.body.requestId, err: String(error) },
          'call result not kept for history',
        ),
      );
  }
}

/** The fingerprint of edited arguments; one that cannot be computed matches nothing (so nothing runs). */
function editedFingerprint(toolName: string, args: Record<string, unknown>): string {
  try {
    return fingerprint(toolName, args);
  } catch {
    return '';
  }
}

/** What the model is told before the result of a call an approver edited. */
export function editNote(asked: Record<string, unknown>, ran: Record<string, unknown>): string {
  return (
    `Note: an approver edited the arguments before approving. The call ran with ${JSON.stringify(ran)}, ` +
    `not the ${JSON.stringify(asked)} you asked for.`
  );
}
