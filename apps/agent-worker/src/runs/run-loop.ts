// The turn loop: model turn → every call through the pipeline → park on a pending frontier (RunParking), or feed the
// results back for the next turn. Resuming settles the frontier first (FrontierSettlement: each approved call runs at
// most once, on the call ledger) and gives the model exactly one follow-up turn. How a run ends is RunEndings'.
import { Inject, Injectable } from '@nestjs/common';
import type { PolicyDecision, ToolCallOutcome } from '@countersign/authorization';
import { AuditLog, type AuditInput } from '@countersign/audit';
import { type ChatMessage, RunEventName, type RunEvent, type StartRunJob } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AgentRuntime } from '../agents/agent-builder';
import { AgentCatalog } from '../agents/agent-catalog';
import { WORKER_LOGGER } from '../core/worker-logger';
import type { ModelToolCall } from '../models/chat-model';
import { WorkerMetrics } from '../core/worker-metrics';
import { executionEntry } from './execution-audit';
import {
  callerOf,
  isWaiting,
  manualStepBody,
  toFrontierCall,
  toolMessages,
  toolResultEvent,
} from './frontier';
import { FrontierSettlement } from './frontier-settlement';
import { RunEndings } from './run-endings';
import { RunEvents } from './run-events';
import { RUN_HOOKS, type RunHooks } from './run-hooks';
import { RunParking } from './run-parking';
import type { Lease, ManualNote, RunRecord } from './run-state';
import type { NewRun } from './run-state-codec';
import { RunStore } from './run-store';
import { StickyDenials } from './sticky-denials';

@Injectable()
export class RunLoop {
  constructor(
    @Inject(RunStore) private readonly store: Pick<RunStore, 'claimRun' | 'assertOwner' | 'checkpointRun'>,
    @Inject(AgentCatalog) private readonly catalog: Pick<AgentCatalog, 'get'>,
    @Inject(FrontierSettlement) private readonly settlement: FrontierSettlement,
    @Inject(RunParking) private readonly parking: RunParking,
    @Inject(RunEndings) private readonly endings: RunEndings,
    @Inject(RunEvents) private readonly events: Pick<RunEvents, 'publish' | 'publishOnce'>,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append' | 'appendAll'>,
    @Inject(WorkerMetrics)
    private readonly metrics: Pick<
      WorkerMetrics,
      'runsStarted' | 'runsResumed' | 'decisionToResume' | 'toolCalls'
    >,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
    @Inject(RUN_HOOKS) private readonly hooks: RunHooks,
    @Inject(StickyDenials) private readonly sticky: Pick<StickyDenials, 'refuseRepeats'>,
  ) {}

  /** A `run.start` job: claim the run (or take it over from a dead worker) and advance it. */
  async start(job: StartRunJob, lease: Lease): Promise<void> {
    // A run whose agent can run is announced by the claim itself (one script call less per start, issue 27); one
    // that cannot is not announced: it fails right away (runnable).
    const running = this.catalog.get(job.agent)?.model
      ? [{ type: RunEventName.Status, runId: job.runId, status: 'running' } as const]
      : [];
    const claim = await this.store.claimRun(toNewRun(job), lease, running);
    if (claim.kind === 'skip' || claim.kind === 'not_found') {
      this.logger.debug({ runId: job.runId, claim: claim.kind }, 'run start: nothing to do');
      return;
    }
    const { run } = claim;
    if (claim.kind === 'republish') return this.parking.republish(run);
    const agent = await this.runnable(run, lease);
    if (!agent) return;
    this.metrics.runsStarted.inc();
    this.logger.info({ runId: run.runId, agent: run.agent, userId: run.userId }, 'run started');
    if (running.length === 0)
      this.events.publish({ type: RunEventName.Status, runId: run.runId, status: 'running' });
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
    const { runId } = loaded;
    // First the calls an earlier processing left executing, so waiting on a live executor costs no audit entry.
    const run = { ...loaded, frontier: await this.settlement.settleExecutions(loaded, lease) };
    this.metrics.runsResumed.inc();
    this.metrics.decisionToResume.observe(Math.max(0, Date.now() - decisionEnqueuedAt) / 1000);
    // Not a decision or an execution: it goes out in the script call of the first `tool.started` or `tool.denied`,
    // or once the frontier is settled.
    const carried: AuditInput[] = [
      { type: 'run.resumed', runId, actor: 'agent-worker', detail: { by: lease.jobId } },
    ];
    this.logger.info({ runId, job: lease.jobId }, 'run resumed');
    if (!announced) this.events.publish({ type: RunEventName.Status, runId, status: 'running' });
    const agent = await this.runnable(run, lease, carried);
    if (agent) await this.advance(run, agent, lease, carried);
  }

