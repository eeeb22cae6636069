// The approval lifecycle: take a request in, route it, record votes, expire or escalate it, publish the decision.
// Every refusal is audited; every settled request gets exactly one signed decision (idempotent job ID).
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { ApprovalRequest, ApprovalStatus, AuditEntry, StandingRule } from '@countersign/contracts';
import { fingerprint, printableReadableForm } from '@countersign/authorization';
import { DecidedCallResults, RunReaders, ToolCatalog, type Logger } from '@countersign/platform';
import { ApproverDirectory } from '../auth/approver-directory';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';
import { LiveUpdates } from '../live/live-updates';
import { NotificationScheduler } from '../notifications/notification-scheduler';
import { argumentsMatch, routeRequest, type Route } from '../routing/route-request';
import { AmbiguousCallIdError, ErrorCode, VoteRefusedError } from './approval-errors';
import { EditedArgsCheck, InvalidEditError } from './edited-args';
import { ruleReason, StandingRuleStore, type StoredRule } from './standing-rule-store';
import {
  ApprovalStore,
  type ApprovalPage,
  type ListOptions,
  type Outcome,
  type StoredApproval,
  type VoteInput,
  type VoteResult,
} from './approval-store';
import { DecisionPublisher } from './decision-publisher';

export const NO_ROUTE_REASON = 'no approver route';
export const EXPIRED_REASON = 'expired';

/** A request that can never be shown faithfully (its fingerprint does not match its tool and arguments). */
export class RequestRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

/**
 * What a timer run left behind: `done`, the timer can go; `kept`, it stays (moved back to the expiry, or turned
 * into the publish check that markPublished removes).
 */
export type TimerOutcome = 'done' | 'kept';

/** A vote as a channel hands it in: with the arguments as the approver edited them, if they did. */
export type VoteRequest = Omit<VoteInput, 'edit'> & { editedArgs?: Record<string, unknown> };

/** A settled request for the history view, with what became of its call (when the worker reported it). */
export interface HistoryEntry {
  approval: StoredApproval;
  result?: { outcome: string; content: string; editedArgs?: Record<string, unknown>; at: string };
}

export interface Rejection {
  reason: string;
  channel: string;
  actor?: string;
  callId?: string;
  runId?: string;
  detail?: Record<string, unknown>;
}

/**
 * What an ID in a path (`/approvals/:id`) names: the request with that request ID; else, read as a call ID, the one
 * request it names (see resolve); `ambiguous` when it names requests of several runs (`requestIds`: those the caller
 * may see, to choose from).
 */
export type Resolution =
  | { status: 'found'; approval: StoredApproval }
  | { status: 'not_found' }
  | { status: 'ambiguous'; requestIds: string[] };

@Injectable()
export class ApprovalsService implements BeforeApplicationShutdown {
  /** Follow-up work of answered requests (live updates, outcome notices, marking published), drained on close. */
  private readonly followUps = new Set<Promise<void>>();

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly store: ApprovalStore,
    private readonly publisher: DecisionPublisher,
    private readonly scheduler: NotificationScheduler,
    private readonly audit: AuditTrail,
    private readonly live: LiveUpdates,
    private readonly metrics: Metrics,
    private readonly readers: RunReaders,
    private readonly directory: ApproverDirectory,
    private readonly rules: StandingRuleStore,
    private readonly tools: ToolCatalog,
    private readonly results: DecidedCallResults,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  private readonly editCheck = new EditedArgsCheck();

