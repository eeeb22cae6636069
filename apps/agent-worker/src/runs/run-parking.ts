// Parking a run and asking about its waiting calls: the park (turn and frontier saved atomically), then one approval
// request per waiting call with what approvers are told it is for; again for a park whose requests may never have gone
// out (a redelivered or retried job, the request sweep). Manual-step notices go out the same way.
import { Inject, Injectable } from '@nestjs/common';
import { previewCall, type RegisteredTool } from '@countersign/authorization';
import { AuditLog } from '@countersign/audit';
import {
  type ChatMessage,
  jobIds,
  REQUEST_CONTEXT_LIMITS,
  RunEventName,
  type RunEvent,
} from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AgentRuntime } from '../agents/agent-builder';
import { AgentCatalog } from '../agents/agent-catalog';
import { ToolDefinitions } from '../agents/tool-definitions';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { callContext, callerOf, hasRequest, isWaiting, toApprovalRequest, toPendingCall } from './frontier';
import { RUN_HOOKS, type RunHooks } from './run-hooks';
import { RunEvents } from './run-events';
import { ApprovalRequestsProducer } from './run-producers';
import type { FrontierCall, Lease, ParkedCallBody, RunRecord } from './run-state';
import { RunStore } from './run-store';
import { UnpublishedRequests } from './unpublished-requests';

/** A call that waits for a request (parked and pending, or a notice). */
type AskedCall = ParkedCallBody & { requestId: string };

@Injectable()
export class RunParking {
  constructor(
    @Inject(RunStore) private readonly store: Pick<RunStore, 'parkRun'>,
    @Inject(UnpublishedRequests)
    private readonly index: Pick<UnpublishedRequests, 'markUnpublished' | 'markPublished'>,
    @Inject(AgentCatalog) private readonly catalog: Pick<AgentCatalog, 'get'>,
    @Inject(ApprovalRequestsProducer)
    private readonly approvals: Pick<ApprovalRequestsProducer, 'requestApproval'>,
    @Inject(ToolDefinitions) private readonly definitions: Pick<ToolDefinitions, 'publish'>,
    @Inject(RunEvents) private readonly events: Pick<RunEvents, 'publish'>,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'runsParked'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
    @Inject(RUN_HOOKS) private readonly hooks: RunHooks,
  ) {}

  /**
   * Saves the turn and its frontier atomically, then asks about every waiting call. The waiting calls are noted as
   * unpublished first, so a job that dies (or fails) between the park and the publish leaves them to the request
   * sweep, and to its own redelivery or retry, which republishes (claim-run, apply-decision).
   */
  async park(run: RunRecord, lease: Lease, messages: ChatMessage[], frontier: FrontierCall[]): Promise<void> {
    const waiting = frontier.filter(isWaiting);
    // The index entry and the park leave in one trip, the entry first (issue 27). A park that landed while its entry
    // did not fails the job all the same: its retry or redelivery finds the run parked by it and republishes.
    const [marked, parked] = await Promise.allSettled([
      this.index.markUnpublished(unpublished(run, waiting)),
      this.store.parkRun(run.runId, lease, messages, frontier, run.script),
    ]);
    if (parked.status === 'rejected') throw parked.reason;
    if (marked.status === 'rejected') throw marked.reason;
    this.metrics.runsParked.inc();
    this.logger.info({ runId: run.runId, pending: waiting.map((c) => c.body.id) }, 'run parked');
    const byDecision = lease.jobId !== jobIds.startRun(run.runId);
    this.hooks.afterPark?.({ runId: run.runId, byDecision });
    // Parked first (decisions can only be recorded on a parked call), then the audit entry and the requests together.
    const [, asked] = await Promise.all([
      this.audit.append({
        type: 'run.parked',
        runId: run.runId,
        actor: 'agent-worker',
        detail: { pending: waiting.map((c) => c.body.id) },
      }),
      this.askAbout(run, waiting, byDecision, messages),
    ]);
    // The calls' confirmations and the run's status in one events script call (issue 27: one call fewer per park),
    // in the same trip as the index's update.
    this.events.publish(...asked.confirmations, {
      type: RunEventName.Status,
      runId: run.runId,
      status: 'awaiting_confirmation',
    });
    await asked.published;
  }

