// Every vote, whatever the channel (the REST API and the CLI, the inbox, Slack, the email link), and every manual step
// marked done: checked against the one rule of who may decide (deciders.ts, through vote-check.ts), written by the vote
// store only if the revision and route it was checked on are still current, audited (refusals too), and settled
// when it decides the request. An edit that routes the request anew asks its new groups.
// A vote on the REST API (voteOn) is checked first on this process's recent copy of the request, when it has one
// (RecentRequests: the store's script refuses it if the copy's revision or route moved on), which spares the read before
// the vote; a refusal met on a copy is never answered from it: the vote is checked again on the request as read now.
import { Inject, Injectable } from '@nestjs/common';
import type { AuditInput } from '@countersign/audit';
import type { ApprovalRequest } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { AuditTrail } from '../core/audit-trail';
import { FollowUps } from '../core/follow-ups';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';
import { Settlement } from '../decisions/settlement';
import { NotificationScheduler } from '../notifications/notification-scheduler';
import { AmbiguousCallIdError, ApprovalReadModel } from '../requests/approval-read-model';
import { idsOf, type RevisionRoute, type StoredApproval } from '../requests/approval-types';
import { LiveUpdates } from '../requests/live-updates';
import { RecentRequests } from '../requests/recent-requests';
import { RequestStore } from '../requests/request-store';
import { RunAccess } from '../requests/run-access';
import { mayDecide, maySee, revisionOf, type Caller } from './deciders';
import { InvalidEditError } from './edited-args';
import { VoteCheck, type VoteRequest } from './vote-check';
import { decideRefusal, ErrorCode, VoteRefusedError } from './vote-errors';
import { VoteStore, type CheckedVote, type VoteResult } from './vote-store';

export type { VoteRequest } from './vote-check';

/** A vote's result; `rerouted`: the route its edit gave the request (when its groups or quorum changed). */
export type VoteOutcome = VoteResult & { rerouted?: RevisionRoute };

/** What a caller asked to mark done: a notice's manual step, by an approver with their groups. */
export interface DoneRequest {
  approver: string;
  approverGroups: string[];
  note?: string;
  channel: string;
}

export interface Rejection {
  reason: string;
  channel: string;
  actor?: string;
  callId?: string;
  runId?: string;
  detail?: Record<string, unknown>;
}

