// The agent loop: model turn → every call through the pipeline → park on a pending frontier, or
// feed the results back for the next turn. Resuming settles the frontier (each approved call runs
// at most once, guarded by compare-and-set in Redis) and gives the model exactly one follow-up turn.
// An approved call executes under its own token and heartbeat: a worker that takes the run over
// waits for a live executor's result, and re-asks only when the executor's heartbeat went stale.
import { randomUUID } from 'node:crypto';
import {
  DecisionBook,
  fingerprint,
  mapWithConcurrency,
  previewCall,
  refusalMessage,
  type CallerContext,
  type RegisteredTool,
  type ToolCallOutcome,
} from '@countersign/authorization';
import {
  type ChatMessage,
  DECIDED_CALL_RESULT_CHARS,
  excerpt,
  jobIds,
  REQUEST_CONTEXT_LIMITS,
  RunEventName,
  type RunEvent,
  type StartRunJob,
} from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AuditInput, AuditLog } from '@countersign/audit';
import type { DecidedCallResults, ToolCatalog } from '@countersign/shared-records';
import type { AgentCatalog, AgentRuntime } from '../agents/agent-catalog';
import type { ModelToolCall } from '../models/chat-model';
import type { WorkerMetrics } from '../observability/worker-metrics';
import type { ApprovalRequestsProducer } from '../queues/producers';
import {
  callContext,
  hasRequest,
  isWaiting,
  manualStepBody,
  reasked,
  toApprovalRequest,
  toFrontierCall,
  toolMessages,
  toPendingCall,
} from './frontier';
import type { RunEvents } from './run-events';
import { CallState } from '@countersign/call-ledger';
import {
  type CallResult,
  type FrontierCall,
  type Lease,
  type ManualNote,
  type ParkedCallBody,
  type RunRecord,
} from './run-state';
import type { RunCalls } from './run-calls';
import type { NewRun, RunStore } from './run-store';
import type { UnpublishedRequests } from './unpublished-requests';
import { ExecutionLostError, OwnershipLostError, WrongCallStateError } from './run-store.errors';
import { TestFaults } from './test-faults';

export interface RunLoopDeps {
  store: RunStore;
  calls: RunCalls;
  unpublished: UnpublishedRequests;
  catalog: AgentCatalog;
  approvals: ApprovalRequestsProducer;
  events: RunEvents;
  audit: AuditLog;
  metrics: WorkerMetrics;
  logger: Logger;
  execution: ExecutionTimings;
  /** Test only (COUNTERSIGN_TEST_FAULTS): none in a deployment. */
  faults?: TestFaults;
  /** Where approvers read what a tool does (stored once per definition). Absent in unit tests of the loop. */
  tools?: ToolCatalog;
  /** Where approvers' history reads what became of a decided call, and for how long. Absent in unit tests. */
  results?: { store: DecidedCallResults; ttlMs: number };
}

/** How an executing call shows it is alive; see EXECUTION_HEARTBEAT_MS and EXECUTION_STALE_MS. */
export interface ExecutionTimings {
  /** How often an executor renews its call's heartbeat. */
  heartbeatMs: number;
  /** A heartbeat at least this old means the executor died: the call is interrupted and asked about again. */
  staleAfterMs: number;
}

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

export class RunLoop {
  private readonly faults: TestFaults;

  constructor(private readonly deps: RunLoopDeps) {
    this.faults = deps.faults ?? new TestFaults();
  }

  /** A `run.start` job: claim the run (or take it over from a dead worker) and advance it. */
  async start(job: StartRunJob, lease: Lease): Promise<void> {
    const { store, logger } = this.deps;
    const claim = await store.claimRun(toNewRun(job), lease);
    if (claim.kind === 'skip' || claim.kind === 'not_found') {
      logger.debug({ runId: job.runId, claim: claim.kind }, 'run start: nothing to do');
      return;
    }
    const { run } = claim;
    if (claim.kind === 'republish') return this.republish(run);
    const agent = this.deps.catalog.get(run.agent);
    if (!agent?.model) {
      await this.finish(run, lease, {
        status: 'failed',
        error: `agent "${run.agent}" cannot run: ${agent?.unavailable ?? 'it is not configured'}`,
      });
      return;
    }
    this.deps.metrics.runsStarted.inc();
    logger.info({ runId: run.runId, agent: run.agent, userId: run.userId }, 'run started');
    this.emit({ type: RunEventName.Status, runId: run.runId, status: 'running' });
    await this.advance(run, agent, lease);
  }