  /** Takes a request off the queue. Safe to call again with the same message (redelivery). */
  async receive(request: ApprovalRequest): Promise<void> {
    const { requestId, callId, runId, attempt } = request;
    const shown = fingerprint(request.toolName, request.args);
    if (shown !== request.fingerprint) {
      await this.audit.append({
        type: 'decision.rejected',
        runId,
        callId,
        detail: {
          reason: 'fingerprint_mismatch',
          requestId,
          readableForm: printableReadableForm(request.toolName, request.args),
        },
      });
      throw new RequestRejectedError(`fingerprint does not match toolName and args (expected ${shown})`);
    }
    const now = Date.now();
    const route = routeRequest(request, this.config.approvals, {
      expiresInMs: this.config.env.APPROVAL_DEFAULT_EXPIRY,
    });
    const isNotice = request.reason === 'manual_step';

    if (!route && !isNotice) return this.refuseUnroutable(request, now);
    if (route && !isNotice && (await this.decideByStandingRule(request, route, now))) return;

    const expiresInMs = route?.expiresInMs ?? this.config.env.APPROVAL_DEFAULT_EXPIRY;
    const escalation = route?.escalation;
    // Before the request is stored: an approver who can see it can also read the run it comes from.
    await this.allowToRead(request, route?.groups ?? [], now + expiresInMs);
    // The expiry and escalation timers are stored by the same script that stores the request, so a stored
    // request always has them: a redelivery finds nothing missing to schedule, and leaves them where they are.
    const created = await this.store.create({
      request,
      status: isNotice ? 'notice' : 'pending',
      groups: route?.groups ?? [],
      quorum: route?.quorum ?? 1,
      channels: route?.channels ?? [],
      route: route && { rule: route.rule, why: route.why },
      now,
      expiresAt: now + expiresInMs,
      escalation:
        !isNotice && escalation && escalation.afterMs < expiresInMs
          ? { at: now + escalation.afterMs, groups: escalation.groups }
          : undefined,
    });
    if (!created.created && created.status !== 'pending' && created.status !== 'notice') return;

    const target = {
      requestId,
      callId,
      attempt,
      requester: request.requester,
      groups: route?.groups ?? [],
      channels: route?.channels ?? [],
      phase: 'request' as const,
    };
    // Notifications are awaited: the message is only done with once they are queued (a redelivery queues them
    // again, deduplicated by job ID). Open inboxes already heard of the request: the store's script announced it.
    const notified = this.scheduler.notifyApprovers(target);
    if (created.created) {
      this.metrics.requestsReceived.inc({ outcome: isNotice ? 'notice' : 'routed' });
      this.audit.record({
        type: isNotice ? 'request.notice' : 'request.created',
        runId,
        callId,
        actor: request.requester,
        detail: {
          toolName: request.toolName,
          tier: request.tier,
          agent: request.agent,
          attempt,
          requestId,
          reason: request.reason,
          rule: route?.rule ?? null,
          why: route?.why ?? null,
          groups: target.groups,
          quorum: route?.quorum ?? null,
          fingerprint: shown,
          ...(request.external && {
            source: 'external',
            client: request.external.principal,
            clientCallId: request.external.callId,
          }),
        },
      });
    }
    await notified;
    this.logger.info(
      { runId, callId, requestId, attempt, rule: route?.rule, notice: isNotice },
      'approval request received',
    );
  }

  /**
   * Records one approver's vote; publishes the decision when it settles the request.
   * Throws VoteRefusedError (audited) when the approver may not vote or the request is already settled.
   */
  async vote(request: VoteRequest, { uncountedIfUnknown = false } = {}): Promise<VoteResult> {
    const { editedArgs, ...rest } = request;
    const { requestId } = rest;
    let input: VoteInput = rest;
    let original: ApprovalRequest | undefined;
    let result: VoteResult;
    try {
      if (editedArgs) {
        original = await this.checkEdit(requestId, editedArgs);
        input = {
          ...rest,
          edit: { args: editedArgs, fingerprint: fingerprint(original.toolName, editedArgs) },
        };
      }
      result = await this.store.recordVote(input);
    } catch (error) {
      if (error instanceof InvalidEditError) {
        await this.reject({
          reason: 'invalid_edit',
          channel: input.channel,
          actor: input.approver,
          callId: original?.callId,
          runId: original?.runId,
          detail: { message: error.message, requestId },
        });
        throw error;
      }
      // An unknown request is a probe or a race with intake, not a refused decision: counted, not audited.
      if (error instanceof VoteRefusedError && error.code === ErrorCode.NotFound) {
        if (!uncountedIfUnknown) this.metrics.votesRejected.inc({ reason: error.reason });
      } else if (error instanceof VoteRefusedError) {
        const refused = (await this.store.get(requestId))?.request;
        await this.reject({
          reason: error.reason,
          channel: input.channel,
          actor: input.approver,
          callId: refused?.callId,
          runId: refused?.runId,
          detail: { decision: input.decision, message: error.message, requestId },
        });
      }
      throw error;
    }
    this.audit.record({
      type: 'decision.recorded',
      callId: result.callId,
      runId: result.status === 'decided' ? result.request.runId : undefined,
      actor: input.approver,
      detail: {
        decision: input.decision,
        channel: input.channel,
        reason: input.reason ?? null,
        settled: result.status === 'decided',
        requestId,
        // An edit keeps both: what the agent asked for and what the approver changed it to.
        ...(input.edit && original
          ? { editedArgs: input.edit.args, requestedArgs: original.args, fingerprint: input.edit.fingerprint }
          : {}),
      },
    });
    if (result.status === 'vote_recorded') {
      this.followUp(
        { callId: result.callId, requestId },
        this.live.announce({ requestId, status: 'pending' }),
      );
      // The other approvers see the progress, and are asked again about edited arguments.
      this.followUp({ callId: result.callId, requestId }, this.showProgress(input, result));
      return result;
    }
    // Trust counts what people decided; it never holds up (or fails) the decision itself.
    this.followUp(
      { callId: result.callId, requestId },
      this.store.countTrust(result.request, result.outcome),
    );
    await this.settle(result.request, result.outcome, result.channels);
    return result;
  }