  /** The run's agent, or undefined when it cannot run: the run then ends, failed, saying why (`carried` written first). */
  private async runnable(
    run: RunRecord,
    lease: Lease,
    carried: AuditInput[] = [],
  ): Promise<AgentRuntime | undefined> {
    const agent = this.catalog.get(run.agent);
    if (agent?.model) return agent;
    if (carried.length > 0) await this.audit.appendAll(carried.splice(0));
    await this.endings.cannotRun(run, lease, agent);
    return undefined;
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
        const settled = await this.settlement.settle(run, agent, lease, frontier, carried);
        // What no tool start took along is durable before the model, a park or the run's end.
        if (carried.length > 0) await this.audit.appendAll(carried.splice(0));
        if (settled.some(isWaiting)) return this.parking.park(run, lease, messages, settled);
        // A before-callback (an admission hook) that aborts as an approved call resumes ends the run, as in a turn.
        const aborted = settled.find((call) => call.result?.outcome === 'aborted');
        if (aborted)
          return this.endings.finish(run, lease, {
            status: 'failed',
            messages,
            error: aborted.result!.content,
          });
        messages = [...messages, ...toolMessages(settled)];
        frontier = [];
      }

      if (messages.filter((m) => m.role === 'assistant').length >= agent.config.maxTurns) {
        return this.endings.finish(run, lease, {
          status: 'failed',
          messages,
          error: `the run exceeded maxTurns (${agent.config.maxTurns})`,
        });
      }
      if (!ownerConfirmed) notes = (await this.store.assertOwner(run.runId, lease)) ?? [];
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
        const end = reply.failed
          ? ({ status: 'failed', messages, error: reply.text } as const)
          : ({ status: 'completed', messages, result: reply.text } as const);
        return this.endings.finish(run, lease, end, transitions);
      }
      if (transitions.length > 0) this.events.publish(...transitions);

      // Call IDs as the model sent them: a turn that repeats one is refused by the pipeline, never renamed. One that
      // reuses an earlier turn's ID is a new call with a request of its own (toFrontierCall).
      const { calls } = reply;
      messages = [...messages, { role: 'assistant', content: reply.text ?? null, toolCalls: calls }];
      const turnNumber = messages.filter((m) => m.role === 'assistant').length;
      const outcomes = await this.evaluateTurn(run, agent, lease, calls, turnNumber, messages);
      const aborted = outcomes.find((o) => o.kind === 'aborted');
      if (aborted)
        return this.endings.finish(run, lease, { status: 'failed', messages, error: aborted.content });

      // A call a person denied before (same tool and fingerprint, in the tool's scope) is refused, not asked again.
      const turn = await this.sticky.refuseRepeats(
        run,
        agent,
        calls.map((call, i) => toFrontierCall(call, i, outcomes[i])),
        turnNumber,
        resultMarker,
      );
      const waiting = turn.filter(isWaiting).length;
      if (waiting > 0) this.metrics.toolCalls.inc({ outcome: 'pending_confirmation' }, waiting);
      if (waiting > 0) return this.parking.park(run, lease, messages, turn);
      messages = [...messages, ...toolMessages(turn)];
      this.hooks.afterTurn?.({ runId: run.runId, turn: turnNumber });
      if (checkpointsTurns(agent)) await this.store.checkpointRun(run.runId, lease, messages);
    }
  }

  /**
   * Every call of a fresh turn, by the pipeline's turn rules (an abort or a repeated call ID runs nothing). Ownership
   * is checked once, after authorizing and before the first call runs; a call a policy approved is audited as
   * started before it runs. Each call's outcome is audited and sent to the run's followers as soon as it is known,
   * not when the turn's slowest call ends; the model hears them all in one follow-up turn. A crash before the turn is
   * checkpointed or parked re-runs all of it (agent runs checkpoint no turn, see checkpointsTurns); its results are
   * sent to followers once per turn and call (RunEvents.publishOnce).
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
        await this.store.assertOwner(run.runId, lease);
        ready.forEach((call) => started.set(call.callId, call.policyDecision?.by ?? call.approvedBy));
        // Auto calls are read-only: their ending is audited, not their start.
        const approved = ready.filter((call) => call.approvedBy !== 'auto');
        await Promise.all(
          approved.map((call) =>
            this.audit.appendAll([
              executionEntry(
                run.runId,
                { id: call.callId, name: call.toolName },
                call.policyDecision?.by ?? call.approvedBy,
                'started',
                decisionDetail(call.policyDecision),
              ),
            ]),
          ),
        );
        for (const call of approved)
          if (call.policyDecision)
            this.tellDecision(run, turn, call.callId, call.toolName, 'approve', call.policyDecision);
      },
      onOutcome: (outcome, i) =>
        this.recordOutcome(run, agent, calls[i], outcome, turn, started.get(calls[i].id), messages),
    });
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
    const where = { runId: run.runId, callId: call.id, tool: call.name };
    // A waiting call is counted once the turn knows it waits: a sticky denial may still refuse it (counted there).
    if (outcome.kind !== 'pending_confirmation') this.metrics.toolCalls.inc({ outcome: outcome.kind });
    this.logger.info({ ...where, outcome: outcome.kind }, 'tool call evaluated');
    if (outcome.kind === 'executed') {
      const by = outcome.policyDecision?.by ?? outcome.approvedBy;
      await this.audit.appendAll([
        executionEntry(run.runId, call, by, 'executed', decisionDetail(outcome.policyDecision)),
      ]);
    } else if (outcome.kind === 'error' && ranAs) {
      await this.audit.appendAll([
        executionEntry(run.runId, call, ranAs, 'failed', { error: outcome.message }),
      ]);
    } else if (outcome.kind === 'denied') {
      await this.audit.append({
        type: 'tool.denied',
        runId: run.runId,
        callId: call.id,
        actor: outcome.policyDecision?.by ?? outcome.by,
        detail: { toolName: call.name, reason: outcome.content, ...decisionDetail(outcome.policyDecision) },
      });
      if (outcome.policyDecision)
        this.tellDecision(run, turn, call.id, call.name, 'deny', outcome.policyDecision, outcome.content);
    } else if (outcome.kind === 'responded') {
      await this.audit.append({
        type: 'tool.responded',
        runId: run.runId,
        callId: call.id,
        actor: outcome.approvers.join(',') || 'person',
        detail: { toolName: call.name, approvers: outcome.approvers, response: outcome.response },
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
      await this.parking.requestApprovals(run, agent, [body], messages);
    }
    if (outcome.kind !== 'pending_confirmation') {
      this.events.publishOnce(
        resultMarker(turn, call.id),
        toolResultEvent(run.runId, call, { outcome: outcome.kind, content: outcome.content }),
      );
    }
  }

  /** Followers see a confirmation handler's decision as they see people's: a `decision` event (once per turn). */
  private tellDecision(
    run: RunRecord,
    turn: number,
    callId: string,
    toolName: string,
    decision: 'approve' | 'deny',
    by: PolicyDecision,
    reason?: string,
  ): void {
    this.events.publishOnce(`${resultMarker(turn, callId)}:decision`, {
      type: RunEventName.Decision,
      runId: run.runId,
      callId,
      toolName,
      decision,
      decidedBy: 'policy',
      approvers: [],
      ...(by.rule ? { rule: by.rule } : {}),
      reason: reason ?? `approved by ${by.by}${by.rule ? ` (rule ${by.rule})` : ''}`,
    });
  }
}

/** What the audit adds about a confirmation handler's decision: its rule. */
function decisionDetail(decided: PolicyDecision | undefined): Record<string, unknown> {
  return decided?.rule ? { rule: decided.rule } : {};
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

/** Names a fresh turn's call result among the run's sent events: a turn re-run after a crash does not send it again. */
export const resultMarker = (turn: number, callId: string) => `${turn}:${callId}`;

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
