// The approval lifecycle: take a request in, route it, record votes, expire or escalate it, publish the decision.
// Every refusal is audited; every settled request gets exactly one signed decision (idempotent job ID).
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { ApprovalRequest, ApprovalStatus, AuditEntry, StandingRule } from '@countersign/contracts';
import { fingerprint, printableReadableForm } from '@countersign/authorization';
import { type Logger } from '@countersign/platform';
import { DecidedCallResults, RunReaders, ToolCatalog } from '@countersign/shared-records';
import { ApproverDirectory } from '../auth/approver-directory';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';
import { LiveUpdates } from '../live/live-updates';
import { NotificationScheduler } from '../notifications/notification-scheduler';
import { argumentsMatch, routeRequest, type Route } from '../routing/route-request';
import { AmbiguousCallIdError, decideRefusal, ErrorCode, VoteRefusedError } from './approval-errors';
import { InvalidEditError } from './edited-args';
import { ruleReason, StandingRuleStore, type StoredRule } from './standing-rule-store';
import {
  ApprovalStore,
  type ApprovalPage,
  type CheckedVote,
  type ListOptions,
  type Outcome,
  type RevisionRoute,
  type StoredApproval,
  type VoteResult,
} from './approval-store';
import { DecisionPublisher } from './decision-publisher';
import { mayDecide, maySee, revisionOf, type Decider } from './deciders';
import { VoteCheck, type VoteRequest } from './vote-check';

export type { VoteRequest } from './vote-check';

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

/** A vote's result; `rerouted`: the route its edit gave the request (when its groups or quorum changed). */
export type VoteOutcome = VoteResult & { rerouted?: RevisionRoute };