  /**
   * The last decision of a frontier arrived (or its job was redelivered): continue the run, as the decision
   * script left it (it handed the run to this processing and read it in the same step). `announced`: that script
   * already added the `running` event.
   */
  async resume(
    loaded: RunRecord,
    lease: Lease,
    decisionEnqueuedAt: number,
    { announced = false }: { announced?: boolean } = {},
  ): Promise<void> {
    const { metrics, logger } = this.deps;
    const { runId } = loaded;
    // First the calls an earlier processing left executing, so waiting on a live executor costs no audit entry.
    const run = { ...loaded, frontier: await this.settleExecutions(loaded, lease, loaded.frontier) };
    const agent = this.deps.catalog.get(run.agent);
    metrics.runsResumed.inc();
    metrics.decisionToResume.observe(Math.max(0, Date.now() - decisionEnqueuedAt) / 1000);
    // Not a decision or an execution: it goes out in the script call of the first `tool.started` or `tool.denied`,
    // or once the frontier is settled.
    const carried: AuditInput[] = [
      { type: 'run.resumed', runId, actor: 'agent-worker', detail: { by: lease.jobId } },
    ];
    logger.info({ runId, job: lease.jobId }, 'run resumed');
    if (!announced) this.emit({ type: RunEventName.Status, runId, status: 'running' });
    if (!agent?.model) {
      await this.deps.audit.appendAll(carried);
      await this.finish(run, lease, {
        status: 'failed',
        error: `agent "${run.agent}" cannot run: ${agent?.unavailable ?? 'it is not configured'}`,
      });
    } else {
      await this.advance(run, agent, lease, carried);
    }
  }

  /**
   * The job that parked the run came back (redelivered after its worker died, or retried after a failure) and may
   * have died or failed before its requests were on the queue: publish them again (one job per request ID, so one
   * that did go out is not added twice).
   */
  async republish(run: RunRecord): Promise<void> {
    const waiting = run.frontier.filter(isWaiting);
    this.deps.logger.info(
      { runId: run.runId, pending: waiting.map((c) => c.body.id) },
      'republishing the requests of a park',
    );
    await this.publishRequests(run, waiting);
  }

  /**
   * Ownership is re-checked before each model turn and before a turn's auto calls run: a processing that was
   * taken over (its lock lapsed during a slow model turn or tool) stops there instead of running those auto
   * calls a second time next to the new owner. Claim, resume and every frontier transition check it already,
   * so the check before a model turn is skipped right after them.
   */
  private async advance(
    run: RunRecord,
    agent: AgentRuntime,
    lease: Lease,
    carried: AuditInput[] = [],
  ): Promise<void> {
    let messages = run.messages;
    let frontier = run.frontier;
    let ownerConfirmed = true;
    let notes = run.notes ?? [];
    for (;;) {
      if (frontier.length > 0) {
        const settled = await this.settleFrontier(run, agent, lease, frontier, carried);
        // What no tool start took along is durable before the model, a park or the run's end.
        if (carried.length > 0) await this.deps.audit.appendAll(carried.splice(0));
        if (settled.some(isWaiting)) return this.park(run, lease, messages, settled);
        messages = [...messages, ...toolMessages(settled)];
        frontier = [];
      }

      if (messages.filter((m) => m.role === 'assistant').length >= agent.config.maxTurns) {
        return this.finish(run, lease, {
          status: 'failed',
          messages,
          error: `the run exceeded maxTurns (${agent.config.maxTurns})`,
        });
      }
      if (!ownerConfirmed) notes = (await this.deps.store.assertOwner(run.runId, lease)) ?? [];
      messages = withNotes(messages, notes);
      const reply = await agent.model!.next({
        systemPrompt: agent.config.systemPrompt,
        messages,
        tools: agent.registry.toModelTools(),
        script: run.script,
      });
      ownerConfirmed = false;
      // Runbook runs: the graph's transitions at this turn (a turn replayed after a crash may repeat them). The last
      // turn's are stored by the script that ends the run, before its `done`.
      const transitions = (reply.nodes ?? []).map((node): RunEvent => ({
        type: RunEventName.Node,
        runId: run.runId,
        ...node,
      }));
      if (reply.kind === 'text') {
        messages = [...messages, { role: 'assistant', content: reply.text }];
        if (reply.failed)
          return this.finish(run, lease, { status: 'failed', messages, error: reply.text }, transitions);
        return this.finish(run, lease, { status: 'completed', messages, result: reply.text }, transitions);
      }
      if (transitions.length > 0) this.emit(...transitions);

      // Call IDs as the model sent them: a turn that repeats one is refused by the pipeline, never renamed. One that
      // reuses an earlier turn's ID is a new call with a request of its own (toFrontierCall).
      const { calls } = reply;
      messages = [...messages, { role: 'assistant', content: reply.text ?? null, toolCalls: calls }];
      const turnNumber = messages.filter((m) => m.role === 'assistant').length;
      const outcomes = await this.evaluateTurn(run, agent, lease, calls, turnNumber, messages);
      const aborted = outcomes.find((o) => o.kind === 'aborted');
      if (aborted) return this.finish(run, lease, { status: 'failed', messages, error: aborted.content });

      const turn = calls.map((call, i) => toFrontierCall(call, i, outcomes[i]));
      if (turn.some(isWaiting)) return this.park(run, lease, messages, turn);
      messages = [...messages, ...toolMessages(turn)];
      this.faults.afterTurn(turnNumber);
      if (checkpointsTurns(agent)) await this.deps.store.checkpointRun(run.runId, lease, messages);
    }
  }