@Injectable()
export class VotesService {
  constructor(
    private readonly requests: RequestStore,
    private readonly readModel: ApprovalReadModel,
    private readonly recent: RecentRequests,
    private readonly check: VoteCheck,
    private readonly store: VoteStore,
    private readonly settlement: Settlement,
    private readonly scheduler: NotificationScheduler,
    private readonly runAccess: RunAccess,
    private readonly audit: AuditTrail,
    private readonly live: LiveUpdates,
    private readonly metrics: Metrics,
    private readonly followUps: FollowUps,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * A vote on the request a path names (see ApprovalReadModel.resolve), by a caller of the REST API (and the inbox and CLI, which use it).
   * A request the caller may not see (maySee) is refused exactly like an unknown one (404), and the probe is audited.
   * Throws AmbiguousCallIdError when the call ID names requests of several runs, and VoteRefusedError like vote().
   */
  async voteOn(
    id: string,
    input: Omit<VoteRequest, 'requestId'>,
  ): Promise<{ requestId: string; result: VoteOutcome }> {
    const caller = { id: input.approver, groups: input.approverGroups };
    const copy = this.recent.get(id);
    if (copy && maySee(caller, copy)) {
      const result = await this.voteOnCopy({ ...input, requestId: id }, copy);
      if (result) return { requestId: id, result };
    }
    const approval = await this.visibleRequest(id, caller, input);
    const { requestId } = approval.request;
    return { requestId, result: await this.vote({ ...input, requestId }, approval) };
  }

  /**
   * The vote checked on a recent copy of the request (RecentRequests), not read first; undefined when the check or the
   * store refuses it, unanswered and unaudited: the caller then votes on the request as read now, which answers and
   * audits the refusal exactly as without a copy. The copy is sound to check on: what the check reads of it (who asked,
   * the tool, the arguments) never changes, or changes only with the revision or the route, which the store's script
   * finds unchanged before it writes the vote (else it refuses it), or is the approver's own vote, which it checks too.
   */
  private async voteOnCopy(request: VoteRequest, copy: StoredApproval): Promise<VoteOutcome | undefined> {
    let recorded: Recorded;
    try {
      recorded = await this.record(request, copy);
    } catch (error) {
      if (error instanceof VoteRefusedError || error instanceof InvalidEditError) return undefined;
      throw error;
    }
    return this.recorded(request, copy, recorded);
  }

  /** The `/done` of the request a path names, refused like voteOn when the caller may not see it. */
  async completeNoticeOn(id: string, done: DoneRequest): Promise<{ request: ApprovalRequest }> {
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
    const resolution = await this.readModel.resolve(id, (a) => maySee(caller, a));
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
   * Records one approver's vote on the request as the caller read it (`known`; read here when not given), and
   * publishes the decision when it settles the request. Throws VoteRefusedError (audited) when the approver may not
   * decide it, it is settled, or it moved on since it was read; InvalidEditError (audited) for refused edited arguments.
   */
  async vote(request: VoteRequest, known?: StoredApproval): Promise<VoteOutcome> {
    const approval = known ?? (await this.requests.get(request.requestId));
    if (!approval) throw this.unknown(request.requestId);
    let recorded: Recorded;
    try {
      recorded = await this.record(request, approval);
    } catch (error) {
      await this.refused(error, request, approval);
      throw error;
    }
    return this.recorded(request, approval, recorded);
  }

  /** Checks the vote against the request as `approval` has it and writes it if that is still current. */
  private async record(request: VoteRequest, approval: StoredApproval): Promise<Recorded> {
    // Whatever the vote does, a copy of the request kept before it is stale after it.
    this.recent.forget(request.requestId);
    const checked = await this.check.check(request, approval);
    return { checked, result: await this.store.recordVote(checked) };
  }

  /** What follows a written vote: the reroute, the audit entry, the settlement or the progress shown. */
  private async recorded(
    request: VoteRequest,
    approval: StoredApproval,
    { checked, result }: Recorded,
  ): Promise<VoteOutcome> {
    const rerouted = checked.edit?.rerouted ? checked.edit.route : undefined;
    if (rerouted) await this.reroute(approval, checked, result);
    if (result.status === 'decided') {
      // The vote that decided is audited (decision.recorded) and counted into trust by the settlement, beside its
      // decision.published, once the decision is on the queue: neither holds the decision up (issue 27).
      await this.settlement.settle(result.request, result.outcome, result.channels, {
        recorded: voteEntry(approval, checked, result),
        // The groups the vote was checked on are the request's (the vote script checked its route version), unless
        // its edit routed it anew: then each replica reads them.
        ...(rerouted ? {} : { groups: approval.groups }),
      });
    } else {
      if (result.status !== 'rerouted') this.audit.record(voteEntry(approval, checked, result));
      if (!rerouted) {
        this.followUps.add(
          idsOf(approval),
          this.live.announce({ requestId: request.requestId, status: 'pending' }),
        );
        // The other approvers see the progress, and are asked again about edited arguments.
        if (result.status === 'vote_recorded')
          this.followUps.add(idsOf(approval), this.showProgress(checked, result));
      }
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
      this.followUps.add(
        ids,
        this.live.announce({ requestId: request.requestId, status: 'decided', groups: approval.groups }),
      );
      return;
    }
    const notified = (async () => {
      await this.runAccess.allowToRead(request, edit.route.groups, approval.expiresAt);
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

  private async showProgress(
    vote: CheckedVote,
    result: Extract<VoteResult, { status: 'vote_recorded' }>,
  ): Promise<void> {
    const stored = await this.requests.get(vote.requestId);
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
    done: DoneRequest & { requestId: string },
    known?: StoredApproval,
  ): Promise<{ request: ApprovalRequest }> {
    const notice = known ?? (await this.requests.get(done.requestId));
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
    await this.settlement.publishDone(request, { by: done.approver, at: doneAt, note: done.note });
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
}

/** A vote as checked, and what the store made of it. */
interface Recorded {
  checked: CheckedVote;
  result: VoteResult;
}

/** A route as the audit keeps it. */
function routeShown(route: RevisionRoute) {
  return { rule: route.rule, why: route.why, groups: route.groups, quorum: route.quorum };
}

/** The audit entry of a counted vote (decision.recorded), with the edit it carried. */
function voteEntry(
  approval: StoredApproval,
  checked: CheckedVote,
  result: Exclude<VoteResult, { status: 'rerouted' }>,
): AuditInput {
  const { edit } = checked;
  return {
    type: 'decision.recorded',
    callId: result.callId,
    runId: result.status === 'decided' ? result.request.runId : undefined,
    actor: checked.approver,
    detail: {
      decision: checked.decision,
      channel: checked.channel,
      reason: checked.reason ?? null,
      ...(checked.response ? { response: checked.response } : {}),
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
  };
}