  /**
   * Expiry timer: deny "expired" if still pending; re-publish a decision that was recorded but never published.
   * `kept`: the timer stays, as the publish check of the decision just published, or moved to the expiry.
   */
  async expire(requestId: string, attempt: number): Promise<TimerOutcome> {
    const result = await this.store.expire(requestId, attempt);
    if (result === 'notice_retired') {
      await this.live.announce({ requestId, status: 'expired' });
      return 'done';
    }
    if ('expired' in result) {
      const outcome: Outcome = {
        decision: 'deny',
        decidedBy: 'expired',
        approvers: [],
        reason: EXPIRED_REASON,
        decidedAt: new Date().toISOString(),
      };
      const stored = await this.store.get(requestId);
      const settledOutcome = stored?.outcome ?? outcome;
      await this.audit.append({
        type: 'decision.recorded',
        callId: result.expired.callId,
        runId: result.expired.runId,
        actor: 'expiry',
        detail: { decision: 'deny', decidedBy: 'expired', requestId },
      });
      await this.settle(result.expired, settledOutcome, stored?.channels ?? []);
      return 'kept';
    }
    if ('notDueFor' in result) return 'kept';
    const stored = await this.store.get(requestId);
    if (stored?.done && !stored.published && stored.request.attempt === attempt) {
      this.logger.warn(
        { requestId, callId: stored.request.callId, runId: stored.request.runId },
        're-publishing a manual step marked done',
      );
      await this.publishDone(stored.request, stored.done);
      return 'kept';
    }
    if (stored?.outcome && !stored.published && stored.request.attempt === attempt) {
      this.logger.warn(
        { requestId, callId: stored.request.callId, runId: stored.request.runId },
        're-publishing a decision that was recorded but not published',
      );
      await this.settle(stored.request, stored.outcome, stored.channels);
      return 'kept';
    }
    return 'done';
  }

  /** Escalation timer: if still pending, the escalation groups stored with it may decide too and are notified. */
  async escalate(requestId: string, attempt: number): Promise<TimerOutcome> {
    const escalation = await this.store.escalate(requestId, attempt);
    if (escalation.status === 'no') return 'done';
    const { groups } = escalation;
    const stored = await this.store.get(requestId);
    if (!stored) return 'done';
    const { callId, runId, requester } = stored.request;
    await this.allowToRead(stored.request, groups, stored.expiresAt);
    // A retried timer notifies again (deduplicated by job ID) but audits the escalation only once.
    await Promise.all([
      this.scheduler.notifyApprovers({
        requestId,
        callId,
        attempt,
        requester,
        groups,
        channels: stored.channels,
        phase: 'escalation',
      }),
      escalation.status === 'escalated' &&
        this.audit.append({
          type: 'request.escalated',
          callId,
          runId,
          detail: { groups, requestId },
        }),
      this.live.announce({ requestId, status: 'pending' }),
    ]);
    return 'done';
  }