  /**
   * Every call of a fresh turn, by the pipeline's turn rules (an abort or a repeated call ID runs nothing). Ownership
   * is checked once, after authorizing and before the first call runs; a call a policy approved is audited as
   * started before it runs. The turn's other audit entries are written in one go before it returns (a crash before
   * the turn is checkpointed or parked re-runs all of it; agent runs checkpoint no turn, see checkpointsTurns).
   */
  private async evaluateTurn(
    run: RunRecord,
    agent: AgentRuntime,
    lease: Lease,
    calls: ModelToolCall[],
    turn: number,
    messages: ChatMessage[],
  ): Promise<ToolCallOutcome[]> {
    /** Calls handed to their tool, and who approved them. */
    const started = new Map<string, string>();
    const outcomes = await agent.pipeline.evaluateTurn(calls, callerOf(run), {
      beforeExecute: async (ready) => {
        await this.deps.store.assertOwner(run.runId, lease);
        ready.forEach((call) => started.set(call.callId, call.approvedBy));
        // Auto calls are read-only: their ending is audited, not their start.
        const approved = ready.filter((call) => call.approvedBy !== 'auto');
        await Promise.all(
          approved.map((call) =>
            this.auditExecution(run, { id: call.callId, name: call.toolName }, call.approvedBy, 'started'),
          ),
        );
      },
    });
    const writes = calls.map((call, i) =>
      this.recordOutcome(run, agent, call, outcomes[i], turn, started.get(call.id), messages),
    );
    await Promise.all(writes);
    return outcomes;
  }

  /**
   * `ranAs`: who approved the call when it was handed to its tool (auto, policy); an error is then an execution that
   * failed, audited as one.
   */
  private async recordOutcome(
    run: RunRecord,
    agent: AgentRuntime,
    call: ModelToolCall,
    outcome: ToolCallOutcome,
    turn: number,
    ranAs: string | undefined,
    messages: ChatMessage[],
  ): Promise<void> {
    const { audit, metrics, logger } = this.deps;
    const where = { runId: run.runId, callId: call.id, tool: call.name };
    metrics.toolCalls.inc({ outcome: outcome.kind });
    logger.info({ ...where, outcome: outcome.kind }, 'tool call evaluated');
    if (outcome.kind === 'executed') {
      await this.auditExecution(run, call, outcome.approvedBy, 'executed');
    } else if (outcome.kind === 'error' && ranAs) {
      await this.auditExecution(run, call, ranAs, 'failed', { error: outcome.message });
    } else if (outcome.kind === 'denied') {
      await audit.append({
        type: 'tool.denied',
        runId: run.runId,
        callId: call.id,
        actor: outcome.by,
        detail: { toolName: call.name, reason: outcome.content },
      });
    } else if (outcome.kind === 'manual_required') {
      // A notice, not a question: the run does not wait for it.
      const body = manualStepBody(
        run,
        turn,
        call,
        outcome.args as Record<string, unknown>,
        outcome.fingerprint,
        outcome.definitionHash,
      );
      await this.requestApprovals(run, agent, [body], messages);
    }
    if (outcome.kind !== 'pending_confirmation') {
      this.emit({
        type: RunEventName.ToolResult,
        runId: run.runId,
        callId: call.id,
        toolName: call.name,
        outcome: outcome.kind,
        content: outcome.content,
      });
    }
  }