  /**
   * The job that parked the run came back (redelivered after its worker died, or retried after a failure) and may
   * have died or failed before its requests were on the queue: publish them again (one job per request ID, so one
   * that did go out is not added twice).
   */
  async republish(run: RunRecord): Promise<void> {
    const waiting = run.frontier.filter(isWaiting);
    this.logger.info(
      { runId: run.runId, pending: waiting.map((c) => c.body.id) },
      'republishing the requests of a park',
    );
    await this.publishRequests(run, waiting);
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
    const asked = await this.askAbout(run, waiting, byDecision, messages);
    this.events.publish(...asked.confirmations);
    await asked.published;
  }

  /**
   * publishRequests without telling the run's followers: resolves, once the requests are on the queue, to the events
   * that tell them and to the index's update, sent but not awaited, so that the caller's events travel with it.
   */
  private async askAbout(
    run: RunRecord,
    waiting: FrontierCall[],
    byDecision: boolean,
    messages: ChatMessage[],
  ): Promise<{ confirmations: RunEvent[]; published: Promise<void> }> {
    const asked = waiting.filter((call) => hasRequest(call.body));
    // Only a run parked by an older version has a waiting call without a request ID; no decision can apply to it.
    if (asked.length < waiting.length)
      this.logger.error(
        { runId: run.runId, calls: waiting.filter((c) => !hasRequest(c.body)).map((c) => c.body.id) },
        'parked calls without a request ID cannot be asked about',
      );
    this.hooks.beforePublish?.({ runId: run.runId, byDecision });
    const agent = this.catalog.get(run.agent);
    await this.requestApprovals(
      run,
      agent,
      asked.map((call) => call.body as AskedCall),
      messages,
    );
    const published = this.index.markPublished(unpublished(run, asked));
    // Awaited by the caller; a rejection is not left unhandled meanwhile.
    published.catch(() => undefined);
    const confirmations = waiting.map((call): RunEvent => ({
      type: RunEventName.ToolConfirmation,
      runId: run.runId,
      call: toPendingCall(call.body),
    }));
    return { confirmations, published };
  }

  /**
   * One request per call, with what approvers are told the call is for: the run's input, the model's text before the
   * call and the tool's preview (each bounded; a preview that fails or is slow is left out, never holding the request
   * up). The tools' descriptions and schemas go to the tool catalog once per definition, not into each request.
   */
  async requestApprovals(
    run: RunRecord,
    agent: AgentRuntime | undefined,
    bodies: AskedCall[],
    messages: ChatMessage[],
  ): Promise<void> {
    const tools = bodies
      .map((body) => agent?.registry.get(body.name))
      .filter((tool): tool is RegisteredTool => tool !== undefined);
    await Promise.all([
      this.definitions.publish(tools),
      ...bodies.map((body) => this.requestApproval(run, agent, body, messages)),
    ]);
  }

  private async requestApproval(
    run: RunRecord,
    agent: AgentRuntime | undefined,
    body: AskedCall,
    messages: ChatMessage[],
  ): Promise<void> {
    const tool = agent?.registry.get(body.name);
    // Only a preview of the definition that was parked: after a deploy, the old call is shown without one.
    const preview =
      tool && tool.definitionHash === body.definitionHash
        ? await previewCall(
            tool.definition,
            body.args,
            { ...callerOf(run), callId: body.id },
            { maxChars: REQUEST_CONTEXT_LIMITS.preview },
          )
        : undefined;
    const step = agent?.describeStep?.(body.id);
    const context = { ...callContext(messages, body.id, preview), ...(step ? { step } : {}) };
    await this.approvals.requestApproval(toApprovalRequest(run, body, context));
  }
}

/** The index entries of waiting calls (see UnpublishedRequests.markUnpublished). */
function unpublished(run: RunRecord, waiting: FrontierCall[]) {
  return waiting
    .filter((call) => hasRequest(call.body))
    .map((call) => ({ runId: run.runId, callId: call.body.id, requestId: call.body.requestId! }));
}