  /**
   * The members of `groups` may read the run (GET /runs/:id on the agent worker) for as long as the request stays
   * readable here: until it expires, and the retention after. Not for an external call: its run is not the worker's,
   * and a worker run of the same ID (the client chose it) must not become readable by it.
   */
  private async allowToRead(
    request: ApprovalRequest,
    groups: readonly string[],
    expiresAt: number,
  ): Promise<void> {
    if (request.external) return;
    const members = this.directory.membersOf(groups).map((a) => a.id);
    const ttlMs = Math.max(0, expiresAt - Date.now()) + this.config.env.APPROVAL_RETENTION;
    return this.readers.add(request.runId, members, ttlMs);
  }

  private async showProgress(
    input: VoteInput,
    result: Extract<VoteResult, { status: 'vote_recorded' }>,
  ): Promise<void> {
    const stored = await this.store.get(input.requestId);
    if (!stored || stored.status !== 'pending') return;
    await this.scheduler.showProgress({
      requestId: input.requestId,
      callId: stored.request.callId,
      attempt: stored.request.attempt,
      requester: stored.request.requester,
      groups: stored.groups,
      channels: stored.channels,
      rev: result.rev,
      editedBy: result.editedNow ? input.approver : undefined,
    });
  }

  /**
   * An edit must fit the tool's argument schema (from the tool catalog) before the other approvers see it; the worker
   * checks it again before anything runs. Returns the request as the agent asked it.
   */
  private async checkEdit(requestId: string, args: Record<string, unknown>): Promise<ApprovalRequest> {
    const stored = await this.store.get(requestId);
    if (!stored) throw new VoteRefusedError(ErrorCode.NotFound, `no approval request ${requestId}`);
    const hash = stored.request.toolDefinitionHash;
    const tool = (await this.tools.get([hash])).get(hash);
    this.editCheck.assertValid(hash, tool, args);
    return stored.request;
  }

  /**
   * A person did the manual step of a notice: the notice is settled, and the run's worker is told (signed), so the
   * model hears of it at its next turn. Throws VoteRefusedError when the approver may not, or it is not open.
   */
  async completeNotice(done: {
    requestId: string;
    approver: string;
    approverGroups: string[];
    note?: string;
    channel: string;
  }): Promise<{ request: ApprovalRequest }> {
    let completed: { request: ApprovalRequest; doneAt: string };
    try {
      completed = await this.store.completeNotice(done);
    } catch (error) {
      if (error instanceof VoteRefusedError && error.code !== ErrorCode.NotFound) {
        const refused = (await this.store.get(done.requestId))?.request;
        await this.reject({
          reason: error.reason,
          channel: done.channel,
          actor: done.approver,
          callId: refused?.callId,
          runId: refused?.runId,
          detail: { action: 'done', message: error.message, requestId: done.requestId },
        });
      }
      throw error;
    }
    const { request, doneAt } = completed;
    await this.publishDone(request, { by: done.approver, at: doneAt, note: done.note });
    this.audit.record({
      type: 'manual_step.done',
      callId: request.callId,
      runId: request.runId,
      actor: done.approver,
      detail: {
        toolName: request.toolName,
        args: request.args,
        note: done.note ?? null,
        channel: done.channel,
        requestId: request.requestId,
      },
    });
    return { request };
  }

  private async publishDone(
    request: ApprovalRequest,
    done: { by: string; at: string; note?: string },
  ): Promise<void> {
    await this.publisher.publishManualStepDone(request, done);
    this.followUp(
      { callId: request.callId, runId: request.runId, requestId: request.requestId },
      (async () => {
        const stored = await this.store.get(request.requestId);
        await this.scheduler.showOutcome(request, { channels: stored?.channels ?? [], decidedBy: 'person' });
        await this.store.markPublished(request.requestId, request.attempt);
      })(),
    );
  }

