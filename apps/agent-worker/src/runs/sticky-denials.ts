// Rejections that stick: a person's denial of a call is kept (with the run by default, or for the requester over a
// window, per tool in the agents config), and the same call asked for again (same tool, same fingerprint) is refused
// at once with the original reason and approvers: nobody is asked again, and the model is told it was refused before.
import { Inject, Injectable } from '@nestjs/common';
import { CallState } from '@countersign/call-ledger';
import { AuditLog } from '@countersign/audit';
import type { Logger } from '@countersign/platform';
import type { AgentRuntime } from '../agents/agent-builder';
import type { StickyDenial } from '../config/agents-config.schema';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { DeniedCalls, type DenialScope, type KeptDenial } from './denied-calls';
import { isWaiting, toolResultEvent } from './frontier';
import { RunEvents } from './run-events';
import type { FrontierCall, RunRecord } from './run-state';

/** The scope of a tool's denials, or undefined when they do not stick (`off`). */
export function denialScope(agent: Pick<AgentRuntime, 'config'>, toolName: string): DenialScope | undefined {
  const configured: StickyDenial = Object.hasOwn(agent.config.stickyDenials ?? {}, toolName)
    ? agent.config.stickyDenials[toolName]
    : 'run';
  if (configured === 'off') return undefined;
  if (configured === 'run') return { kind: 'run' };
  return { kind: 'requester', windowSeconds: configured.windowSeconds };
}

@Injectable()
export class StickyDenials {
  constructor(
    @Inject(DeniedCalls) private readonly denied: Pick<DeniedCalls, 'keep' | 'find'>,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append'>,
    @Inject(RunEvents) private readonly events: Pick<RunEvents, 'publishOnce'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'toolCalls'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
  ) {}

  /** Keeps a person's denial of a parked call, as long as its tool's config says (nothing for `off`). */
  async keep(run: RunRecord, agent: AgentRuntime, call: FrontierCall): Promise<void> {
    const { body, decision } = call;
    // Only a person's no sticks: an expiry, a missing route or a policy are not someone's answer to this call.
    if (!decision || decision.decision !== 'deny' || decision.decidedBy !== 'person' || !body.fingerprint)
      return;
    const scope = denialScope(agent, body.name);
    if (!scope) return;
    await this.denied.keep(run, body.fingerprint, scope, {
      runId: run.runId,
      callId: body.id,
      ...(body.requestId ? { requestId: body.requestId } : {}),
      approvers: decision.approvers,
      ...(decision.reason ? { reason: decision.reason } : {}),
      decidedAt: decision.decidedAt,
    });
  }

  /**
   * The waiting calls of a fresh turn whose fingerprint a person denied before (in scope) become done, refused with
   * that denial: audited as automatic refusals naming the decision they repeat, and sent to the run's followers.
   * `turn`: the turn's number, for sending each result once (see RunEvents.publishOnce).
   */
  async refuseRepeats(
    run: RunRecord,
    agent: AgentRuntime,
    frontier: FrontierCall[],
    turn: number,
    marker: (turn: number, callId: string) => string,
  ): Promise<FrontierCall[]> {
    const lookups = frontier.filter(isWaiting).flatMap((call) => {
      const scope = denialScope(agent, call.body.name);
      return scope ? [{ fingerprint: call.body.fingerprint, scope }] : [];
    });
    if (lookups.length === 0) return frontier;
    const found = await this.denied.find(run, lookups);
    if (found.size === 0) return frontier;
    return Promise.all(
      frontier.map(async (call) => {
        const denial = isWaiting(call) ? found.get(call.body.fingerprint) : undefined;
        if (!denial) return call;
        const scope = denialScope(agent, call.body.name)!;
        const content = repeatedRefusal(call.body.name, denial, scope, run.runId);
        await this.audit.append({
          type: 'tool.denied',
          runId: run.runId,
          callId: call.body.id,
          actor: 'agent-worker',
          detail: {
            toolName: call.body.name,
            automatic: true,
            scope: scope.kind,
            repeats: denial,
            approvers: denial.approvers,
            ...(denial.reason ? { reason: denial.reason } : {}),
          },
        });
        this.metrics.toolCalls.inc({ outcome: 'denied' });
        this.logger.info(
          { runId: run.runId, callId: call.body.id, tool: call.body.name, repeats: denial.callId },
          'call refused: a person denied the same call before',
        );
        const result = { outcome: 'denied', content };
        this.events.publishOnce(marker(turn, call.body.id), toolResultEvent(run.runId, call.body, result));
        // Nobody is asked: the request ID drawn for it is never published.
        const body = { ...call.body };
        delete body.requestId;
        const refused: FrontierCall = { body, state: CallState.Done, result };
        return refused;
      }),
    );
  }
}

/** What the model is told of a call refused because a person denied the same call before. */
export function repeatedRefusal(
  toolName: string,
  denial: KeptDenial,
  scope: DenialScope,
  runId: string,
): string {
  const by = denial.approvers.length > 0 ? denial.approvers.join(', ') : 'an approver';
  const where =
    scope.kind === 'run' || denial.runId === runId
      ? 'earlier in this run'
      : `for this requester in run ${denial.runId} (it stands for ${scope.windowSeconds} s)`;
  return (
    `Tool "${toolName}" was not run and nobody was asked again: the same call (same arguments) was already ` +
    `denied ${where} by ${by}` +
    (denial.reason ? `. Reason: ${denial.reason}` : '') +
    '. Do not ask for it again with the same arguments.'
  );
}