  /** Brings every decided call of the frontier to `done` (or back to `pending` when it must be asked again). */
  private async settleFrontier(
    run: RunRecord,
    agent: AgentRuntime,
    lease: Lease,
    frontier: FrontierCall[],
    carried: AuditInput[],
  ): Promise<FrontierCall[]> {
    // Transitions throw (and the job retries from Redis state) when this worker lost the run: fail closed.
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
          return this.settleDenied(run, lease, call, carried);
        case CallState.Approved:
          return this.settleApproved(run, agent, lease, call, carried);
        case CallState.Executing:
          return this.settleExecuting(run, lease, call);
      }
    });
    this.throwIfInFlight(run, settled);
    return settled;
  }

  /** Settles only the calls left `executing`; throws CallsInFlightError while any executor is alive. */
  private async settleExecutions(
    run: RunRecord,
    lease: Lease,
    frontier: FrontierCall[],
  ): Promise<FrontierCall[]> {
    if (!frontier.some((call) => call.state === CallState.Executing)) return frontier;
    const settled = await Promise.all(
      frontier.map((call) =>
        call.state === CallState.Executing ? this.settleExecuting(run, lease, call) : call,
      ),
    );
    this.throwIfInFlight(run, settled);
    return settled;
  }

  private throwIfInFlight(run: RunRecord, frontier: FrontierCall[]): void {
    const inFlight = frontier
      .filter((call) => call.state === CallState.Executing)
      .map((call) => call.body.id);
    if (inFlight.length > 0)
      throw new CallsInFlightError(run.runId, inFlight, this.deps.execution.heartbeatMs);
  }

  private async settleDenied(
    run: RunRecord,
    lease: Lease,
    call: FrontierCall,
    carried: AuditInput[],
  ): Promise<FrontierCall> {
    const content = refusalMessage({ decidedBy: call.decision?.decidedBy, reason: call.decision?.reason });
    const result = { outcome: 'denied', content };
    await this.deps.calls.transitionCall(run.runId, lease, call.body.id, CallState.Denied, CallState.Done, {
      result,
    });
    await Promise.all([
      this.deps.audit.appendAll([
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
    this.afterSettle(run, call, result);
    return { ...call, state: CallState.Done, result };
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
    const { calls, logger } = this.deps;
    const { body } = call;
    const ctx = callerOf(run);
    const edited = call.decision?.args;
    const toolCall = { id: body.id, name: body.name, args: edited ?? body.args };
    // A provider's tool may have changed while the call waited, without a notification reaching us: look again.
    await agent.refreshTool?.(body.name);
    const tool = agent.registry.get(body.name);

    if (tool && tool.definitionHash !== body.definitionHash) {
      // A deploy changed the tool since the approver looked: what they approved no longer exists.
      const fresh = await agent.pipeline.authorize({ ...toolCall, args: body.args }, ctx);
      if (fresh.kind === 'pending_confirmation') {
        const next = reasked(body, 'definition_changed', {
          args: fresh.args as Record<string, unknown>,
          fingerprint: fresh.fingerprint,
          definitionHash: fresh.definitionHash,
          tier: fresh.tier,
        });
        return this.reask(run, lease, call, CallState.Approved, next);
      }
    }

    // The decision approves the edited arguments' fingerprint (computed here, from the signed arguments), or the
    // parked call's (which the decision script already checked).
    const approvedPrint = edited ? editedFingerprint(body.name, edited) : call.decision!.fingerprint;
    const decisions = new DecisionBook([
      { callId: body.id, ...call.decision!, fingerprint: approvedPrint, shown: undefined },
    ]);
    const authorization = await agent.pipeline.authorize(toolCall, { ...ctx, decisions });
    if (authorization.kind === 'pending_confirmation') {
      // Edited arguments that the tool's own schema reads differently than approvers saw them: ask again about
      // the call as the agent asked it.
      const next = edited
        ? reasked(body, 'edit_not_applied')
        : reasked(body, 'definition_changed', {
            args: authorization.args as Record<string, unknown>,
            fingerprint: authorization.fingerprint,
            definitionHash: authorization.definitionHash,
          });
      return this.reask(run, lease, call, CallState.Approved, next);
    }
    if (authorization.kind !== 'ready') {
      // Refused now (RBAC changed, tool gone, arguments no longer valid): nothing runs, the model is told.
      const content = edited
        ? `An approver edited the arguments to ${JSON.stringify(edited)} and approved, but that call was refused, so nothing ran: ${authorization.content}`
        : authorization.content;
      const result = { outcome: authorization.kind, content };
      await calls.transitionCall(run.runId, lease, body.id, CallState.Approved, CallState.Done, { result });
      await this.recordResult(call, result);
      this.afterSettle(run, call, result);
      return { ...call, state: CallState.Done, result };
    }

    const executionToken = randomUUID();
    await calls.startCall(run.runId, lease, body.id, executionToken);
    // Durable before the tool runs: whatever happens next, the log shows an action that may have changed the world.
    // The audit keeps both, when an approver edited the arguments: what the agent asked for and what ran.
    const approvedBy = call.decision?.decidedBy === 'policy' ? 'policy' : 'person';
    const approval = {
      approvers: call.decision?.approvers ?? [],
      attempt: body.attempt,
      requestId: body.requestId,
      ...(edited ? { args: edited, requestedArgs: body.args } : {}),
      ...(call.decision?.rule ? { standingRule: call.decision.rule } : {}),
    };
    await this.auditExecution(run, body, approvedBy, 'started', approval, carried.splice(0));
    logger.info(
      { runId: run.runId, callId: body.id, tool: body.name, edited: edited !== undefined },
      'executing approved call',
    );
    const outcome = await this.withHeartbeat(run.runId, body.id, executionToken, () =>
      agent.pipeline.execute(authorization, ctx),
    );
    const result = {
      outcome: outcome.kind,
      content: edited ? `${editNote(body.args, edited)}\n${outcome.content}` : outcome.content,
    };
    const ended = outcome.kind === 'executed' ? 'executed' : 'failed';
    const endDetail = { ...approval, ...(outcome.kind === 'error' ? { error: outcome.message } : {}) };
    // Recorded by the execution token, not by run ownership: a result is never thrown away for a takeover.
    const recorded = await calls
      .completeCall(run.runId, lease, body.id, executionToken, result)
      .catch(async (error: unknown) => {
        if (error instanceof ExecutionLostError) {
          // Declared dead (stale heartbeat) though it ran: the re-ask stands, but the audit says what happened.
          await this.auditExecution(run, body, 'person', ended, { ...endDetail, recorded: false });
          logger.error({ runId: run.runId, callId: body.id }, 'call ran after it was declared interrupted');
        }
        throw error;
      });
    await Promise.all([
      this.auditExecution(run, body, approvedBy, ended, endDetail),
      // The history shows the edited arguments beside it: the tool's own result, without the model's note.
      this.recordResult(call, { outcome: outcome.kind, content: outcome.content }),
    ]);
    this.afterSettle(run, call, result);
    // The run was taken over while the tool ran: the new owner continues with this result; this one stops.
    if (!recorded.stillOwner) throw new OwnershipLostError(run.runId);
    return { ...call, state: CallState.Done, result };
  }

  /** What became of a decided call, for approvers' history (best effort: the run does not depend on it). */
  private async recordResult(call: FrontierCall, result: CallResult): Promise<void> {
    const { results } = this.deps;
    if (!results || !call.body.requestId) return;
    await results.store
      .record(
        call.body.requestId,
        {
          outcome: result.outcome.slice(0, 40),
          content: excerpt(result.content, DECIDED_CALL_RESULT_CHARS) ?? '',
          ...(call.decision?.args ? { editedArgs: call.decision.args } : {}),
          at: new Date().toISOString(),
        },
        results.ttlMs,
      )
      .catch((error: unknown) =>
        this.deps.logger.warn(
          { callId: call.body.id, requestId: call.body.requestId, err: String(error) },
          'call result not kept for history',
        ),
      );
  }

  /**
   * One audit entry of an execution: `started` before a call a person or a policy approved is handed to its tool, then
   * how it ended (`executed`, or `failed` with the tool's error); a worker that takes over a call whose executor died
   * writes `tool.interrupted`. The same for every tool source: the pipeline's outcome says all it needs. `before`:
   * entries that go out in the same script call, ahead of it.
   */
  private auditExecution(
    run: RunRecord,
    call: { id: string; name: string },
    approvedBy: string,
    stage: 'started' | 'executed' | 'failed',
    detail: Record<string, unknown> = {},
    before: AuditInput[] = [],
  ): Promise<unknown> {
    return this.deps.audit.appendAll([
      ...before,
      {
        type: `tool.${stage}`,
        runId: run.runId,
        callId: call.id,
        actor: approvedBy,
        detail: { toolName: call.name, ...detail },
      },
    ]);
  }

  /** Keeps the call's heartbeat fresh while `work` runs, so a worker that takes the run over waits instead of re-asking. */
  private async withHeartbeat<T>(
    runId: string,
    callId: string,
    executionToken: string,
    work: () => Promise<T>,
  ): Promise<T> {
    const { calls, logger } = this.deps;
    const timer = setInterval(() => {
      calls.heartbeatCall(runId, callId, executionToken).then(
        (alive) => {
          if (alive) return;
          clearInterval(timer);
          logger.warn({ runId, callId }, 'call declared interrupted while it still executes');
        },
        (error: unknown) => logger.warn({ runId, callId, err: String(error) }, 'call heartbeat failed'),
      );
    }, this.deps.execution.heartbeatMs);
    timer.unref();
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  /**
   * We own the run and the call is still `executing` under an earlier processing. A fresh heartbeat means
   * its executor is alive: leave it (the caller waits). Done meanwhile: take its result. Stale: the executor
   * died mid-call; never re-run it on our own, ask again.
   */
  private async settleExecuting(run: RunRecord, lease: Lease, call: FrontierCall): Promise<FrontierCall> {
    const { calls, audit, metrics, logger } = this.deps;
    const next = reasked(call.body, 'interrupted');
    const where = { runId: run.runId, callId: call.body.id };
    const found = await calls.settleExecutingCall(
      run.runId,
      lease,
      call.body.id,
      this.deps.execution.staleAfterMs,
      next,
    );
    switch (found.kind) {
      case 'in_flight':
        logger.info(
          { ...where, heartbeatAgeMs: found.heartbeatAgeMs },
          'call still executing elsewhere; waiting',
        );
        return call;
      case 'done':
        logger.info({ ...where, outcome: found.result.outcome }, 'call finished by its executor; continuing');
        return { ...call, state: CallState.Done, result: found.result };
      case 'interrupted':
        await audit.append({
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
        metrics.toolCalls.inc({ outcome: 'interrupted' });
        this.noteReask(run, next);
        return { body: next, state: CallState.Pending };
    }
  }

  private async reask(
    run: RunRecord,
    lease: Lease,
    call: FrontierCall,
    from: typeof CallState.Approved,
    body: FrontierCall['body'],
  ): Promise<FrontierCall> {
    await this.deps.calls.transitionCall(run.runId, lease, call.body.id, from, CallState.Pending, { body });
    this.noteReask(run, body);
    return { body, state: CallState.Pending };
  }

  private noteReask(run: RunRecord, body: FrontierCall['body']): void {
    this.deps.metrics.toolCalls.inc({ outcome: 'reasked' });
    this.deps.logger.warn(
      { runId: run.runId, callId: body.id, reason: body.reason, attempt: body.attempt },
      'call asked about again',
    );
  }

  private afterSettle(run: RunRecord, call: FrontierCall, result: CallResult): void {
    this.deps.metrics.toolCalls.inc({ outcome: result.outcome });
    this.deps.logger.info(
      { runId: run.runId, callId: call.body.id, tool: call.body.name, outcome: result.outcome },
      'call settled',
    );
    this.emit({
      type: RunEventName.ToolResult,
      runId: run.runId,
      callId: call.body.id,
      toolName: call.body.name,
      ...result,
    });
  }

  /**
   * Saves the turn and its frontier atomically, then asks about every waiting call. The waiting calls are noted as
   * unpublished first, so a job that dies (or fails) between the park and the publish leaves them to the request
   * sweep, and to its own redelivery or retry, which republishes (claim-run, apply-decision).
   */
  private async park(
    run: RunRecord,
    lease: Lease,
    messages: ChatMessage[],
    frontier: FrontierCall[],
  ): Promise<void> {
    const { store, unpublished: index, audit, metrics, logger } = this.deps;
    const waiting = frontier.filter(isWaiting);
    await index.markUnpublished(unpublished(run, waiting));
    await store.parkRun(run.runId, lease, messages, frontier, run.script);
    metrics.runsParked.inc();
    logger.info({ runId: run.runId, pending: waiting.map((c) => c.body.id) }, 'run parked');
    const byDecision = lease.jobId !== jobIds.startRun(run.runId);
    this.faults.afterPark(byDecision);
    // Parked first (decisions can only be recorded on a parked call), then the audit entry and the requests together.
    await Promise.all([
      audit.append({
        type: 'run.parked',
        runId: run.runId,
        actor: 'agent-worker',
        detail: { pending: waiting.map((c) => c.body.id) },
      }),
      this.publishRequests(run, waiting, byDecision, messages),
    ]);
    this.emit({ type: RunEventName.Status, runId: run.runId, status: 'awaiting_confirmation' });
  }

  /**
   * One request per waiting call (its request ID is the job ID: publishing again adds nothing), then the calls are
   * marked published, then the run's followers hear of them. Used by the request sweep too. `messages`: the
   * conversation the requests' context is taken from (the run's as stored, unless it was just parked with more).
   */
  async publishRequests(
    run: RunRecord,
    waiting: FrontierCall[],
    byDecision = false,
    messages: ChatMessage[] = run.messages,
  ): Promise<void> {
    const { unpublished: index, logger } = this.deps;
    const asked = waiting.filter((call) => hasRequest(call.body));
    // Only a run parked by an older version has a waiting call without a request ID; no decision can apply to it.
    if (asked.length < waiting.length)
      logger.error(
        { runId: run.runId, calls: waiting.filter((c) => !hasRequest(c.body)).map((c) => c.body.id) },
        'parked calls without a request ID cannot be asked about',
      );
    this.faults.beforePublish(byDecision);
    await this.requestApprovals(
      run,
      this.deps.catalog.get(run.agent),
      asked.map((call) => call.body as typeof call.body & { requestId: string }),
      messages,
    );
    await index.markPublished(unpublished(run, asked));
    this.emit(
      ...waiting.map((call): RunEvent => ({
        type: RunEventName.ToolConfirmation,
        runId: run.runId,
        call: toPendingCall(call.body),
      })),
    );
  }

  /**
   * One request per call, with what approvers are told the call is for: the run's input, the model's text before the
   * call and the tool's preview (each bounded; a preview that fails or is slow is left out, never holding the request
   * up). The tools' descriptions and schemas go to the tool catalog once per definition, not into each request.
   */
  private async requestApprovals(
    run: RunRecord,
    agent: AgentRuntime | undefined,
    bodies: (ParkedCallBody & { requestId: string })[],
    messages: ChatMessage[],
  ): Promise<void> {
    const ctx = callerOf(run);
    const tools = bodies
      .map((body) => agent?.registry.get(body.name))
      .filter((tool): tool is RegisteredTool => tool !== undefined);
    await Promise.all([
      this.publishDefinitions(tools),
      ...bodies.map(async (body) => {
        const tool = agent?.registry.get(body.name);
        // Only a preview of the definition that was parked: after a deploy, the old call is shown without one.
        const preview =
          tool && tool.definitionHash === body.definitionHash
            ? await previewCall(
                tool.definition,
                body.args,
                { ...ctx, callId: body.id },
                {
                  maxChars: REQUEST_CONTEXT_LIMITS.preview,
                },
              )
            : undefined;
        const step = agent?.describeStep?.(body.id);
        const context = { ...callContext(messages, body.id, preview), ...(step ? { step } : {}) };
        await this.deps.approvals.requestApproval(toApprovalRequest(run, body, context));
      }),
    ]);
  }

  /** Stores what approvers are shown of each tool, once per definition (the catalog skips what it stored before). */
  async publishDefinitions(tools: readonly RegisteredTool[]): Promise<void> {
    if (!this.deps.tools || tools.length === 0) return;
    // Only for showing approvers what a tool does: a failure leaves the request without a description, not unasked.
    await this.deps.tools
      .publish(
        tools.map((tool) => ({
          definitionHash: tool.definitionHash,
          entry: {
            name: tool.definition.name,
            description: tool.definition.description.slice(0, 2_000),
            tier: tool.tier,
            argsSchema: tool.jsonSchema,
          },
        })),
      )
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: String(error) }, 'tool definitions not stored for approvers'),
      );
  }

  private async finish(
    run: Pick<RunRecord, 'runId'>,
    lease: Lease | { jobId: string },
    end: { status: 'completed' | 'failed'; messages?: ChatMessage[]; result?: string; error?: string },
    before: RunEvent[] = [],
  ): Promise<void> {
    const { runId } = run;
    // Stored and published by the script that ends the run: a run that reads as finished has its `done` event.
    const last: RunEvent[] = [
      ...before,
      ...(end.result !== undefined ? [{ type: RunEventName.Text, runId, text: end.result } as const] : []),
      { type: RunEventName.Status, runId, status: end.status },
      { type: RunEventName.Done, runId, status: end.status, result: end.result },
    ];
    const finished = await this.deps.store.finishRun(runId, lease, end, last);
    if (!finished) return;
    this.deps.metrics.runsFinished.inc({ status: end.status });
    this.deps.logger.info({ runId, status: end.status, error: end.error }, 'run finished');
  }

  /** A job that failed for good: the run it owned fails too, with the reason (never silently stuck). */
  async failRun(runId: string, lease: Lease, error: string): Promise<void> {
    await this.finish({ runId }, lease, { status: 'failed', error });
  }

  /**
   * A job failed for good outside its processor (BullMQ failed it for stalling too often): a run some
   * processing of that job still owns would otherwise stay `running` forever, so it fails with the reason.
   */
  async failOrphanedRun(runId: string, jobId: string, error: string): Promise<void> {
    const run = await this.deps.store.load(runId);
    // finish() ends it only if a processing of this job owns it, and logs when it did.
    if (run?.status === 'running')
      await this.finish(run, { jobId }, { status: 'failed', error: `job ${jobId} failed: ${error}` });
  }

  private emit(...events: RunEvent[]): void {
    this.deps.events.publish(...events);
  }
}

/**
 * Runbook runs store their conversation after every turn that did not park: a runbook's steps follow one another
 * turn by turn (every node is a turn), so a worker killed between two parks would otherwise make the one that takes
 * the run over replay every step since the last park. Agent runs keep their turns in memory until they park or end
 * (their hot path has no write per turn).
 */
function checkpointsTurns(agent: AgentRuntime): boolean {
  return agent.model?.provider === 'runbook';
}

/** The index entries of waiting calls (see RunStore.markUnpublished). */
function unpublished(run: RunRecord, waiting: FrontierCall[]) {
  return waiting
    .filter((call) => hasRequest(call.body))
    .map((call) => ({ runId: run.runId, callId: call.body.id, requestId: call.body.requestId! }));
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

/** A user message per manual step a person did that the model has not been told of yet (marked by its request). */
export function withNotes(messages: ChatMessage[], notes: readonly ManualNote[]): ChatMessage[] {
  const untold = notes.filter(
    (note) => !messages.some((m) => m.role === 'user' && m.content.startsWith(manualNoteMarker(note))),
  );
  if (untold.length === 0) return messages;
  return [
    ...messages,
    ...untold.map((note) => ({
      role: 'user' as const,
      content: `${manualNoteMarker(note)} ${note.text}`,
    })),
  ];
}

/**
 * How a note's message starts: it names the call and its notice's request, so the model is told each manual step
 * once (a later turn may reuse the call ID).
 */
export const manualNoteMarker = (note: Pick<ManualNote, 'callId' | 'requestId'>) =>
  `[Countersign: manual step ${note.callId} done (request ${note.requestId})]`;

function callerOf(run: RunRecord): CallerContext {
  return { runId: run.runId, agent: run.agent, userId: run.userId, scopes: run.scopes };
}

export function toNewRun(job: StartRunJob): NewRun {
  return {
    runId: job.runId,
    agent: job.agent,
    userId: job.userId,
    submittedBy: job.submittedBy,
    sessionId: job.sessionId,
    scopes: job.scopes,
    script: job.script,
    messages: [{ role: 'user', content: job.input }],
  };
}