  /**
   * Decides the request by the first standing rule that covers it, if any. False: no rule did (or the one that did
   * was revoked meanwhile), and people decide.
   */
  private async decideByStandingRule(request: ApprovalRequest, route: Route, now: number): Promise<boolean> {
    // Rules are written for the tools of Countersign's own agents: an external agent's call is always asked about.
    if (request.external) return false;
    if (request.reason !== 'confirmation_required' || request.tier !== 'confirm') return false;
    const match = (await this.rules.all(now)).find((r) => ruleCovers(r.rule, request, now));
    if (!match) return false;
    await this.allowToRead(request, route.groups, now);
    const decided = await this.rules.decide(request, match, route, now);
    if (decided.status === 'rule_gone') return false;
    if (decided.status === 'already_stored') {
      if (decided.current === 'pending' || decided.current === 'notice') return false;
      const stored = await this.store.get(request.requestId);
      if (stored?.outcome && !stored.published) await this.settle(stored.request, stored.outcome, []);
      return true;
    }
    return this.announceRuleDecision(request, match, route, now);
  }

  private async announceRuleDecision(
    request: ApprovalRequest,
    match: StoredRule,
    route: Route,
    now: number,
  ): Promise<true> {
    const { requestId, callId, runId } = request;
    const rule = match.rule;
    const outcome: Outcome = {
      decision: 'approve',
      decidedBy: 'policy',
      approvers: [],
      reason: ruleReason(rule),
      decidedAt: new Date(now).toISOString(),
      rule: rule.id,
    };
    this.metrics.requestsReceived.inc({ outcome: 'standing_rule' });
    this.audit.record({
      type: 'request.created',
      runId,
      callId,
      actor: request.requester,
      detail: {
        toolName: request.toolName,
        tier: request.tier,
        agent: request.agent,
        attempt: request.attempt,
        requestId,
        rule: route.rule,
        why: route.why,
        groups: route.groups,
        standingRule: rule.id,
        fingerprint: request.fingerprint,
      },
    });
    this.audit.record({
      type: 'decision.recorded',
      runId,
      callId,
      actor: `rule:${rule.id}`,
      detail: {
        decision: 'approve',
        decidedBy: 'policy',
        standingRule: rule.id,
        ruleBy: rule.createdBy,
        requestId,
      },
    });
    await this.settle(request, outcome, []);
    this.logger.info({ runId, callId, requestId, standingRule: rule.id }, 'approved by a standing rule');
    return true;
  }

  /** Fills in what each request's tool does, from the tool catalog (one read for all of them). */
  async describe<T extends StoredApproval | undefined>(approvals: T[]): Promise<T[]> {
    const hashes = approvals.flatMap((a) => (a ? [a.request.toolDefinitionHash] : []));
    if (hashes.length === 0) return approvals;
    const tools = await this.tools.get(hashes);
    for (const a of approvals) if (a) a.tool = tools.get(a.request.toolDefinitionHash);
    return approvals;
  }

  /**
   * Recently settled requests routed to `groups` or voted on by `approverId`, newest first, with what became of each
   * call (the worker reports it when it settles the call).
   */
  async history(approverId: string, groups: readonly string[], limit = 50): Promise<HistoryEntry[]> {
    const recent = (await this.store.recent(limit * 4)).filter(
      (a) =>
        a.groups.some((g) => groups.includes(g)) ||
        a.votes.some((v) => v.approver === approverId) ||
        a.done?.by === approverId,
    );
    const shown = await this.describe(recent.slice(0, limit));
    const results = await this.results.read(shown.map((a) => a.request.requestId));
    return shown.map((approval) => ({ approval, result: results.get(approval.request.requestId) }));
  }

  /**
   * Audits a refused vote or interaction of someone a credential names (an approver, a Slack user Slack signed for).
   * A request no credential vouches for is not audited: see UnauthenticatedRequests.
   */
  async reject(rejection: Rejection): Promise<void> {
    this.metrics.votesRejected.inc({ reason: rejection.reason });
    this.logger.warn(
      {
        callId: rejection.callId,
        runId: rejection.runId,
        actor: rejection.actor,
        reason: rejection.reason,
        channel: rejection.channel,
      },
      'vote refused',
    );
    await this.audit.append({
      type: 'decision.rejected',
      callId: rejection.callId,
      runId: rejection.runId,
      actor: rejection.actor,
      detail: { reason: rejection.reason, channel: rejection.channel, ...rejection.detail },
    });
  }