/** A principal as the rules see them: their ID and the groups the principal directory gives them. */
export interface Caller {
  id: string;
  groups: readonly string[];
}

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
  ) {
    this.votes = new VoteCheck((request) => this.route(request), tools);
  }

  private readonly votes: VoteCheck;

  /** The route of a request (or of a revision: the request with its edited arguments), from the routing config. */
  private route(request: ApprovalRequest): Route | undefined {
    return routeRequest(request, this.config.approvals, {
      expiresInMs: this.config.env.APPROVAL_DEFAULT_EXPIRY,
    });
  }

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
    const route = this.route(request);
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
   * Records one approver's vote on the request as the caller read it (`known`; read here when not given), and
   * publishes the decision when it settles the request. Throws VoteRefusedError (audited) when the approver may not
   * decide it, it is settled, or it moved on since it was read; InvalidEditError (audited) for refused edited arguments.
   */
  async vote(request: VoteRequest, known?: StoredApproval): Promise<VoteOutcome> {
    const approval = known ?? (await this.store.get(request.requestId));
    if (!approval) throw this.unknown(request.requestId);
    let checked: CheckedVote;
    let result: VoteResult;
    try {
      checked = await this.votes.check(request, approval);
      result = await this.store.recordVote(checked);
    } catch (error) {
      await this.refused(error, request, approval);
      throw error;
    }
    const rerouted = checked.edit?.rerouted ? checked.edit.route : undefined;
    if (rerouted) await this.reroute(approval, checked, result);
    if (result.status !== 'rerouted') this.auditVote(approval, checked, result);
    if (result.status === 'decided') {
      // Trust counts what people decided; it never holds up (or fails) the decision itself.
      this.followUp(idsOf(approval), this.store.countTrust(result.request, result.outcome));
      await this.settle(result.request, result.outcome, result.channels);
    } else if (!rerouted) {
      this.followUp(idsOf(approval), this.live.announce({ requestId: request.requestId, status: 'pending' }));
      // The other approvers see the progress, and are asked again about edited arguments.
      if (result.status === 'vote_recorded')
        this.followUp(idsOf(approval), this.showProgress(checked, result));
    }
    return { ...result, ...(rerouted ? { rerouted } : {}) };
  }

  /** An unknown request is a probe or a race with intake, not a refused decision: counted, not audited. */
  private unknown(requestId: string): VoteRefusedError {
    const error = new VoteRefusedError(ErrorCode.NotFound, `no approval request ${requestId}`);
    this.metrics.votesRejected.inc({ reason: error.reason });
    return error;
  }

  /** Audits a refused vote of a known request. */
  private async refused(error: unknown, vote: VoteRequest, approval: StoredApproval): Promise<void> {
    if (!(error instanceof VoteRefusedError || error instanceof InvalidEditError)) return;
    await this.reject({
      reason: error.reason,
      channel: vote.channel,
      actor: vote.approver,
      callId: approval.request.callId,
      runId: approval.request.runId,
      detail: {
        decision: vote.decision,
        message: error.message,
        requestId: approval.request.requestId,
        ...(vote.editedArgs ? { editedArgs: vote.editedArgs } : {}),
      },
    });
  }

  private auditVote(
    approval: StoredApproval,
    checked: CheckedVote,
    result: Exclude<VoteResult, { status: 'rerouted' }>,
  ): void {
    const { edit } = checked;
    this.audit.record({
      type: 'decision.recorded',
      callId: result.callId,
      runId: result.status === 'decided' ? result.request.runId : undefined,
      actor: checked.approver,
      detail: {
        decision: checked.decision,
        channel: checked.channel,
        reason: checked.reason ?? null,
        settled: result.status === 'decided',
        requestId: checked.requestId,
        // An edit keeps both: what the agent asked for and what the approver changed it to, and the route it got.
        ...(edit
          ? {
              editedArgs: edit.args,
              requestedArgs: approval.request.args,
              fingerprint: edit.fingerprint,
              route: routeShown(edit.route),
            }
          : {}),
      },
    });
  }

  /**
   * An edit routed the request anew (its revision's groups or quorum differ): audited with both routes; the new
   * groups may read the run and are asked, as for a new request; open inboxes of the old and the new groups refresh.
   * A failure to notify is logged, not thrown: the revision stands (the inbox and API show it), and it expires into a
   * denial if nobody decides.
   */
  private async reroute(approval: StoredApproval, checked: CheckedVote, result: VoteResult): Promise<void> {
    const edit = checked.edit!;
    const { request } = approval;
    const ids = idsOf(approval);
    const rev = result.status === 'decided' ? (approval.edited?.rev ?? 0) + 1 : result.rev;
    await this.audit.append({
      type: 'request.rerouted',
      callId: request.callId,
      runId: request.runId,
      actor: checked.approver,
      detail: {
        requestId: request.requestId,
        rev,
        fingerprint: edit.fingerprint,
        editedArgs: edit.args,
        requestedArgs: request.args,
        from: {
          ...(approval.route ?? { rule: null, why: null }),
          groups: approval.groups,
          quorum: approval.quorum,
        },
        to: routeShown(edit.route),
        editorCounts: checked.counts,
      },
    });
    this.logger.info(
      { ...ids, rev, groups: edit.route.groups, quorum: edit.route.quorum, editorCounts: checked.counts },
      'an edit routed the request anew',
    );
    if (result.status === 'decided') {
      // Settling announces it to the new groups; the inboxes of the groups it left drop it too.
      this.followUp(
        ids,
        this.live.announce({ requestId: request.requestId, status: 'decided', groups: approval.groups }),
      );
      return;
    }
    const notified = (async () => {
      await this.allowToRead(request, edit.route.groups, approval.expiresAt);
      await this.scheduler.showProgress({
        requestId: request.requestId,
        callId: request.callId,
        attempt: request.attempt,
        requester: request.requester,
        groups: edit.route.groups,
        channels: approval.channels,
        rev,
        editedBy: checked.approver,
        routedFrom: approval.groups,
      });
      await this.live.announce({ requestId: request.requestId, status: 'pending', groups: approval.groups });
    })();
    await notified.catch((error: unknown) =>
      this.logger.error({ ...ids, err: error }, 'the groups of a request routed anew were not all told'),
    );
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
    vote: CheckedVote,
    result: Extract<VoteResult, { status: 'vote_recorded' }>,
  ): Promise<void> {
    const stored = await this.store.get(vote.requestId);
    if (!stored || stored.status !== 'pending') return;
    await this.scheduler.showProgress({
      requestId: vote.requestId,
      callId: stored.request.callId,
      attempt: stored.request.attempt,
      requester: stored.request.requester,
      groups: stored.groups,
      channels: stored.channels,
      rev: result.rev,
      editedBy: result.editedNow ? vote.approver : undefined,
    });
  }

  /**
   * A person did the manual step of a notice (`known`: the notice as the caller read it): the notice is settled, and
   * the run's worker is told (signed), so the model hears of it at its next turn. Throws VoteRefusedError when the
   * approver may not (mayDecide), or it is not open.
   */
  async completeNotice(
    done: { requestId: string; approver: string; approverGroups: string[]; note?: string; channel: string },
    known?: StoredApproval,
  ): Promise<{ request: ApprovalRequest }> {
    const notice = known ?? (await this.store.get(done.requestId));
    if (!notice) throw this.unknown(done.requestId);
    let completed: { request: ApprovalRequest; doneAt: string };
    try {
      if (notice.status === 'notice') {
        const verdict = mayDecide(
          { kind: 'person', id: done.approver, groups: done.approverGroups },
          revisionOf(notice),
        );
        if (!verdict.allowed) throw decideRefusal(verdict.refusal, verdict.message);
      }
      completed = await this.store.completeNotice(done);
    } catch (error) {
      if (error instanceof VoteRefusedError && error.code !== ErrorCode.NotFound) {
        await this.reject({
          reason: error.reason,
          channel: done.channel,
          actor: done.approver,
          callId: notice.request.callId,
          runId: notice.request.runId,
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
    const rule: Decider = { kind: 'standing_rule', author: match.rule.createdBy };
    const verdict = mayDecide(
      rule,
      revisionOf({ request, groups: route.groups, quorum: route.quorum, votes: [] }),
    );
    if (!verdict.allowed) {
      // Written before the routing config (or the rules of who may decide) changed: people decide.
      this.logger.warn(
        {
          runId: request.runId,
          callId: request.callId,
          standingRule: match.rule.id,
          refusal: verdict.refusal,
        },
        `a standing rule covers the request but may not decide it: ${verdict.message}`,
      );
      return false;
    }
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
    const recent = (await this.store.recent(limit * 4)).filter((a) => maySee({ id: approverId, groups }, a));
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
   * A vote on the request a path names (see resolve), by a caller of the REST API (and the inbox and CLI, which use it).
   * A request the caller may not see (maySee) is refused exactly like an unknown one (404), and the probe is audited.
   * Throws AmbiguousCallIdError when the call ID names requests of several runs, and VoteRefusedError like vote().
   */
  async voteOn(
    id: string,
    input: Omit<VoteRequest, 'requestId'>,
  ): Promise<{ requestId: string; result: VoteOutcome }> {
    const approval = await this.visibleRequest(
      id,
      { id: input.approver, groups: input.approverGroups },
      input,
    );
    const { requestId } = approval.request;
    return { requestId, result: await this.vote({ ...input, requestId }, approval) };
  }

  /** The `/done` of the request a path names, refused like voteOn when the caller may not see it. */
  async completeNoticeOn(
    id: string,
    done: { approver: string; approverGroups: string[]; note?: string; channel: string },
  ): Promise<{ request: ApprovalRequest }> {
    const notice = await this.visibleRequest(id, { id: done.approver, groups: done.approverGroups }, done);
    return this.completeNotice({ ...done, requestId: notice.request.requestId }, notice);
  }

  /**
   * The request `id` names, if `caller` may see it; else VoteRefusedError NotFound with the message of an unknown
   * request, so the answer is the same. A hidden one is audited (the caller is authenticated; the probe is theirs).
   */
  private async visibleRequest(
    id: string,
    caller: Caller,
    attempt: { channel: string; decision?: string },
  ): Promise<StoredApproval> {
    const resolution = await this.resolve(id, (a) => maySee(caller, a));
    if (resolution.status === 'ambiguous') throw new AmbiguousCallIdError(id, resolution.requestIds);
    const approval = resolution.status === 'found' ? resolution.approval : undefined;
    if (approval && maySee(caller, approval)) return approval;
    if (!approval) throw this.unknown(id);
    await this.reject({
      reason: 'unauthorized_approver',
      channel: attempt.channel,
      actor: caller.id,
      callId: approval.request.callId,
      runId: approval.request.runId,
      detail: {
        ...(attempt.decision ? { decision: attempt.decision } : { action: 'done' }),
        hidden: true,
        message: 'not routed to the caller: answered as unknown',
        requestId: approval.request.requestId,
      },
    });
    throw new VoteRefusedError(ErrorCode.NotFound, `no approval request ${id}`);
  }

  /**
   * The request `id` names. A request ID names its request. Otherwise `id` is read as a call ID, which names a request
   * only when that is unambiguous: the requests carrying it all come from one run (its re-asks, or a later turn that
   * reused the ID: the newest is the one its run waits for), or exactly one of them is still open. Requests the caller
   * may not see (`visible`) are left out first; when none is visible, the one request the call ID names is still
   * returned, so a vote on it is refused (and audited, as a 404 like an unknown one), and a call ID that names
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

/** The IDs every log line and follow-up about a request carries. */
function idsOf(approval: StoredApproval): { callId: string; runId: string; requestId: string } {
  const { callId, runId, requestId } = approval.request;
  return { callId, runId, requestId };
}

/** A route as the audit keeps it. */
function routeShown(route: RevisionRoute) {
  return { rule: route.rule, why: route.why, groups: route.groups, quorum: route.quorum };
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