  get(requestId: string): Promise<StoredApproval | undefined> {
    return this.store.get(requestId);
  }

  /**
   * A vote on the request a path names (see resolve): as a request ID first, so the usual case costs no read before
   * the vote; only an unknown request ID is then looked up as a call ID. Throws AmbiguousCallIdError when the call ID
   * names requests of several runs, and VoteRefusedError like vote().
   */
  async voteOn(
    id: string,
    input: Omit<VoteRequest, 'requestId'>,
    visible: (approval: StoredApproval) => boolean,
  ): Promise<{ requestId: string; result: VoteResult }> {
    try {
      return {
        requestId: id,
        result: await this.vote({ ...input, requestId: id }, { uncountedIfUnknown: true }),
      };
    } catch (error) {
      if (!(error instanceof VoteRefusedError && error.code === ErrorCode.NotFound)) throw error;
    }
    const resolution = await this.resolve(id, visible);
    if (resolution.status === 'ambiguous') throw new AmbiguousCallIdError(id, resolution.requestIds);
    // Unknown either way: refused (and counted) as any unknown request.
    const requestId = resolution.status === 'found' ? resolution.approval.request.requestId : id;
    return { requestId, result: await this.vote({ ...input, requestId }) };
  }

  /**
   * The request `id` names. A request ID names its request. Otherwise `id` is read as a call ID, which names a request
   * only when that is unambiguous: the requests carrying it all come from one run (its re-asks, or a later turn that
   * reused the ID: the newest is the one its run waits for), or exactly one of them is still open. Requests the caller
   * may not see (`visible`) are left out first; when none is visible, the one request the call ID names is still
   * returned, so a vote on it is refused (and audited) like any other vote of a non-member, and a call ID that names
   * none of them is unknown to such a caller (no ambiguity is revealed).
   */
  async resolve(id: string, visible: (approval: StoredApproval) => boolean): Promise<Resolution> {
    const byRequestId = await this.store.get(id);
    if (byRequestId) return { status: 'found', approval: byRequestId };
    const carrying = await this.store.requestsOfCall(id);
    const seen = carrying.filter(visible);
    const named = namedBy(seen.length > 0 ? seen : carrying);
    if (named) return { status: 'found', approval: named };
    if (seen.length === 0) return { status: 'not_found' };
    return { status: 'ambiguous', requestIds: seen.map((a) => a.request.requestId) };
  }

  /** Settled calls past their retention leave the decided and expired lists (the timer sweep calls this). */
  trimSettled(now: number): Promise<number> {
    return this.store.trimSettled(now);
  }

  /** One page of the approval lists (see ApprovalStore.list). */
  list(options: ListOptions): Promise<ApprovalPage> {
    return this.store.list(options);
  }

  /** The newest entries of one list (see ApprovalStore.newest). */
  newest(status: ApprovalStatus, count: number): Promise<StoredApproval[]> {
    return this.store.newest(status, count);
  }

  count(status: ApprovalStatus): Promise<number> {
    return this.store.count(status);
  }

  auditTrail(filter: { runId?: string; callId?: string; limit?: number }): Promise<AuditEntry[]> {
    return this.audit.log.read(filter);
  }

  /**
   * Lets follow-up work finish before the queues and connections close. After onModuleDestroy, so the queue
   * workers and the timer sweep have stopped and add no more of it.
   */
  async beforeApplicationShutdown(): Promise<void> {
    while (this.followUps.size > 0) await Promise.all([...this.followUps]);
  }

  /**
   * Publishes the decision; returns once it is on the queue (the caller may then say "decided"). Telling
   * the channels and cleaning up follow without holding the caller up.
   */
  private async settle(request: ApprovalRequest, outcome: Outcome, channels: string[]): Promise<void> {
    const { requestId, callId, runId, attempt } = request;
    const signed = await this.publisher.publish(request, outcome);
    this.metrics.decisionsPublished.inc({ decision: outcome.decision, decided_by: outcome.decidedBy });
    this.metrics.timeToDecision.observe(
      (Date.parse(outcome.decidedAt) - Date.parse(request.requestedAt)) / 1000,
    );
    this.audit.record({
      type: 'decision.published',
      callId,
      runId,
      actor: outcome.approvers.join(',') || outcome.decidedBy,
      detail: {
        decision: outcome.decision,
        decidedBy: outcome.decidedBy,
        approvers: outcome.approvers,
        reason: outcome.reason ?? null,
        fingerprint: signed.fingerprint,
        attempt,
        requestId,
      },
    });
    this.followUp(
      { callId, runId, requestId },
      this.live.announce({ requestId, status: outcome.decidedBy === 'expired' ? 'expired' : 'decided' }),
    );
    this.followUp({ callId, runId, requestId }, this.afterPublish(request, outcome, channels));
    this.logger.info(
      {
        callId,
        runId,
        requestId,
        attempt,
        decision: outcome.decision,
        decidedBy: outcome.decidedBy,
        approvers: outcome.approvers,
      },
      'decision published',
    );
  }

  /**
   * In this order, so that the expiry timer stays as the safety net until everything is done: settling turned it
   * into the publish check, which re-publishes (and re-queues the outcome notice of) a decision that is not
   * marked published; marking it published removes the timer in the same step.
   */
  private async afterPublish(request: ApprovalRequest, outcome: Outcome, channels: string[]): Promise<void> {
    if (outcome.decidedBy !== 'no_route')
      await this.scheduler.showOutcome(request, { channels, decidedBy: outcome.decidedBy });
    await this.store.markPublished(request.requestId, request.attempt);
  }

  /** Runs `work` without the caller waiting for it; a failure is logged, and close() waits for it. */
  private followUp(ids: { callId: string; runId?: string; requestId: string }, work: Promise<unknown>): void {
    const tracked: Promise<void> = work
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error({ ...ids, err: error }, 'follow-up after a change failed'))
      .finally(() => this.followUps.delete(tracked));
    this.followUps.add(tracked);
  }

  private async refuseUnroutable(request: ApprovalRequest, now: number): Promise<void> {
    const outcome: Outcome = {
      decision: 'deny',
      decidedBy: 'no_route',
      approvers: [],
      reason: NO_ROUTE_REASON,
      decidedAt: new Date(now).toISOString(),
    };
    const created = await this.store.create({
      request,
      status: 'decided',
      groups: [],
      quorum: 1,
      channels: [],
      now,
      expiresAt: now,
      refusal: { decidedBy: 'no_route', reason: NO_ROUTE_REASON, at: outcome.decidedAt },
    });
    if (created.created) {
      this.metrics.requestsReceived.inc({ outcome: 'no_route' });
      await this.audit.append({
        type: 'request.created',
        callId: request.callId,
        runId: request.runId,
        actor: request.requester,
        detail: { toolName: request.toolName, route: null, requestId: request.requestId },
      });
      return this.settle(request, outcome, []);
    }
    // Redelivered: publish again only if the first delivery died before publishing.
    const stored = await this.store.get(request.requestId);
    if (stored?.outcome && !stored.published)
      await this.settle(stored.request, stored.outcome, stored.channels);
  }
}

/** The one request a call ID names among `requests` (see ApprovalsService.resolve), or undefined. */
function namedBy(requests: StoredApproval[]): StoredApproval | undefined {
  if (requests.length === 0) return undefined;
  if (new Set(requests.map((a) => a.request.runId)).size === 1)
    return requests.reduce((newest, a) => (a.createdAt > newest.createdAt ? a : newest));
  const open = requests.filter((a) => a.status === 'pending' || a.status === 'notice');
  return open.length === 1 ? open[0] : undefined;
}

/** Whether a standing rule approves this request: same tool and requester, matching arguments, not expired. */
export function ruleCovers(rule: StandingRule, request: ApprovalRequest, now: number): boolean {
  return (
    rule.tool === request.toolName &&
    rule.requester === request.requester &&
    Date.parse(rule.expiresAt) > now &&
    argumentsMatch(rule.args ?? {}, request.args)
  );
}
